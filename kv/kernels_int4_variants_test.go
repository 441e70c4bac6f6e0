package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

// Every variant of the Int4 families (kern.scoresQ4, kern.valuesQ4)
// against its pure-Go twin, the family's first variant. The twin's float32
// sums may be added in another order by an assembly variant, so scores
// are compared within dotBound of Σ|k·q| and values within a few rounding
// steps per row; kernels that keep the twin's order (all arm64 ones) are
// held to the same bits by TestArmInt4BitExact.

// q4Rows returns rows q4_0 rows of d elements at an odd offset, from
// quantized random floats, some blocks with extreme or zero scales.
func q4Rows(r *rand.Rand, rows, d int) []byte {
	rb := q4RowBytes(d)
	b := make([]byte, rows*rb+1)[1:]
	x := make([]float32, d)
	for i := 0; i < rows; i++ {
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		quantizeQ4(b[i*rb:(i+1)*rb], x)
		for blk := 0; blk < d/q4Block; blk++ {
			p := b[i*rb+blk*q4BlockBytes:]
			switch r.IntN(12) {
			case 0: // random codes and any finite scale
				for j := 2; j < q4BlockBytes; j++ {
					p[j] = byte(r.Uint32())
				}
				h := quant.FP32ToFP16(float32(r.NormFloat64() * 1000))
				p[0], p[1] = byte(h), byte(h>>8)
			case 1:
				p[0], p[1] = 0, 0
			case 2: // subnormal scale
				p[0], p[1] = 1, 0x80
			}
		}
	}
	return b
}

// q4Abs returns Σ_j |k_j·q_j| for q4_0 row k.
func q4Abs(k []byte, q []float32) float64 {
	x := make([]float32, len(q))
	dequantizeQ4(x, k)
	var a float64
	for j := range q {
		a += math.Abs(float64(x[j]) * float64(q[j]))
	}
	return a
}

func TestKernelVariantsInt4(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	t.Logf("scoresQ4 variants %d, valuesQ4 variants %d", len(kern.scoresQ4.all), len(kern.valuesQ4.all))
	for _, d := range []int{32, 64, 96, 128, 256} {
		for _, rows := range []int{0, 1, 2, 3, 4, 5, 8, 9, 17, 33} {
			t.Run(fmt.Sprintf("d%d/rows%d", d, rows), func(t *testing.T) {
				k := q4Rows(r, rows, d)
				q := f32Row(r, d, 1, 1)
				want := make([]float32, rows)
				scoresQ4Rows(want, k, q)
				for _, v := range kern.scoresQ4.all[1:] {
					if d%v.mult != 0 {
						continue
					}
					got := make([]float32, rows+1)
					got[rows] = 42
					v.f(got[:rows], k, q)
					rb := q4RowBytes(d)
					for i := range rows {
						if !closeDot(got[i], want[i], q4Abs(k[i*rb:(i+1)*rb], q), d) {
							t.Fatalf("scoresQ4 %s row %d = %v, Go %v", v.name, i, got[i], want[i])
						}
					}
					if got[rows] != 42 {
						t.Fatalf("scoresQ4 %s wrote past %d rows", v.name, rows)
					}
				}
				w := f32Row(r, rows, 1, 0.1)
				for i := range w {
					if i%3 == 1 {
						w[i] = 0 // zero weights are skipped, one of a pair or both
					}
				}
				init := f32Row(r, d, 0, 1)
				wantV := append([]float32(nil), init...)
				valuesQ4Rows(wantV, w, k)
				for _, v := range kern.valuesQ4.all[1:] {
					if d%v.mult != 0 {
						continue
					}
					got := append(append([]float32(nil), init...), 42)
					v.f(got[:d], w, k)
					for j := range d {
						if math.Abs(float64(got[j]-wantV[j])) > 0x1p-20*(math.Abs(float64(init[j]))+float64(rows)*8) {
							t.Fatalf("valuesQ4 %s [%d] = %v, Go %v", v.name, j, got[j], wantV[j])
						}
					}
					if got[d] != 42 {
						t.Fatalf("valuesQ4 %s wrote past %d elements", v.name, d)
					}
				}
			})
		}
	}
}
