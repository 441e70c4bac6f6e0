package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// randMatrix returns a rows×cols matrix of type t quantized from random
// floats.
// latticeType reports whether typ is a lattice type, which has no
// quantizer here (llama.cpp's needs an importance matrix) and any bytes
// of which, d aside, form valid blocks.
func latticeType(typ quant.Type) bool {
	switch typ {
	case quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M:
		return true
	}
	return false
}

// randLatticeRow fills row with random blocks of lattice type typ whose
// F16 d (a block's first two bytes; IQ1_M's the top nibbles of its four
// scale words at 48) is of the size a quantizer gives a row of unit
// variance.
func randLatticeRow(r *rand.Rand, typ quant.Type, row []byte) {
	for i := range row {
		row[i] = byte(r.Uint32())
	}
	for b := 0; b < len(row); b += typ.BlockBytes() {
		d := quant.FP32ToFP16(float32(0.01 + 0.02*r.Float64()))
		if typ == quant.IQ1_M {
			for i := 0; i < 4; i++ {
				row[b+49+2*i] = row[b+49+2*i]&0x0F | byte(d>>(4*i)&0xF)<<4
			}
			continue
		}
		row[b], row[b+1] = byte(d), byte(d>>8)
	}
}

func randMatrix(t testing.TB, r *rand.Rand, typ quant.Type, rows, cols int) *Matrix {
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
		row := data[i*int(rb) : (i+1)*int(rb)]
		if latticeType(typ) {
			randLatticeRow(r, typ, row)
			continue
		}
		if err := quant.QuantizeRow(typ, row, src); err != nil {
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
// dot product, for decode and batches of every tile remainder and on each
// side of the GEMM thresholds (gemmFrom), with row counts that do not
// divide into tiles, on one and two threads.
func TestMatMulMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.Q5_K, quant.F16, quant.TQ1_0, quant.TQ2_0} {
			for _, rows := range []int{1, 7, 64, 130} {
				cols := 512
				m := randMatrix(t, r, typ, rows, cols)
				for _, nTok := range []int{1, 2, 3, 4, 5, 6, 9, 12, 17, 40, 70} {
					x := make([]float32, nTok*cols)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					xq := quantized(t, e, m, x, cols, nTok)
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
	e := testExec(t)
	m := randMatrix(t, r, quant.Q4_0, 256, 1024)
	xq := make([]byte, 40*m.XRowBytes)
	out := make([]float32, 40*m.Rows)
	for _, nTok := range []int{1, 8, 40} {
		if a := testing.AllocsPerRun(20, func() { e.MatMul(m, xq, nTok, out, m.Rows) }); a != 0 {
			t.Errorf("MatMul of %d tokens allocates %v times", nTok, a)
		}
	}
}

// testExec returns an Exec on a pool of two threads, closed when the test
// ends.
func testExec(tb testing.TB) *Exec {
	p := NewPool(2)
	tb.Cleanup(p.Close)
	return NewExec(p)
}

// quantized is x (nTok rows of cols) quantized by e for m's activations,
// in a new buffer; the test fails on an error.
func quantized(t testing.TB, e *Exec, m *Matrix, x []float32, cols, nTok int) []byte {
	t.Helper()
	xq, err := e.Quantize(m.VecType, x, cols, nTok, make([]byte, nTok*m.XRowBytes))
	if err != nil {
		t.Fatal(err)
	}
	return xq
}

// fill sets x to normal random floats.
func fill(r *rand.Rand, x []float32) {
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
}

// sameBits reports the first index where a and b differ in any bit.
func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

// TestMatMulPartsMatchesMatMul: one fused dispatch over matrices of
// different types (and a band of rows of one of them) writes exactly the
// bits that a MatMul per matrix writes, for decode and batches, on 1–3
// threads.
func TestMatMulPartsMatchesMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const cols = 512
	mats := []*Matrix{
		randMatrix(t, r, quant.Q4_K, 200, cols),
		randMatrix(t, r, quant.Q6_K, 37, cols),
		randMatrix(t, r, quant.Q8_0, 64, cols),
		randMatrix(t, r, quant.Q4_0, 96, cols),
	}
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, nTok := range []int{1, 2, 5, 17} {
			x := make([]float32, nTok*cols)
			fill(r, x)
			stride := 0
			for _, m := range mats {
				stride += m.Rows
			}
			stride += 2
			want := make([]float32, nTok*stride)
			got := make([]float32, nTok*stride)
			for i := range got {
				got[i], want[i] = -7, -7
			}
			var parts []Part
			off := 0
			for i, m := range mats {
				xq := quantized(t, e, m, x, cols, nTok)
				if i == 3 { // rows 32..95 only
					full := make([]float32, nTok*m.Rows)
					e.MatMul(m, xq, nTok, full, m.Rows)
					for tk := range nTok {
						copy(want[tk*stride+off:tk*stride+off+64], full[tk*m.Rows+32:tk*m.Rows+96])
					}
					parts = append(parts, Part{M: m, Row0: 32, Rows: 64, X: xq, Out: got[off:], Stride: stride})
					off += 64
					continue
				}
				e.MatMul(m, xq, nTok, want[off:], stride)
				parts = append(parts, Part{M: m, X: xq, Out: got[off:], Stride: stride})
				off += m.Rows
			}
			e.MatMulParts(parts, nTok)
			if i, ok := sameBits(got, want); !ok {
				t.Fatalf("%d threads, %d tokens: output %d is %v, MatMul gives %v", threads, nTok, i, got[i], want[i])
			}
		}
		p.Close()
	}
}

// TestMatMulGatedMatchesUnfused: gate, up and the activation in one
// dispatch equal two MatMuls and the activation after them, bit for bit,
// for separate matrices and for the halves of one (phi3's fused gate/up).
func TestMatMulGatedMatchesUnfused(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const cols, F = 256, 176
	gate := randMatrix(t, r, quant.Q4_K, F, cols)
	up := randMatrix(t, r, quant.Q4_K, F, cols)
	both := randMatrix(t, r, quant.Q8_0, 2*F, cols)
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, nTok := range []int{1, 3, 9} {
			for _, fused := range []bool{false, true} {
				for _, act := range []struct {
					name string
					f    func(g, u []float32)
				}{{"silu", SiLUMul}, {"silu-fast", SiLUMulFast}, {"gelu", GELUMul}} {
					x := make([]float32, nTok*cols)
					fill(r, x)
					g, u := gate, up
					if fused {
						g, u = both, both
					}
					xq := quantized(t, e, g, x, cols, nTok)
					want := make([]float32, nTok*2*F)
					if fused {
						e.MatMul(both, xq, nTok, want, 2*F)
					} else {
						e.MatMul(gate, xq, nTok, want, 2*F)
						e.MatMul(up, xq, nTok, want[F:], 2*F)
					}
					for tk := range nTok {
						act.f(want[tk*2*F:tk*2*F+F], want[tk*2*F+F:(tk+1)*2*F])
					}
					got := make([]float32, nTok*2*F)
					gp := Part{M: g, X: xq, Out: got, Stride: 2 * F}
					upp := Part{M: u, X: xq, Out: got[F:], Stride: 2 * F}
					if fused {
						gp.Rows, upp.Row0, upp.Rows = F, F, F
					}
					e.MatMulGated(gp, upp, nTok, act.f)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("%d threads, %d tokens, fused %v, %s: output %d is %v, unfused %v", threads, nTok, fused, act.name, i, got[i], want[i])
					}
				}
			}
		}
		p.Close()
	}
}

// TestMatMulGatedPartsMatchesGated: up to MaxParts/2 gate-and-up pairs
// (a token's experts) in one dispatch write exactly the bits of a
// MatMulGated per pair, pairs of different types and layouts (X8 where
// this CPU has it) side by side, for decode, small batches and a batch
// that takes the GEMM path, on 1–3 threads.
func TestMatMulGatedPartsMatchesGated(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const cols = 256
	type pair struct {
		g, u *Matrix
		rows int
	}
	var pairs []pair
	for i, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.Q4_K, quant.Q8_0, quant.Q4_0} {
		rows := 64 + 8*i
		g, u := randMatrix(t, r, typ, rows, cols), randMatrix(t, r, typ, rows, cols)
		if _, ok := quant.X8(typ, cols); ok && i%2 == 0 {
			g, u = x8Of(t, g), x8Of(t, u)
		}
		pairs = append(pairs, pair{g, u, rows})
	}
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, nTok := range []int{1, 3, 40} {
			for _, n := range []int{1, 3, MaxParts / 2} {
				var parts []Part
				var got, want [][]float32
				for _, pr := range pairs[:n] {
					x := make([]float32, nTok*cols)
					fill(r, x)
					xq := quantized(t, e, pr.g, x, cols, nTok)
					w := make([]float32, 2*nTok*pr.rows)
					e.MatMulGated(Part{M: pr.g, X: xq, Out: w, Stride: pr.rows}, Part{M: pr.u, X: xq, Out: w[nTok*pr.rows:], Stride: pr.rows}, nTok, SiLUMul)
					g := make([]float32, 2*nTok*pr.rows)
					parts = append(parts, Part{M: pr.g, X: xq, Out: g, Stride: pr.rows}, Part{M: pr.u, X: xq, Out: g[nTok*pr.rows:], Stride: pr.rows})
					got, want = append(got, g), append(want, w)
				}
				e.MatMulGatedParts(parts, nTok, SiLUMul)
				for j := range got {
					if i, ok := sameBits(got[j], want[j]); !ok {
						t.Fatalf("%d threads, %d tokens, %d pairs: pair %d (%v) output %d is %v, MatMulGated gives %v", threads, nTok, n, j, pairs[j].g.T.Type, i, got[j][i], want[j][i])
					}
				}
			}
		}
		p.Close()
	}
}

// TestMatMulAddMatchesUnfused: the product added to a residual in the
// same dispatch equals MatMul then Add, bit for bit.
func TestMatMulAddMatchesUnfused(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const cols, rows = 512, 300
	m := randMatrix(t, r, quant.Q4_0, rows, cols)
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		e := NewExec(p)
		for _, nTok := range []int{1, 4, 7} {
			x := make([]float32, nTok*cols)
			fill(r, x)
			xq := quantized(t, e, m, x, cols, nTok)
			res := make([]float32, nTok*rows)
			fill(r, res)
			want := append([]float32(nil), res...)
			tmp := make([]float32, nTok*rows)
			e.MatMul(m, xq, nTok, tmp, rows)
			Add(want, tmp)
			got := append([]float32(nil), res...)
			e.MatMulAdd(m, xq, nTok, make([]float32, nTok*rows), rows, got, rows)
			if i, ok := sameBits(got, want); !ok {
				t.Fatalf("%d threads, %d tokens: output %d is %v, MatMul+Add gives %v", threads, nTok, i, got[i], want[i])
			}
		}
		p.Close()
	}
}

func TestFusedMatMulsAllocateNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	e := testExec(t)
	e.SetProfileLabels(true)
	e.Phase(NewPhase("test"))
	defer e.EndPhases()
	a := randMatrix(t, r, quant.Q4_0, 256, 1024)
	b := randMatrix(t, r, quant.Q4_0, 64, 1024)
	xq := make([]byte, 8*a.XRowBytes)
	out := make([]float32, 8*512)
	acc := make([]float32, 8*256)
	for _, nTok := range []int{1, 8} {
		checkFusedAllocs(t, e, a, b, xq, out, acc, nTok, 20)
	}
}

// checkFusedAllocs checks that the fused products (MatMulParts of a and
// b, MatMulGated and MatMulAdd of a) of nTok tokens of xq allocate
// nothing, over runs runs each. a has 256 rows, b 64; out holds nTok
// rows of 512, acc of 256.
func checkFusedAllocs(t *testing.T, e *Exec, a, b *Matrix, xq []byte, out, acc []float32, nTok, runs int) {
	t.Helper()
	parts := [2]Part{{M: a, X: xq, Out: out, Stride: 320}, {M: b, X: xq, Out: out[256:], Stride: 320}}
	if n := testing.AllocsPerRun(runs, func() { e.MatMulParts(parts[:], nTok) }); n != 0 {
		t.Errorf("MatMulParts of %d tokens allocates %v times", nTok, n)
	}
	g, u := Part{M: a, X: xq, Out: out, Stride: 512}, Part{M: a, X: xq, Out: out[256:], Stride: 512}
	if n := testing.AllocsPerRun(runs, func() { e.MatMulGated(g, u, nTok, SiLUMulFast) }); n != 0 {
		t.Errorf("MatMulGated of %d tokens allocates %v times", nTok, n)
	}
	if n := testing.AllocsPerRun(runs, func() { e.MatMulAdd(a, xq, nTok, out, 256, acc, 256) }); n != 0 {
		t.Errorf("MatMulAdd of %d tokens allocates %v times", nTok, n)
	}
}

// TestFusedMatMulsConcurrentExecs: two Execs (two sessions) share one
// pool and run fused products at once; every result must equal the one
// computed alone. Run with -race.
func TestFusedMatMulsConcurrentExecs(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const cols = 256
	a := randMatrix(t, r, quant.Q4_0, 96, cols)
	b := randMatrix(t, r, quant.Q8_0, 48, cols)
	p := NewPool(2)
	defer p.Close()
	const nTok = 3
	x := make([]float32, nTok*cols)
	fill(r, x)
	ref := NewExec(p)
	xa, _ := ref.Quantize(a.VecType, x, cols, nTok, make([]byte, nTok*a.XRowBytes))
	xb, _ := ref.Quantize(b.VecType, x, cols, nTok, make([]byte, nTok*b.XRowBytes))
	want := make([]float32, nTok*144)
	ref.MatMul(a, xa, nTok, want, 144)
	ref.MatMul(b, xb, nTok, want[96:], 144)
	wantG := make([]float32, nTok*192)
	ref.MatMulGated(Part{M: a, X: xa, Out: wantG, Stride: 192}, Part{M: a, X: xa, Out: wantG[96:], Stride: 192}, nTok, SiLUMulFast)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			e := NewExec(p)
			got := make([]float32, nTok*144)
			gotG := make([]float32, nTok*192)
			for j := range 200 {
				e.MatMulParts([]Part{{M: a, X: xa, Out: got, Stride: 144}, {M: b, X: xb, Out: got[96:], Stride: 144}}, nTok)
				if i, ok := sameBits(got, want); !ok {
					t.Errorf("run %d: parts output %d is %v, want %v", j, i, got[i], want[i])
					return
				}
				e.MatMulGated(Part{M: a, X: xa, Out: gotG, Stride: 192}, Part{M: a, X: xa, Out: gotG[96:], Stride: 192}, nTok, SiLUMulFast)
				if i, ok := sameBits(gotG, wantG); !ok {
					t.Errorf("run %d: gated output %d is %v, want %v", j, i, gotG[i], wantG[i])
					return
				}
				if j%40 == 0 {
					time.Sleep(2 * spinFor)
				}
			}
		})
	}
	wg.Wait()
}

// A product whose rows or buffers do not fit panics on the caller's
// goroutine (where a test or a recover can see it), never in a worker.
func TestMatMulPartsBadShapesPanicOnCaller(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	m := randMatrix(t, r, quant.Q8_0, 64, 256)
	e := testExec(t)
	xq := make([]byte, 2*m.XRowBytes)
	for _, tc := range []struct {
		name  string
		parts []Part
		nTok  int
	}{
		{"rows past the end", []Part{{M: m, Row0: 32, Rows: 40, X: xq, Out: make([]float32, 64), Stride: 64}}, 1},
		{"short activations", []Part{{M: m, X: xq[:10], Out: make([]float32, 64), Stride: 64}}, 1},
		{"short output", []Part{{M: m, X: xq, Out: make([]float32, 100), Stride: 64}}, 2},
		{"stride below rows", []Part{{M: m, X: xq, Out: make([]float32, 200), Stride: 32}}, 2},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			e.MatMulParts(tc.parts, tc.nTok)
		}()
	}
	if err := func() (err error) {
		defer func() {
			if recover() != nil {
				err = fmt.Errorf("panicked")
			}
		}()
		e.MatMulAdd(m, xq, 2, make([]float32, 128), 64, make([]float32, 100), 64)
		return nil
	}(); err == nil {
		t.Error("short residual: no panic")
	}
	// The panics left nothing behind: a good product still works.
	out := make([]float32, 64)
	e.MatMul(m, xq, 1, out, 64)
	if got, want := out[5], m.Dot(256, m.T.Row(5), xq[:m.XRowBytes]); math.Abs(float64(got-want)) > 1e-4*(1+math.Abs(float64(want))) {
		t.Errorf("after the panics: row 5 %v, want %v", got, want)
	}
}
