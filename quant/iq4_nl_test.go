package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// refIQ4Levels is kvalues_iq4nl again, written out separately so that the
// references do not share the package's table.
var refIQ4Levels = [16]float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// refElemIQ4_NL decodes element j of an IQ4_NL block: d, then 16 bytes of
// codes in the Q4_0 order.
func refElemIQ4_NL(blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk)))
	c := blk[2+j%16] & 15
	if j >= 16 {
		c = blk[2+j%16] >> 4
	}
	v = d * refIQ4Levels[c]
	return v, math.Abs(v)
}

func TestIQ4Levels(t *testing.T) {
	for i := range iq4nlValues {
		if float64(iq4nlValues[i]) != refIQ4Levels[i] || iq4nlValues32[i] != int32(iq4nlValues[i]) {
			t.Fatalf("level %d: %d, %d, want %g", i, iq4nlValues[i], iq4nlValues32[i], refIQ4Levels[i])
		}
		if i > 0 && iq4nlValues[i] <= iq4nlValues[i-1] {
			t.Fatalf("levels not increasing at %d", i)
		}
	}
}

// TestBestIndexIQ4 checks the nearest-level search against a linear scan,
// at the midpoints (which go to the higher level) and beyond the ends.
func TestBestIndexIQ4(t *testing.T) {
	want := func(x float32) uint8 {
		best := 0
		for i := 1; i < 16; i++ {
			// ggml's tie rule: the lower level only when strictly nearer.
			if math.Abs(float64(x)-refIQ4Levels[i]) <= math.Abs(float64(x)-refIQ4Levels[best]) {
				best = i
			}
		}
		return uint8(best)
	}
	for x := float32(-140); x <= 130; x += 0.25 {
		if got := bestIndexIQ4(x); got != want(x) {
			t.Errorf("bestIndexIQ4(%g) = %d, want %d", x, got, want(x))
		}
	}
	for _, x := range []float32{-1e30, float32(math.Inf(-1))} {
		if got := bestIndexIQ4(x); got != 0 {
			t.Errorf("bestIndexIQ4(%g) = %d, want 0", x, got)
		}
	}
	for _, x := range []float32{1e30, float32(math.Inf(1))} {
		if got := bestIndexIQ4(x); got != 15 {
			t.Errorf("bestIndexIQ4(%g) = %d, want 15", x, got)
		}
	}
}

func TestIQ4_NLLayout(t *testing.T) {
	b := make([]byte, iq4_NLBytes)
	put16(b, FP32ToFP16(0.5))
	for j := 0; j < 16; j++ {
		b[2+j] = byte(j) | byte(15-j)<<4
	}
	got := mustDequantize(t, IQ4_NL, b, QK)
	for j := 0; j < 16; j++ {
		if w := 0.5 * float32(refIQ4Levels[j]); got[j] != w {
			t.Errorf("element %d: %g, want %g", j, got[j], w)
		}
		if w := 0.5 * float32(refIQ4Levels[15-j]); got[16+j] != w {
			t.Errorf("element %d: %g, want %g", 16+j, got[16+j], w)
		}
	}
}

// TestIQ4_NLExactGrid: d times a level, with the level -127 in every block,
// survives a round trip.
func TestIQ4_NLExactGrid(t *testing.T) {
	r := newRand(41)
	x := make([]float32, 64*QK)
	for b := 0; b < 64; b++ {
		d := math.Ldexp(1, -r.IntN(12))
		if b%2 == 1 {
			d = -d
		}
		for i := b * QK; i < (b+1)*QK; i++ {
			x[i] = float32(d * refIQ4Levels[r.IntN(16)])
		}
		x[b*QK+r.IntN(QK)] = float32(d * -127)
	}
	checkExactRoundTrip(t, IQ4_NL, x)
}

func TestIQ4_NLKnownBytes(t *testing.T) { checkKnownBytes(t, IQ4_NL) }
