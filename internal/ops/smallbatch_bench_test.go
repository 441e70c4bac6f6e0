package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

// BenchmarkSmallBatch compares the two paths of a batch product, tiles
// (or the X8 decode kernel token by token) and the GEMM, for batches
// around the threshold between them, on TinyLlama's gate shape (5632 ×
// 2048) in each layout of the types with a GEMM. ns/op is per batch;
// tok/s is what to compare across batch sizes.
func BenchmarkSmallBatch(b *testing.B) {
	const rows, cols = 5632, 2048
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.TQ1_0, quant.TQ2_0} {
		if _, ok := quant.Gemm(typ); !ok {
			continue
		}
		r := rand.New(rand.NewPCG(3, uint64(typ)))
		row := randMatrix(b, r, typ, rows, cols)
		layouts := []struct {
			name string
			m    *Matrix
		}{{"row", row}}
		if _, ok := quant.X8(typ, cols); ok {
			layouts = append(layouts, struct {
				name string
				m    *Matrix
			}{"x8", x8Of(b, row)})
		}
		for _, l := range layouts {
			m := l.m
			x := make([]float32, 40*cols)
			fill(r, x)
			e := testExec(b)
			xq, err := e.Quantize(m.VecType, x, cols, 40, make([]byte, 40*m.XRowBytes))
			if err != nil {
				b.Fatal(err)
			}
			out := make([]float32, 40*rows)
			for _, nTok := range smallBatches {
				for _, path := range []string{"tiles", "gemm"} {
					b.Run(fmt.Sprintf("%v/%s/%d/%s", typ, l.name, nTok, path), func(b *testing.B) {
						e.gemmMin = 1 << 30
						if path == "gemm" {
							e.gemmMin = 1
						}
						defer func() { e.gemmMin = 0 }()
						for b.Loop() {
							e.MatMul(m, xq, nTok, out, rows)
						}
						b.ReportMetric(float64(nTok)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
					})
				}
			}
		}
	}
}

// smallBatches are BenchmarkSmallBatch's batch sizes: each side of the
// GEMM loops' widths (4, 8, 16, 32 columns) and a large batch's tail.
var smallBatches = []int{2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40}
