package quant

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/internal/floatbits"
)

// refMXFP4Levels is kvalues_mxfp4 again (the E2M1 values doubled), written
// out separately so that the references do not share the package's table.
var refMXFP4Levels = [16]float64{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// refElemMXFP4 decodes element j of an MXFP4 block: the E8M0 byte e, then
// 16 bytes of codes in the Q4_0 order; the value is level·2^(e−128).
func refElemMXFP4(blk []byte, j int) (v, mag float64) {
	c := blk[1+j%16] & 15
	if j >= 16 {
		c = blk[1+j%16] >> 4
	}
	v = math.Ldexp(refMXFP4Levels[c], int(blk[0])-128)
	return v, math.Abs(v)
}

// fillMXFP4 sets a random block's exponent to one that keeps every product
// of the reference tests finite and normal (values about 2^−28 to 2^15);
// the extremes are TestMXFP4Exponents' and TestMXFP4AllExponents'.
func fillMXFP4(b []byte, r *rand.Rand, kind blockKind) {
	b[0] = byte(100 + r.IntN(40))
	if kind == kindMaxCodes {
		b[0] = 140
	}
}

func nonFinite(f float32) bool { return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) }

// sparseFloats returns n floats, zero but where m says otherwise.
func sparseFloats(n int, m map[int]float32) []float32 {
	x := make([]float32, n)
	for i, v := range m {
		x[i] = v
	}
	return x
}

func TestE8M0Half(t *testing.T) {
	for e := range 256 {
		if got, want := e8m0Half(byte(e)), math.Ldexp(1, e-128); float64(got) != want {
			t.Errorf("e8m0Half(%d) = %g, want 2^%d", e, got, e-128)
		}
	}
}

func TestMXFP4Layout(t *testing.T) {
	b := make([]byte, mxfp4Bytes)
	b[0] = 126 // d = 2^-2
	for j := range 16 {
		b[1+j] = byte(j) | byte(15-j)<<4
	}
	got := mustDequantize(t, MXFP4, b, QK)
	for j := range 16 {
		if w := 0.25 * float32(refMXFP4Levels[j]); got[j] != w {
			t.Errorf("element %d: %g, want %g", j, got[j], w)
		}
		if w := 0.25 * float32(refMXFP4Levels[15-j]); got[16+j] != w {
			t.Errorf("element %d: %g, want %g", 16+j, got[16+j], w)
		}
	}
}

// TestMXFP4KnownBlocks quantizes blocks whose bytes follow by hand from
// quantize_row_mxfp4_ref. The finite ones were checked against
// llama-quantize (d32676d77, MXFP4_MOE, the blocks placed in an expert
// tensor of an F32 file); it refuses Inf and NaN input, so those two are
// derived by hand only.
func TestMXFP4KnownBlocks(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	tests := []struct {
		name string
		x    map[int]float32 // nonzero elements
		want []byte          // e, then the code bytes; missing ones are zero
	}{
		// amax 6: ⌊log2 6⌋ = 2, e = 127, d = 1/2, levels 0 … ±6 in halves.
		// 0.25 lies between 0 and 0.5 and 5 between 4 and 6: the first
		// code wins (0, and 6 for 4); -5 takes -4 (14) before -6 (15).
		{"ties", map[int]float32{0: 6, 1: -6, 2: 0.25, 3: -0.25, 4: 5, 5: -5, 6: 1.2, 16: 3, 17: -0.5, 18: 2.5},
			[]byte{0x7f, 7 | 5<<4, 15 | 9<<4, 0 | 4<<4, 0, 6, 14, 2}},
		// amax 1: e = 125, d = 1/8: 1 is level 8 (code 6), -0.75 level -6
		// (code 13), -1 level -8 (code 14), 0.0625 halfway to 1/8 stays 0.
		{"one", map[int]float32{0: 1, 1: -0.75, 2: 0.0625, 31: -1},
			[]byte{0x7d, 6, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 14 << 4}},
		// amax one ulp below 8: log2f rounds to 3.0, so e = 128 (d = 1)
		// where the exact floor would give 127; 7.9999995 becomes 8
		// (code 6), not 6 = 12/2. One ulp below 4, log2f does not round
		// up: e = 126, d = 1/4, code 7 (3).
		{"belowEight", map[int]float32{0: 0x1.fffffep2},
			[]byte{0x80, 6}},
		{"belowFour", map[int]float32{0: 0x1.fffffep1},
			[]byte{0x7e, 7}},
		// One ulp below 1/4: log2f rounds to −2.0, e = 123 (d = 1/32), and
		// 0.2499999985 is level 8 (code 6).
		{"belowQuarter", map[int]float32{0: 0x1.fffffep-3},
			[]byte{0x7b, 6}},
		// amax 2^-130: ⌊log2⌋ − 2 + 127 = −5, a byte of 251 after x86's
		// conversion; at d = 2^123 every element is code 0.
		{"tiny", map[int]float32{0: 0x1p-130, 1: -0x1p-131},
			[]byte{0xfb}},
		// amax 3e38: ⌊log2⌋ = 127, e = 252 (d = 2^124); 3e38/d ≈ 14.1
		// clips to level 12 (code 7), and the other elements, far below
		// d/2, are code 0.
		{"huge", map[int]float32{0: 0x1.fffffep3, 1: 0x1.fffffep-4, 5: 3e38},
			[]byte{0xfc, 0, 0, 0, 0, 0, 7}},
		// A subnormal amax 1e-40: ⌊log2⌋ = −133, e = −8 wraps to 248.
		{"subnormal", map[int]float32{0: 1e-40},
			[]byte{0xf8}},
		// An infinite amax converts to exponent 0 (d = 2^-128); every
		// error is then Inf or 1, so every code is 0.
		{"inf", map[int]float32{0: inf, 1: 1, 2: -1},
			[]byte{0}},
		// NaN is never the amax and is code 0; 2 gives e = 126, d = 1/4,
		// so 2 is level 8 (code 6) and -1 level -4 (code 12).
		{"nan", map[int]float32{0: nan, 1: 2, 17: -1},
			[]byte{0x7e, 0, 6 | 12<<4}},
		{"zero", nil, []byte{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := sparseFloats(QK, tc.x)
			want := make([]byte, mxfp4Bytes)
			copy(want, tc.want)
			if got := mustQuantize(t, MXFP4, x); !bytes.Equal(got, want) {
				t.Errorf("got % x\nwant % x", got, want)
			}
		})
	}
}

func TestMXFP4KnownBytes(t *testing.T) { checkKnownBytes(t, MXFP4) }

// TestMXFP4ExactGrid: every level times a power of two, with ±12 (the
// element of largest magnitude, which fixes e) in every block, survives a
// round trip.
func TestMXFP4ExactGrid(t *testing.T) {
	r := newRand(39)
	x := make([]float32, 64*QK)
	for b := range 64 {
		d := math.Ldexp(1, r.IntN(40)-20)
		for i := b * QK; i < (b+1)*QK; i++ {
			x[i] = float32(d * refMXFP4Levels[r.IntN(16)])
		}
		x[b*QK+r.IntN(QK)] = float32(d * 12 * float64(1-2*r.IntN(2)))
	}
	checkExactRoundTrip(t, MXFP4, x)
}

// TestMXFP4AllExponents: every exponent byte, 0xFF (the OCP format's NaN)
// included, decodes to level·2^(e−128) as in ggml, and the dot kernels
// agree with the pure-Go one bit for bit on one block, subnormal scales
// included: d_w·d_x is the same float32 product, and its products with
// the partial integer sums are exact, so the order of their sums does not
// matter. Where d·isum overflows, a SIMD kernel's partial products may
// meet as Inf − Inf or Inf·0 (as ggml's do): any non-finite result
// agrees with a non-finite one.
func TestMXFP4AllExponents(t *testing.T) {
	r := newRand(3939)
	w := randBlocks(MXFP4, 256, r, kindRandom)
	for e := range 256 {
		w[e*mxfp4Bytes] = byte(e)
	}
	got := mustDequantize(t, MXFP4, w, 256*QK)
	for i, v := range got {
		// e ≥ 252 with the largest levels overflows float32, as in ggml.
		if want, _ := refElemMXFP4(w[i/QK*mxfp4Bytes:], i%QK); v != float32(want) {
			t.Fatalf("element %d (e = %d): %g, want %g", i, i/QK, v, want)
		}
	}
	x := randBlocks(Q8_0, 256, r, kindRandom)
	ks := Kernels(MXFP4)
	for e := range 256 {
		wb, xb := w[e*mxfp4Bytes:(e+1)*mxfp4Bytes], x[e*q8_0Bytes:(e+1)*q8_0Bytes]
		want := ks[0].Dot(QK, wb, xb)
		for _, k := range ks[1:] {
			got := k.Dot(QK, wb, xb)
			if nonFinite(want) && nonFinite(got) {
				continue
			}
			if !floatbits.Same(got, want) {
				t.Errorf("%s, e = %d: %g, want %g", k.Name, e, got, want)
			}
		}
	}
}

// TestMXFP4Truncated: a row one byte short or long is an error naming the
// sizes, never a panic.
func TestMXFP4Truncated(t *testing.T) {
	dst := make([]float32, 2*QK)
	for _, n := range []int{2*mxfp4Bytes - 1, 2*mxfp4Bytes + 1, 0} {
		err := Dequantize(MXFP4, dst, make([]byte, n))
		if err == nil || errors.Is(err, ErrUnsupportedType) {
			t.Errorf("%d bytes for 64 elements: %v, want a size error", n, err)
		}
	}
	if _, err := MXFP4.RowBytes(33); err == nil {
		t.Error("RowBytes(33): no error")
	}
}

func TestMXFP4Type(t *testing.T) {
	if MXFP4 != 39 || MXFP4.String() != "MXFP4" || MXFP4.BlockElems() != 32 || MXFP4.BlockBytes() != 17 ||
		MXFP4.VecDotType() != Q8_0 || !MXFP4.Supported() {
		t.Errorf("MXFP4: id %d, %q, %d elements in %d bytes, activations %v, supported %v",
			uint32(MXFP4), MXFP4, MXFP4.BlockElems(), MXFP4.BlockBytes(), MXFP4.VecDotType(), MXFP4.Supported())
	}
	if n, err := MXFP4.RowBytes(2880); err != nil || n != 90*17 {
		t.Errorf("RowBytes(2880) = %d, %v; want 1530", n, err)
	}
}
