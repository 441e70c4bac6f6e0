package kv

import (
	"math"
	"testing"

	"github.com/x448/float16"
)

// TestRoundFP16 pins the rounding attention applies to Q and to the weights
// against an independent converter: every F16 value, the halfway points
// between neighbours (ties go to even) and one float32 ulp either side.
func TestRoundFP16(t *testing.T) {
	check := func(f float32) {
		want := float16.Fromfloat32(f).Float32()
		if got := roundFP16(f); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("roundFP16(%g) = %g, want %g", f, got, want)
		}
	}
	for i := range 0x7bff { // positive finite values below the largest
		lo := float16.Frombits(uint16(i)).Float32()
		hi := float16.Frombits(uint16(i + 1)).Float32()
		mid := math.Float32bits(float32((float64(lo) + float64(hi)) / 2))
		for _, b := range []uint32{math.Float32bits(lo), mid - 1, mid, mid + 1} {
			check(math.Float32frombits(b))
			check(-math.Float32frombits(b))
		}
	}
	for _, f := range []float32{0x1p-25, 0x1.000002p-25, 65504, 65519.996, 65520, float32(math.Inf(1))} {
		check(f)
		check(-f)
	}
}
