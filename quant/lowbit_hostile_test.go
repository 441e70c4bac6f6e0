package quant

import (
	"math"
	"testing"
)

// TestLowBitHostileFloats: non-finite and huge inputs make the quantizers
// and then the decoders and dot kernels produce something, never panic.
func TestLowBitHostileFloats(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	fills := map[string]func(i int) float32{
		"nan":   func(i int) float32 { return nan },
		"inf":   func(i int) float32 { return inf * float32(1-2*(i%2)) },
		"mixed": func(i int) float32 { return []float32{nan, inf, -inf, 0, 1, -3e38, 3e38, 1e-40}[i%8] },
		"huge":  func(i int) float32 { return 3e38 * float32(1-2*(i%3)) },
	}
	for _, typ := range []Type{Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, MXFP4} {
		for name, f := range fills {
			t.Run(typ.String()+"/"+name, func(t *testing.T) {
				x := make([]float32, 2*QKK)
				for i := range x {
					x[i] = f(i)
				}
				q := mustQuantize(t, typ, x)
				_ = mustDequantize(t, typ, q, len(x))
				xq := mustQuantize(t, typ.VecDotType(), x)
				for _, k := range Kernels(typ) {
					_ = k.Dot(len(x), q, xq)
				}
			})
		}
	}
}
