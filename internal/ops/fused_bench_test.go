package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

// BenchmarkDecodeFFN compares a decode step's feed-forward block run as
// three dispatches and a serial activation (separate) with the gated
// product and the down product with its residual add (fused), on
// TinyLlama's shapes in Q4_0, cycling through 8 blocks' weights (156 MB)
// so that they come from memory as in a real decode.
func BenchmarkDecodeFFN(b *testing.B) {
	const E, F, blocks = 2048, 5632, 8
	r := rand.New(rand.NewPCG(1, 1))
	type block struct{ gate, up, down *Matrix }
	var bs []block
	for range blocks {
		bs = append(bs, block{randMatrix(b, r, quant.Q4_0, F, E), randMatrix(b, r, quant.Q4_0, F, E), randMatrix(b, r, quant.Q4_0, E, F)})
	}
	e := testExec(b)
	x := make([]float32, E)
	fill(r, x)
	xq, _ := e.Quantize(quant.Q8_0, x, E, 1, make([]byte, bs[0].gate.XRowBytes))
	gu := make([]float32, 2*F)
	hq := make([]byte, bs[0].down.XRowBytes)
	tmp, res := make([]float32, E), make([]float32, E)
	b.Run("separate", func(b *testing.B) {
		i := 0
		for b.Loop() {
			L := &bs[i%blocks]
			i++
			e.MatMul(L.gate, xq, 1, gu, 2*F)
			e.MatMul(L.up, xq, 1, gu[F:], 2*F)
			SiLUMul(gu[:F], gu[F:])
			e.Quantize(quant.Q8_0, gu[:F], F, 1, hq)
			e.MatMul(L.down, hq, 1, tmp, E)
			Add(res, tmp)
		}
	})
	b.Run("fused", func(b *testing.B) {
		i := 0
		for b.Loop() {
			L := &bs[i%blocks]
			i++
			e.MatMulGated(Part{M: L.gate, X: xq, Out: gu, Stride: 2 * F}, Part{M: L.up, X: xq, Out: gu[F:], Stride: 2 * F}, 1, SiLUMulFast)
			e.Quantize(quant.Q8_0, gu[:F], F, 1, hq)
			e.MatMulAdd(L.down, hq, 1, tmp, E, res, E)
		}
	})
}
