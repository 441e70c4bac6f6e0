package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halfValue is the IEEE 754 binary16 definition, in float64.
func halfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * mant * 0x1p-24
	case 0x1f:
		if mant == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + mant/1024) * math.Ldexp(1, exp-15)
}

func TestFP16ToFP32AllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := FP16ToFP32(h)
		want := halfValue(h)
		if math.IsNaN(want) {
			// NaNs keep sign and payload and come back quiet, as vcvtph2ps
			// returns them.
			wantBits := uint32(h&0x8000)<<16 | 0x7fc00000 | uint32(h&0x3ff)<<13
			if b := math.Float32bits(got); b != wantBits {
				t.Fatalf("FP16ToFP32(%#04x) = %#08x, want %#08x", h, b, wantBits)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("FP16ToFP32(%#04x) = %g, want %g", h, got, want)
		}
	}
}

func TestFP32ToFP16RoundTrip(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		want := h
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			want = h | 0x200 // NaNs come back quiet
		}
		if got := FP32ToFP16(FP16ToFP32(h)); got != want {
			t.Fatalf("FP32ToFP16(FP16ToFP32(%#04x)) = %#04x, want %#04x", h, got, want)
		}
	}
}

// Every value halfway between two adjacent halves rounds to the one with an
// even mantissa; the float32s just either side of it round to the nearer.
func TestFP32ToFP16Ties(t *testing.T) {
	for h := uint16(0); h < 0x7bff; h++ {
		lo, hi := halfValue(h), halfValue(h+1)
		mid := float32((lo + hi) / 2) // exact: halves have 11 significant bits
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		for _, sign := range []uint16{0, 0x8000} {
			s := float32(1)
			if sign != 0 {
				s = -1
			}
			if got := FP32ToFP16(s * mid); got != even|sign {
				t.Fatalf("FP32ToFP16(%g) = %#04x, want %#04x", s*mid, got, even|sign)
			}
			below := math.Nextafter32(mid, 0)
			above := math.Nextafter32(mid, math.MaxFloat32)
			if got := FP32ToFP16(s * below); got != h|sign {
				t.Fatalf("FP32ToFP16(%g) = %#04x, want %#04x", s*below, got, h|sign)
			}
			if got := FP32ToFP16(s * above); got != (h+1)|sign {
				t.Fatalf("FP32ToFP16(%g) = %#04x, want %#04x", s*above, got, (h+1)|sign)
			}
		}
	}
}

func TestFP32ToFP16Values(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{0.1, 0x2e66},
		{1.0 / 3, 0x3555},
		{65504, 0x7bff},     // largest half
		{65519.998, 0x7bff}, // just below the tie with 65536
		{65520, 0x7c00},     // the tie rounds to even: Inf
		{1e10, 0x7c00},      // overflow
		{-1e10, 0xfc00},     // negative overflow
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-14, 0x0400},        // smallest normal half
		{0x1p-24, 0x0001},        // smallest subnormal half
		{0x1p-25, 0x0000},        // tie between 0 and 2^-24: even is 0
		{0x1.000002p-25, 0x0001}, // just above the tie
		{0x1.8p-24, 0x0002},      // tie between 1 and 2 units: even is 2
		{-0x1p-24, 0x8001},
		{0x1.ffcp-15, 0x0400},                      // 1023.5 units of 2^-24: tie, to the even 1024, the smallest normal
		{0x1.ff8p-15, 0x03ff},                      // exactly 1023 units
		{math.Float32frombits(0x00000001), 0x0000}, // float32 subnormal
		{math.Float32frombits(0x80400000), 0x8000}, // negative float32 subnormal
		{math.Float32frombits(0x7fc00000), 0x7e00}, // quiet NaN
		{math.Float32frombits(0x7f800001), 0x7e00}, // signalling NaN is made quiet
		{math.Float32frombits(0xffa02000), 0xff01}, // sign and top payload kept
		{math.Float32frombits(0x7fffffff), 0x7fff},
		{math.Float32frombits(0x477fe000), 0x7bff}, // 65504 exactly
		{math.Float32frombits(0x3f801000), 0x3c00}, // 1 + 2^-11: tie, stays even
		{math.Float32frombits(0x3f803000), 0x3c02}, // 1 + 3·2^-11: tie, rounds to even
		{math.Float32frombits(0x3f801001), 0x3c01}, // just above a tie
	}
	for _, tc := range tests {
		if got := FP32ToFP16(tc.f); got != tc.want {
			t.Errorf("FP32ToFP16(%g [%#08x]) = %#04x, want %#04x", tc.f, math.Float32bits(tc.f), got, tc.want)
		}
	}
}

// For random float32s the result must be a nearest half (ties to even).
func TestFP32ToFP16Nearest(t *testing.T) {
	r := newRand(16)
	for i := 0; i < 200000; i++ {
		f := math.Float32frombits(r.Uint32())
		if i%2 == 0 {
			f = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(50)-30)))
		}
		if f != f {
			continue
		}
		h := FP32ToFP16(f)
		got := halfValue(h)
		x := float64(f)
		if math.Abs(x) >= 65520 {
			if !math.IsInf(got, int(math.Copysign(1, x))) {
				t.Fatalf("FP32ToFP16(%g) = %#04x, want Inf", f, h)
			}
			continue
		}
		for _, nb := range []uint16{h - 1, h + 1} {
			if nb&0x7fff > 0x7c00 || (h&0x7fff == 0 && nb == h-1) {
				continue
			}
			other := halfValue(nb)
			if math.IsInf(other, 0) {
				other = math.Copysign(65536, other) // where Inf sits for rounding
			}
			dg, do := math.Abs(x-got), math.Abs(x-other)
			if do < dg || (do == dg && h&1 == 1) {
				t.Fatalf("FP32ToFP16(%g) = %#04x (%g), but %#04x (%g) is nearer or even", f, h, got, nb, other)
			}
		}
	}
}

func TestBF16(t *testing.T) {
	tests := []struct {
		bits uint32 // float32 input
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0xc0000000, 0xc000}, // -2
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up to even
		{0x3f808001, 0x3f81}, // just above a tie
		{0x3f807fff, 0x3f80}, // just below a tie
		{0x7f7fffff, 0x7f80}, // largest float32 rounds to Inf
		{0xff7fffff, 0xff80},
		{0x7f800000, 0x7f80}, // Inf
		{0xff800000, 0xff80},
		{0x7fc00000, 0x7fc0}, // quiet NaN
		{0x7f800001, 0x7fc0}, // signalling NaN is made quiet
		{0xff812345, 0xffc1}, // sign and top payload kept
		{0x00008000, 0x0000}, // subnormal tie rounds to even zero, not flushed
		{0x00018000, 0x0002}, // subnormal tie rounds up to even
		{0x00010001, 0x0001}, // subnormal kept
		{0x80000000, 0x8000}, // -0
	}
	for _, tc := range tests {
		if got := FP32ToBF16(math.Float32frombits(tc.bits)); got != tc.want {
			t.Errorf("FP32ToBF16(%#08x) = %#04x, want %#04x", tc.bits, got, tc.want)
		}
	}
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if got := math.Float32bits(BF16ToFP32(h)); got != uint32(h)<<16 {
			t.Fatalf("BF16ToFP32(%#04x) = %#08x", h, got)
		}
		want := h
		if h&0x7f80 == 0x7f80 && h&0x7f != 0 {
			want = h | 0x40
		}
		if got := FP32ToBF16(BF16ToFP32(h)); got != want {
			t.Fatalf("FP32ToBF16(BF16ToFP32(%#04x)) = %#04x, want %#04x", h, got, want)
		}
	}
}

// FP32ToFP16Row (F16C on amd64) gives FP32ToFP16's bits for every float,
// NaNs, infinities and half subnormals included, at every length.
func TestFP32ToFP16Row(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		65504, 65520, -65536, 6e-8, 3e-8, 2.98e-8, 1e-40, 0.1, -1.0009765625}
	for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 256, 1000} {
		var rows [][]float32
		for _, scale := range []float64{1, 1e-6, 1e5, 1e-30} {
			row := make([]float32, n)
			for i := range row {
				row[i] = float32(r.NormFloat64() * scale)
				if i%5 == 0 {
					row[i] = special[(i/5)%len(special)]
				}
			}
			rows = append(rows, row)
		}
		for ri, row := range rows {
			got := make([]uint16, n+1)
			got[n] = 0xBEEF
			FP32ToFP16Row(got, row)
			for i, v := range row {
				if want := FP32ToFP16(v); got[i] != want {
					t.Fatalf("n=%d row %d: element %d (%v) is %#04x, want %#04x", n, ri, i, v, got[i], want)
				}
			}
			if got[n] != 0xBEEF {
				t.Fatalf("n=%d: wrote past the row", n)
			}
		}
	}
}
