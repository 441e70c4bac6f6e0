package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

// TestX8LowbitMatchesRowLayout is TestX8MatchesRowLayout for the low-bit
// types, which have no GEMM: their batches, past the GEMM threshold too,
// go through the X8 decode kernels (MatVecN); IQ4_NL and MXFP4 also at
// gpt-oss's width, 2880.
func TestX8LowbitMatchesRowLayout(t *testing.T) {
	for _, typ := range []quant.Type{quant.IQ4_XS, quant.Q3_K, quant.Q2_K, quant.IQ4_NL, quant.MXFP4, quant.IQ3_S, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M} {
		t.Run(typ.String(), func(t *testing.T) { testX8MatchesRowLayout(t, typ, 512) })
	}
	t.Run("IQ4_NL/2880", func(t *testing.T) { testX8MatchesRowLayout(t, quant.IQ4_NL, 2880) })
	t.Run("MXFP4/2880", func(t *testing.T) { testX8MatchesRowLayout(t, quant.MXFP4, 2880) })
}

// TestX8LowbitGatedExact: for the low-bit types in the X8 layout, whose
// batches take no GEMM, a gated product is exactly the activation of the
// two unfused products, for decode and batches.
func TestX8LowbitGatedExact(t *testing.T) {
	for _, typ := range []quant.Type{quant.IQ4_XS, quant.Q3_K, quant.Q2_K, quant.IQ4_NL, quant.MXFP4, quant.IQ3_S, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M} {
		t.Run(typ.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(27, 28))
			const cols = 512
			a := x8Of(t, randMatrix(t, r, typ, 96, cols))
			p := NewPool(2)
			defer p.Close()
			e := NewExec(p)
			for _, nTok := range []int{1, 5, 40} {
				x := make([]float32, nTok*cols)
				fill(r, x)
				xq := quantized(t, e, a, x, cols, nTok)
				g, u := make([]float32, nTok*96), make([]float32, nTok*96)
				e.MatMul(a, xq, nTok, g, 96)
				e.MatMul(a, xq, nTok, u, 96)
				GELUMul(g, u)
				out := make([]float32, nTok*200)
				e.MatMulGated(Part{M: a, X: xq, Out: out, Stride: 200}, Part{M: a, X: xq, Out: out[96:], Stride: 200}, nTok, GELUMul)
				for tk := 0; tk < nTok; tk++ {
					for i := 0; i < 96; i++ {
						if out[tk*200+i] != g[tk*96+i] {
							t.Fatalf("%d tokens: token %d row %d is %v fused, %v unfused", nTok, tk, i, out[tk*200+i], g[tk*96+i])
						}
					}
				}
			}
		})
	}
}
