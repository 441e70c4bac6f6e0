package ssm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/lowmem/llm/internal/cpu"
	"github.com/lowmem/llm/internal/floatbits"
)

// Every kernel this CPU runs gives the twin's bits, state and outputs:
// rows of whole blocks of 16, with a tail, shorter than a block; the state
// advanced in place (in is s), out of place, and out of place streaming
// (the non-temporal kernels where s is aligned and the rows whole blocks).
func TestScanHeadMatchesTwin(t *testing.T) {
	ls := kernelLevels(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 5, 15, 16, 17, 31, 32, 48, 64, 128, 135} {
		for _, rows := range []int{1, 3, 64} {
			for _, mode := range []string{"in place", "out of place", "streaming"} {
				name := fmt.Sprintf("n%d/rows%d/%s", n, rows, mode)
				B, C, x := randFloats(r, n), randFloats(r, n), randFloats(r, rows)
				in := randFloats(r, rows*n)
				dA, dt, d := float32(r.Float64()), float32(r.Float64()*2), float32(r.NormFloat64())
				run := func(scan func(stream bool, s, in, y []float32)) (s, y []float32) {
					s, y = alignedFloats(rows*n), make([]float32, rows)
					copy(s, in)
					src := slices.Clone(in)
					if mode == "in place" {
						src = s
					}
					scan(mode == "streaming", s, src, y)
					return s, y
				}
				wantS, wantY := run(func(_ bool, s, in, y []float32) { scanHeadGo(s, in, B, C, x, y, dA, dt, d) })
				for _, l := range ls {
					gotS, gotY := run(func(stream bool, s, in, y []float32) { scanHeadAt(l, stream, s, in, B, C, x, y, dA, dt, d) })
					if floatbits.FirstDiff(gotS, wantS) >= 0 || floatbits.FirstDiff(gotY, wantY) >= 0 {
						t.Errorf("%s: %v differs from the Go twin", name, l)
					}
				}
			}
		}
	}
}

// kernelLevels are the kernels this CPU runs, logged, or else the test
// skipped.
func kernelLevels(t *testing.T) []cpu.Level {
	ls := levels()
	if len(ls) == 0 {
		t.Skip("no assembly kernels here")
	}
	t.Logf("kernels at %v", ls)
	return ls
}

// alignedFloats returns n floats (at least one) starting on a 64-byte
// boundary, as the streaming kernels want them.
func alignedFloats(n int) []float32 {
	v := make([]float32, max(n, 1)+16)
	off := int(-uintptr(unsafe.Pointer(&v[0])) % 64 / 4)
	return v[off : off+n]
}

// The twin is the scan it names: close to a float64 one.
func TestScanHeadGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, rows := 37, 5
	B, C, x, in := randFloats(r, n), randFloats(r, n), randFloats(r, rows), randFloats(r, rows*n)
	dA, dt, d := float32(0.9), float32(0.3), float32(-0.5)
	s, y := make([]float32, rows*n), make([]float32, rows)
	ScanHead(s, in, B, C, x, y, dA, dt, d)
	for p := range rows {
		var sum float64
		xdt := float64(x[p] * dt)
		for i := range n {
			v := float64(in[p*n+i])*float64(dA) + float64(B[i])*xdt
			if math.Abs(v-float64(s[p*n+i])) > 1e-5 {
				t.Fatalf("state %d,%d: %v, want %v", p, i, s[p*n+i], v)
			}
			sum += v * float64(C[i])
		}
		if want := sum + float64(x[p])*float64(d); math.Abs(want-float64(y[p])) > 1e-4 {
			t.Fatalf("y[%d] = %v, want %v", p, y[p], want)
		}
	}
}

// A short argument panics in Go, before any kernel reads past it.
func TestScanHeadShortArguments(t *testing.T) {
	n, rows := 16, 2
	ok := func() [][]float32 {
		return [][]float32{make([]float32, rows*n), make([]float32, rows*n), make([]float32, n), make([]float32, n), make([]float32, rows), make([]float32, rows)}
	}
	for i, name := range []string{"s", "in", "B", "C", "x", "y"} {
		if name == "B" || name == "x" {
			continue // they set the sizes
		}
		a := ok()
		a[i] = a[i][:len(a[i])-1]
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a short %s did not panic", name)
				}
			}()
			ScanHead(a[0], a[1], a[2], a[3], a[4], a[5], 1, 1, 1)
		}()
	}
}

func randFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// BenchmarkScanHead scans one Granite 4.0-H head (64 channels of a state
// of 128) by a token, in place, with the Go twin and each kernel.
func BenchmarkScanHead(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	n, rows := 128, 64
	B, C, x, s, y := randFloats(r, n), randFloats(r, n), randFloats(r, rows), randFloats(r, rows*n), make([]float32, rows)
	bench := func(name string, scan func()) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(8 * rows * n))
			for b.Loop() {
				scan()
			}
		})
	}
	bench("go", func() { scanHeadGo(s, s, B, C, x, y, 0.99, 0.01, 1) })
	for _, l := range levels() {
		bench(l.String(), func() { scanHeadAt(l, false, s, s, B, C, x, y, 0.99, 0.01, 1) })
	}
}

// BenchmarkScanState scans a whole Granite 4.0-H-Micro state (36 layers
// of 4096 channels of 128: 75 MB, past the caches) by a token at the
// level in use: in place, out of place into a second state (a pass's first
// token, from the checkpoint's slot into a free one), and out of place
// streaming (ScanHeadStream).
func BenchmarkScanState(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	n, rows := 128, 36*4096
	B, C, x, y := randFloats(r, n), randFloats(r, n), randFloats(r, rows), make([]float32, rows)
	s0, s1 := alignedFloats(rows*n), alignedFloats(rows*n)
	copy(s0, randFloats(r, rows*n))
	copy(s1, s0)
	for _, tc := range []struct {
		name    string
		scan    func(s, in, B, C, x, y []float32, dA, dt, d float32)
		inPlace bool
	}{
		{"in place", ScanHead, true},
		{"out of place", ScanHead, false},
		{"streaming", ScanHeadStream, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				in := s0
				if tc.inPlace {
					in = s1
				}
				tc.scan(s1, in, B, C, x, y, 0.99, 0.01, 1)
				s0, s1 = s1, s0
			}
		})
	}
}
