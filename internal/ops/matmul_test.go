package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// randMatrix returns a rows×cols matrix of type t quantized from random
// floats.
func randMatrix(t *testing.T, r *rand.Rand, typ quant.Type, rows, cols int) *Matrix {
	t.Helper()
	rb, err := typ.RowBytes(int64(cols))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, int(rb)*rows)
	src := make([]float32, cols)
	for i := 0; i < rows; i++ {
		for j := range src {
			src[j] = float32(r.NormFloat64())
		}
		if err := quant.QuantizeRow(typ, data[i*int(rb):(i+1)*int(rb)], src); err != nil {
			t.Fatal(err)
		}
	}
	tt, err := tensor.View("w", typ, []int{cols, rows}, data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMatrix(tt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMatMulMatchesDot checks every output of MatMul against the matrix's
// dot product, for decode and batches of every tile remainder, with row
// counts that do not divide into tiles, on one and two threads.
func TestMatMulMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.Q5_K, quant.F16} {
			for _, rows := range []int{1, 7, 64, 130} {
				cols := 512
				m := randMatrix(t, r, typ, rows, cols)
				for _, nTok := range []int{1, 2, 3, 4, 5, 9, 17, 40, 70} {
					x := make([]float32, nTok*cols)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					xq, err := e.Quantize(m.VecType, x, cols, nTok, make([]byte, nTok*m.XRowBytes))
					if err != nil {
						t.Fatal(err)
					}
					stride := rows + 3
					out := make([]float32, nTok*stride)
					for i := range out {
						out[i] = -99
					}
					e.MatMul(m, xq, nTok, out, stride)
					name := fmt.Sprintf("%d threads %v %d rows %d tokens", threads, typ, rows, nTok)
					for tk := 0; tk < nTok; tk++ {
						xt := xq[tk*m.XRowBytes : (tk+1)*m.XRowBytes]
						for i := 0; i < stride; i++ {
							got := out[tk*stride+i]
							if i >= rows {
								if got != -99 {
									t.Fatalf("%s: wrote past the rows at token %d index %d", name, tk, i)
								}
								continue
							}
							want := m.Dot(cols, m.T.Row(i), xt)
							if d := math.Abs(float64(got - want)); d > 1e-4*(1+math.Abs(float64(want))) {
								t.Fatalf("%s: token %d row %d: got %v, want %v", name, tk, i, got, want)
							}
						}
					}
				}
			}
		}
		p.Close()
	}
}

func TestMatMulAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := NewPool(2)
	defer p.Close()
	e := NewExec(p)
	m := randMatrix(t, r, quant.Q4_0, 256, 1024)
	xq := make([]byte, 40*m.XRowBytes)
	out := make([]float32, 40*m.Rows)
	for _, nTok := range []int{1, 8, 40} {
		if a := testing.AllocsPerRun(20, func() { e.MatMul(m, xq, nTok, out, m.Rows) }); a != 0 {
			t.Errorf("MatMul of %d tokens allocates %v times", nTok, a)
		}
	}
}
