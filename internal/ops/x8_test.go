package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lowmem/llm/quant"
)

// x8Of returns a copy of the matrix m in the X8 layout, or skips the
// test on a CPU (or build) without X8 kernels.
func x8Of(t testing.TB, m *Matrix) *Matrix {
	t.Helper()
	k, ok := quant.X8(m.T.Type, m.Cols)
	if !ok {
		t.Skipf("no X8 kernels for %v × %d here", m.T.Type, m.Cols)
	}
	data := make([]byte, quant.X8Bytes(m.T.Type, m.Rows, m.Cols))
	if err := quant.RepackX8(m.T.Type, data, m.T.Data, m.Rows, m.Cols); err != nil {
		t.Fatal(err)
	}
	c := *m
	if err := c.UseX8(data, k); err != nil {
		t.Fatal(err)
	}
	if !c.X8() || m.X8() {
		t.Fatal("UseX8 did not switch the copy alone")
	}
	return &c
}

// near reports the first index where a and b differ by more than float32
// rounding of a sum in another order allows.
func near(a, b []float32) (int, bool) { return nearTol(a, b, 1e-4) }

// nearTol is near with room tol (relative, past magnitude 1).
func nearTol(a, b []float32, tol float64) (int, bool) {
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > tol*(1+math.Abs(float64(b[i]))) || math.IsNaN(float64(a[i])) {
			return i, false
		}
	}
	return 0, true
}

// TestX8MatchesRowLayout: every fused entry point computes with matrices
// in the X8 layout, alone and mixed with row-layout ones in one dispatch,
// what it computes with the row layout, for decode, a small batch (tiles)
// and a batch past the GEMM threshold, on 1 and 2 threads; Q4_0, Q8_0
// and Q5_0 also at widths that are not a multiple of 256 (gpt-oss's 2880,
// Gemma 3 1B's 1152, three blocks, Nemotron-Nano-9B-v2's 4480), whose
// last blocks the X8 kernels take one at a time.
func TestX8MatchesRowLayout(t *testing.T) {
	for _, c := range []struct {
		typ  quant.Type
		cols int
	}{{quant.Q4_0, 512}, {quant.Q4_K, 512}, {quant.Q6_K, 512}, {quant.Q4_0, 2880}, {quant.Q8_0, 1152}, {quant.Q8_0, 96}, {quant.Q5_0, 512}, {quant.Q5_0, 4480}} {
		t.Run(fmt.Sprintf("%v/%d", c.typ, c.cols), func(t *testing.T) { testX8MatchesRowLayout(t, c.typ, c.cols) })
	}
}

func testX8MatchesRowLayout(t *testing.T, typ quant.Type, cols int) {
	r := rand.New(rand.NewPCG(21, 22))
	a := randMatrix(t, r, typ, 96, cols)
	b := randMatrix(t, r, typ, 40, cols)
	q8 := randMatrix(t, r, quant.Q8_0, 96, cols)
	ax, bx := x8Of(t, a), x8Of(t, b)
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, nTok := range []int{1, 5, 16, 40} {
			x := make([]float32, nTok*cols)
			fill(r, x)
			xq := quantized(t, e, a, x, cols, nTok)
			xq8 := quantized(t, e, q8, x, cols, nTok)
			res := make([]float32, nTok*96)
			fill(r, res)
			// Each case runs with the row layout (x8 false) and the X8 one.
			cases := []struct {
				name string
				run  func(x8 bool, out []float32)
			}{
				{"MatMul", func(x8 bool, out []float32) {
					e.MatMul(pick(x8, a, ax), xq, nTok, out, 100)
				}},
				{"MatMulAdd", func(x8 bool, out []float32) {
					acc := append([]float32(nil), res...)
					e.MatMulAdd(pick(x8, a, ax), xq, nTok, out, 100, acc, 96)
					copy(out[len(out)-len(acc):], acc)
				}},
				{"MatMulParts", func(x8 bool, out []float32) {
					e.MatMulParts([]Part{
						{M: pick(x8, a, ax), Row0: 16, Rows: 48, X: xq, Out: out, Stride: 200},
						{M: pick(x8, b, bx), X: xq, Out: out[48:], Stride: 200},
						{M: q8, X: xq8, Out: out[88:], Stride: 200},
					}, nTok)
				}},
				{"MatMulGated", func(x8 bool, out []float32) {
					e.MatMulGated(Part{M: pick(x8, a, ax), X: xq, Out: out, Stride: 200},
						Part{M: q8, X: xq8, Out: out[96:], Stride: 200}, nTok, SiLUMul)
				}},
				{"MatMulGated both X8", func(x8 bool, out []float32) {
					e.MatMulGated(Part{M: pick(x8, a, ax), X: xq, Out: out, Stride: 200},
						Part{M: pick(x8, a, ax), Row0: 0, X: xq, Out: out[96:], Stride: 200}, nTok, GELUMul)
				}},
			}
			for _, c := range cases {
				n := nTok*200 + len(res)
				want, got := make([]float32, n), make([]float32, n)
				c.run(false, want)
				c.run(true, got)
				// A gated product multiplies the gate's rounding
				// difference by the up product (|u| up to 90 here at 512
				// columns): ten times the room where the batch takes no
				// GEMM (the low-bit types; a fused product equals the
				// unfused one exactly, TestX8LowbitGatedExact), more for
				// wider rows, whose sums round more and are larger.
				tol := 1e-4
				if strings.HasPrefix(c.name, "MatMulGated") {
					tol = 1e-3 * float64(max(cols, 512)) / 512
				}
				if i, ok := nearTol(got, want, tol); !ok {
					t.Errorf("%d threads, %d tokens, %s: index %d (token %d, row %d) is %g with X8, %g in rows",
						threads, nTok, c.name, i, i/200, i%200, got[i], want[i])
				}
			}
		}
		p.Close()
	}
}

func pick(x8 bool, rows, x *Matrix) *Matrix {
	if x8 {
		return x
	}
	return rows
}

// TestX8AllocatesNothing: decode and batch products of X8 matrices, fused
// or not, allocate nothing.
func TestX8AllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	p := NewPool(2)
	defer p.Close()
	e := NewExec(p)
	a := x8Of(t, randMatrix(t, r, quant.Q4_0, 256, 1024))
	b := randMatrix(t, r, quant.Q4_0, 64, 1024)
	xq := make([]byte, 20*a.XRowBytes)
	out := make([]float32, 20*512)
	acc := make([]float32, 20*256)
	for _, nTok := range []int{1, 5, 20} {
		if n := testing.AllocsPerRun(5, func() { e.MatMul(a, xq, nTok, out, 256) }); n != 0 {
			t.Errorf("MatMul of %d tokens allocates %v times", nTok, n)
		}
		checkFusedAllocs(t, e, a, b, xq, out, acc, nTok, 5)
	}
}

// TestX8Refuses: UseX8 refuses rows that are not whole groups, a kernel
// of another type and repacked bytes of another size; a Part of an X8
// matrix that splits a group panics on the caller.
func TestX8Refuses(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	k := quant.X8Kernel{Name: "fake", Type: quant.Q4_0, MatVec: func(int, []byte, int, []byte, []float32) {},
		Mul: func(int, []byte, int, []byte, int, []float32, int) {}}
	m := randMatrix(t, r, quant.Q4_0, 12, 256)
	if err := m.UseX8(make([]byte, len(m.T.Data)), k); err == nil {
		t.Error("UseX8 took 12 rows")
	}
	m = randMatrix(t, r, quant.Q4_0, 16, 256)
	if err := m.UseX8(make([]byte, len(m.T.Data)-1), k); err == nil {
		t.Error("UseX8 took a short buffer")
	}
	q8 := randMatrix(t, r, quant.Q8_0, 16, 256)
	if err := q8.UseX8(make([]byte, len(q8.T.Data)), k); err == nil {
		t.Error("UseX8 took a Q4_0 kernel for Q8_0")
	}
	if err := m.UseX8(make([]byte, len(m.T.Data)), k); err != nil {
		t.Fatal(err)
	}
	if rl := m.RowLayout(); rl.X8() || rl.tileRows == 8 && rl.Kernel == "fake" {
		t.Error("RowLayout kept the X8 layout")
	}
	p := NewPool(1)
	defer p.Close()
	e := NewExec(p)
	defer func() {
		if v := recover(); v == nil {
			t.Error("a part splitting a group of 8 rows did not panic")
		} else {
			_ = fmt.Sprint(v)
		}
	}()
	e.MatMulParts([]Part{{M: m, Row0: 4, X: make([]byte, m.XRowBytes), Out: make([]float32, 16), Stride: 16}}, 1)
}

// TestX8BatchEqualsDecode: a batch below the GEMM threshold (MatVecN,
// or MatVec a token at a time) gives each token exactly what decoding it
// alone gives, on 1 and 2 threads; so does the k-quants' GEMM, which
// computes in the decode kernels' order, over one and two panels; the
// low-bit types and Q5_0, without a GEMM, take MatVecN for every batch.
// Q4_0, Q8_0, IQ4_NL, MXFP4 and Q5_0 also at widths that are not a
// multiple of 256.
func TestX8BatchEqualsDecode(t *testing.T) {
	type shape struct {
		typ  quant.Type
		cols int
	}
	var shapes []shape
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_0, quant.IQ4_XS, quant.Q3_K, quant.Q2_K, quant.IQ4_NL, quant.MXFP4, quant.Q5_0, quant.IQ3_S, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M} {
		shapes = append(shapes, shape{typ, 512})
	}
	shapes = append(shapes, shape{quant.Q4_0, 2880}, shape{quant.Q8_0, 1152}, shape{quant.IQ4_NL, 2880}, shape{quant.MXFP4, 2880}, shape{quant.Q5_0, 2880})
	for _, sh := range shapes {
		typ, cols := sh.typ, sh.cols
		t.Run(fmt.Sprintf("%v/%d", typ, cols), func(t *testing.T) {
			r := rand.New(rand.NewPCG(25, 26))
			const rows = 96
			a := x8Of(t, randMatrix(t, r, typ, rows, cols))
			for _, threads := range []int{1, 2} {
				p := NewPool(threads)
				e := NewExec(p)
				upTo := e.gemmFrom(a)
				if typ == quant.Q4_K || typ == quant.Q5_K || typ == quant.Q6_K {
					upTo = max(upTo, quant.GemmCols+9)
				}
				for nTok := 2; nTok < upTo; nTok++ {
					x := make([]float32, nTok*cols)
					for i := range x {
						x[i] = r.Float32()*2 - 1
					}
					xq := quantized(t, e, a, x, cols, nTok)
					got := make([]float32, nTok*100)
					e.MatMul(a, xq, nTok, got, 100)
					for tk := 0; tk < nTok; tk++ {
						want := make([]float32, rows)
						e.MatMul(a, xq[tk*a.XRowBytes:(tk+1)*a.XRowBytes], 1, want, rows)
						for i, w := range want {
							if g := got[tk*100+i]; g != w {
								t.Errorf("%d threads, %d tokens: token %d row %d is %g, %g decoded alone", threads, nTok, tk, i, g, w)
							}
						}
					}
				}
				p.Close()
			}
		})
	}
}
