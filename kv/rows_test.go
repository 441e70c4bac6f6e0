package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendRowsTiledValues checks AttendRows with scratch for the values
// transposed (the weighted sums as tile products) against refAttend with
// unrounded keys and values, and against the Go loop it takes with only
// the weights' scratch: head sizes and position counts off the tile sizes,
// keys and values interleaved in rows as a pass's projections are.
func TestAttendRowsTiledValues(t *testing.T) {
	for _, tc := range []struct{ dk, dv, n, nq int }{
		{64, 64, 300, 4}, {32, 24, 41, 3}, {8, 5, 17, 1}, {16, 16, 1, 2}, {12, 20, 33, 4},
	} {
		for _, alibi := range []bool{false, true} {
			t.Run(fmt.Sprintf("dk%d-dv%d-n%d-q%d/alibi%v", tc.dk, tc.dv, tc.n, tc.nq, alibi), func(t *testing.T) {
				dk, dv, n, nq := tc.dk, tc.dv, tc.n, tc.nq
				const heads, from = 2, 5
				r := rand.New(rand.NewPCG(uint64(n), uint64(dk)))
				stride := dk + dv + 3
				buf := make([]float32, n*stride)
				toks := make([]refToken, from+n)
				for j := range n {
					k, v := randVec(r, dk, 2), randVec(r, dv, 1)
					copy(buf[j*stride:], k)
					copy(buf[j*stride+dk:], v)
					tk := refToken{k: k, v: v}
					for _, x := range k {
						tk.kc = append(tk.kc, float64(x))
					}
					for _, x := range v {
						tk.vc = append(tk.vc, float64(x))
					}
					toks[from+j] = tk
				}
				rows := Rows{K: buf, V: buf[dk:], Stride: stride, N: n, HeadDimK: dk, HeadDimV: dv}
				p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(float64(dk))), From: from, Head: 1, Query: from + n/3}
				if alibi {
					p.ALiBi = refALiBiSlopes(heads, 8)
				}
				qs := randVec(r, nq*dk, 2)
				tiled, looped := make([]float32, nq*dv), make([]float32, nq*dv)
				if err := AttendRows(rows, qs, tiled, p, make([]float32, (nq+dv)*n)); err != nil {
					t.Fatal(err)
				}
				if err := AttendRows(rows, qs, looped, p, make([]float32, nq*n)); err != nil {
					t.Fatal(err)
				}
				for i := range nq {
					q := make([]float32, heads*dk) // refAttend reads head 1's query
					copy(q[dk:], qs[i*dk:(i+1)*dk])
					pi := p
					pi.Query = p.Query + i
					want, _ := refAttend(toks, from, from+n-1, q, pi, 1, dk, dv, 1, false, false)
					for d, x := range want {
						a, b := tiled[i*dv+d], looped[i*dv+d]
						if math.Abs(float64(a)-x) > 1e-5 || math.Abs(float64(b)-x) > 1e-5 {
							t.Fatalf("query %d out[%d] = %v tiled, %v looped, want %v", i, d, a, b, x)
						}
					}
				}
			})
		}
	}
}
