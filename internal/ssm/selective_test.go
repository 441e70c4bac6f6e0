package ssm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/floatbits"
	"github.com/lowmem/llm/internal/softmax"
)

// selectiveArgs are SelectiveScan's inputs but the state: rows channels
// of n state elements.
type selectiveArgs struct {
	A, B, C, x, dt, D []float32
}

// randSelective draws a block's inputs as a converted model has them (A
// negative, dt positive), or, with hostile, sprinkled with what kernels
// must treat as the twin does: exponents below Expf's floor and at its
// edge, positive ones, NaN and infinities.
func randSelective(r *rand.Rand, n, rows int, hostile bool) selectiveArgs {
	a := selectiveArgs{A: randFloats(r, rows*n), B: randFloats(r, n), C: randFloats(r, n),
		x: randFloats(r, rows), dt: make([]float32, rows), D: randFloats(r, rows)}
	for i, v := range a.A {
		a.A[i] = -float32(math.Exp(float64(v) * 2))
	}
	for p := range a.dt {
		a.dt[p] = float32(r.Float64() * 0.5)
	}
	if !hostile {
		return a
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	odd := []float32{-1e6, -200, softmax.ExpfFloor, softmax.ExpfFloor * 1.0001, softmax.ExpfFloor * 0.9999, -86, 0, 1, 60, 88, nan, -inf, inf}
	for i := range a.A {
		if r.IntN(4) == 0 {
			a.A[i] = odd[r.IntN(len(odd))]
		}
	}
	for p := range a.dt {
		switch r.IntN(8) {
		case 0:
			a.dt[p] = 1
		case 1:
			a.dt[p] = nan
		}
	}
	for _, v := range [][]float32{a.B, a.C, a.x} {
		if r.IntN(4) == 0 {
			v[r.IntN(len(v))] = nan
		}
	}
	return a
}

// Every kernel this CPU runs gives the twin's bits, state and outputs,
// over rows of whole blocks of 16, with a tail, and shorter than a block,
// in place and out of place, with ordinary and hostile inputs.
func TestSelectiveScanMatchesTwin(t *testing.T) {
	ls := kernelLevels(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 5, 15, 16, 17, 31, 32, 48, 64, 135} {
		for _, rows := range []int{1, 3, 64} {
			for _, inPlace := range []bool{true, false} {
				for _, hostile := range []bool{false, true} {
					name := fmt.Sprintf("n%d/rows%d/inplace %v/hostile %v", n, rows, inPlace, hostile)
					a := randSelective(r, n, rows, hostile)
					in := randFloats(r, rows*n)
					if hostile {
						in[r.IntN(len(in))] = float32(math.NaN())
						in[r.IntN(len(in))] = float32(math.Float32frombits(1)) // a denormal
					}
					run := func(scan func(s, in, y []float32)) (s, y []float32) {
						s, y = slices.Clone(in), make([]float32, rows)
						src := slices.Clone(in)
						if inPlace {
							src = s
						}
						scan(s, src, y)
						if !inPlace && floatbits.FirstDiff(src, in) >= 0 {
							t.Errorf("%s: the source state changed", name)
						}
						return s, y
					}
					wantS, wantY := run(func(s, in, y []float32) { selectiveGo(s, in, a.A, a.B, a.C, a.x, a.dt, a.D, y) })
					for _, l := range ls {
						gotS, gotY := run(func(s, in, y []float32) { selectiveAt(l, s, in, a.A, a.B, a.C, a.x, a.dt, a.D, y) })
						if i := floatbits.FirstDiff(gotS, wantS); i >= 0 {
							t.Errorf("%s: %v: state[%d] = %v (%#x), twin %v (%#x)", name, l, i, gotS[i], math.Float32bits(gotS[i]), wantS[i], math.Float32bits(wantS[i]))
						}
						if i := floatbits.FirstDiff(gotY, wantY); i >= 0 {
							t.Errorf("%s: %v: y[%d] = %v, twin %v", name, l, i, gotY[i], wantY[i])
						}
					}
				}
			}
		}
	}
}

// SelectiveScan against Mamba-1's recurrence in float64 — each state
// element decayed by its own exp(dt·A), then fed B·x·dt, the output its
// sum against C plus x·D — from a state read in place and from another
// slot, which must stay untouched; and exponents below Expf's floor decay
// to 0.
func TestSelectiveScanMatchesRecurrence(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{16, 37, 5, 1} {
		for _, inPlace := range []bool{true, false} {
			rows := 7
			a := randSelective(r, n, rows, false)
			a.A[0] = -1e4 // below the floor for any dt above 0.0088
			a.dt[0] = 0.3
			in := randFloats(r, rows*n)
			saved := slices.Clone(in)
			s := in
			if !inPlace {
				s = make([]float32, rows*n)
			}
			y := make([]float32, rows)
			SelectiveScan(s, in, a.A, a.B, a.C, a.x, a.dt, a.D, y)
			for p := range rows {
				dt, x := float64(a.dt[p]), float64(a.x[p])
				want := x * float64(a.D[p])
				for i := range n {
					v := float64(saved[p*n+i])*math.Exp(dt*float64(a.A[p*n+i])) + float64(a.B[i])*x*dt
					if math.Abs(float64(s[p*n+i])-v) > 1e-5*(1+math.Abs(v)) {
						t.Errorf("n %d, in place %v: state[%d][%d] = %v, want %v", n, inPlace, p, i, s[p*n+i], v)
					}
					want += v * float64(a.C[i])
				}
				if math.Abs(float64(y[p])-want) > 1e-5*(1+math.Abs(want)) {
					t.Errorf("n %d, in place %v: y[%d] = %v, want %v", n, inPlace, p, y[p], want)
				}
			}
			if !inPlace && !slices.Equal(in, saved) {
				t.Errorf("n %d: the source state changed", n)
			}
		}
	}
}

// A short argument panics in Go, before any kernel reads past it.
func TestSelectiveScanShortArguments(t *testing.T) {
	n, rows := 16, 2
	names := []string{"s", "in", "A", "B", "C", "x", "dt", "D", "y"}
	sizes := []int{rows * n, rows * n, rows * n, n, n, rows, rows, rows, rows}
	for i, name := range names {
		if name == "B" || name == "x" {
			continue // they set the sizes
		}
		a := make([][]float32, len(names))
		for j, size := range sizes {
			a[j] = make([]float32, size)
		}
		a[i] = a[i][:len(a[i])-1]
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a short %s did not panic", name)
				}
			}()
			SelectiveScan(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
		}()
	}
}

// BenchmarkSelectiveScan scans 64 Falcon-Mamba-7B channels (a state of 16
// each) by a token, in place, with the Go twin and each kernel; ns/op over
// 1024 is the time a state element.
func BenchmarkSelectiveScan(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	n, rows := 16, 64
	a := randSelective(r, n, rows, false)
	s, y := randFloats(r, rows*n), make([]float32, rows)
	bench := func(name string, scan func()) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				scan()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*n), "ns/element")
		})
	}
	bench("go", func() { selectiveGo(s, s, a.A, a.B, a.C, a.x, a.dt, a.D, y) })
	for _, l := range levels() {
		bench(l.String(), func() { selectiveAt(l, s, s, a.A, a.B, a.C, a.x, a.dt, a.D, y) })
	}
}
