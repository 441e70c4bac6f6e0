package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddLoRA checks AddLoRA against float64 sums of s·B·(A·x), for row
// bands, two corrections and one at scale 0, on the caller (small work)
// and in the pool (large), whose items must cover every unit once.
func TestAddLoRA(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	e := NewExec(p)
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 2*rng.Float32() - 1
		}
		return v
	}
	for _, tc := range []struct{ cols, rows, n, row0, band int }{
		{16, 24, 1, 0, 24}, {16, 24, 3, 8, 8}, // on the caller
		{16, 30, 5, 1, 23},                                  // tiles of B·u cut short in rows and tokens
		{512, 1536, 1, 0, 1536}, {512, 1536, 40, 512, 1024}, // in the pool
	} {
		scales := []*LoRAScale{{}, {}, {}}
		scales[0].Store(0.5)
		scales[1].Store(-2)
		// scales[2] stays 0: it must add nothing.
		var m Matrix
		m.Cols, m.Rows = tc.cols, tc.rows
		var ls []*LoRA
		for i, rank := range []int{4, 7, 5} {
			l := &LoRA{A: fill(rank * tc.cols), B: fill(tc.rows * rank), Rank: rank, Factor: float32(i + 1), Scale: scales[i]}
			l.Next, m.LoRA = m.LoRA, l
			ls = append(ls, l)
		}
		x := fill(tc.n * tc.cols)
		const stride = 2000
		out := fill(tc.n * stride)
		want := make([]float64, len(out))
		for i, v := range out {
			want[i] = float64(v)
		}
		for _, l := range ls {
			s := float64(l.Scale.Load() * l.Factor)
			for tk := range tc.n {
				u := make([]float64, l.Rank)
				for j := range u {
					for c := range tc.cols {
						u[j] += float64(l.A[j*tc.cols+c]) * float64(x[tk*tc.cols+c])
					}
				}
				for r := range tc.band {
					var d float64
					for j := range u {
						d += float64(l.B[(tc.row0+r)*l.Rank+j]) * u[j]
					}
					want[tk*stride+r] += s * d
				}
			}
		}
		e.AddLoRA(&m, tc.row0, tc.band, x, tc.cols, tc.n, out, stride, make([]float32, tc.n*m.LoRARank()), nil)
		for i := range out {
			if d := math.Abs(float64(out[i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("%+v: out[%d] = %v, want %v", tc, i, out[i], want[i])
			}
		}
	}
}
