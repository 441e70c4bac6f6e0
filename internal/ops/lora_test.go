package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

// TestAddLoRA checks AddLoRA against float64 sums of s·B·(A·x), for row
// bands, two corrections and one at scale 0, on the caller (small work)
// and in the pool (large), whose items must cover every unit once; with
// float32 factors, and with F16 factors, held and multiplied as F16.
func TestAddLoRA(t *testing.T) {
	// F16: the sums take x and A·x rounded to F16 as the product does (to
	// float32, then to F16); a float32 sum of A·x that rounds to the
	// other F16 neighbour moves a term by one F16 step, 2^-11 of it.
	for _, ft := range []struct {
		typ quant.Type
		tol float64
	}{{quant.F32, 1e-4}, {quant.F16, 1e-3}} {
		t.Run(ft.typ.String(), func(t *testing.T) { testAddLoRA(t, ft.typ, ft.tol) })
	}
}

// round is v as a factor of type typ holds it.
func round(typ quant.Type, v float32) float32 {
	if typ == quant.F16 {
		return quant.FP16ToFP32(quant.FP32ToFP16(v))
	}
	return v
}

// loraFactor makes a LoRA factor of type typ from rows of cols floats.
func loraFactor(t *testing.T, typ quant.Type, v []float32, cols int) *Matrix {
	t.Helper()
	rb, _ := typ.RowBytes(int64(cols))
	data := make([]byte, len(v)/cols*int(rb))
	for r := range len(v) / cols {
		if err := quant.QuantizeRow(typ, data[r*int(rb):(r+1)*int(rb)], v[r*cols:(r+1)*cols]); err != nil {
			t.Fatal(err)
		}
	}
	m, err := NewLoRAFactor("f", typ, cols, len(v)/cols, data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testAddLoRA(t *testing.T, typ quant.Type, tol float64) {
	p := NewPool(3)
	defer p.Close()
	e := NewExec(p)
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = round(typ, 2*rng.Float32()-1)
		}
		return v
	}
	for _, tc := range []struct{ cols, rows, n, row0, band int }{
		{16, 24, 1, 0, 24}, {16, 24, 3, 8, 8}, // on the caller
		{16, 30, 5, 1, 23},                                  // tiles of B·u cut short in rows and tokens
		{512, 1536, 1, 0, 1536}, {512, 1536, 40, 512, 1024}, // in the pool
		{64, 40, 150, 3, 30}, // activations converted in chunks of loraChunk tokens
	} {
		scales := []*LoRAScale{{}, {}, {}}
		scales[0].Store(0.5)
		scales[1].Store(-2)
		// scales[2] stays 0: it must add nothing.
		var m Matrix
		m.Cols, m.Rows = tc.cols, tc.rows
		var ls []*LoRA
		var as, bs [][]float32
		xRow, uRow := 0, 0
		for i, rank := range []int{4, 7, 5} {
			a, b := fill(rank*tc.cols), fill(tc.rows*rank)
			l := &LoRA{A: loraFactor(t, typ, a, tc.cols), B: loraFactor(t, typ, b, rank), Rank: rank, Factor: float32(i + 1), Scale: scales[i]}
			l.Next, m.LoRA = m.LoRA, l
			ls = append(ls, l)
			as, bs = append(as, a), append(bs, b)
			xRow, uRow = max(xRow, l.A.XRowBytes), max(uRow, l.B.XRowBytes)
		}
		x := make([]float32, tc.n*tc.cols)
		for i := range x {
			x[i] = 2*rng.Float32() - 1
		}
		const stride = 2000
		out := fill(tc.n * stride)
		want := make([]float64, len(out))
		for i, v := range out {
			want[i] = float64(v)
		}
		for i, l := range ls {
			s := float64(l.Scale.Load() * l.Factor)
			for tk := range tc.n {
				u := make([]float64, l.Rank)
				for j := range u {
					for c := range tc.cols {
						u[j] += float64(as[i][j*tc.cols+c]) * float64(round(typ, x[tk*tc.cols+c]))
					}
					u[j] = float64(round(typ, float32(u[j])))
				}
				for r := range tc.band {
					var d float64
					for j := range u {
						d += float64(bs[i][(tc.row0+r)*l.Rank+j]) * u[j]
					}
					want[tk*stride+r] += s * d
				}
			}
		}
		buf := NewLoRAScratch(tc.n, m.LoRARank(), xRow, uRow)
		e.AddLoRA(&m, tc.row0, tc.band, LoRAInput{F: x, N: tc.n}, out, stride, &buf, nil)
		for i := range out {
			if d := math.Abs(float64(out[i]) - want[i]); d > tol*(1+math.Abs(want[i])) {
				t.Fatalf("%+v: out[%d] = %v, want %v", tc, i, out[i], want[i])
			}
		}
	}
}
