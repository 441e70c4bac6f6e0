package ssm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/floatbits"
)

// Every WKV6Head kernel this CPU runs gives the twin's bits, state and
// outputs, in place (in is st, as the model calls it) and out of place:
// head sizes the AVX2 kernel takes (multiples of 8), those AVX-512 takes
// (of 16) and others, which fall back to the twin.
func TestWKV6HeadMatchesTwin(t *testing.T) {
	ls := kernelLevels(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 8, 16, 24, 40, 64, 72, 128} {
		for _, inPlace := range []bool{true, false} {
			r, w, k, v, u := randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n)
			in := randFloats(rng, n*n)
			run := func(head func(st, in, y []float32)) (st, y []float32) {
				st, y = slices.Clone(in), randFloats(rng, n)
				src := slices.Clone(in)
				if inPlace {
					src = st
				}
				head(st, src, y)
				return st, y
			}
			wantS, wantY := run(func(st, in, y []float32) { wkv6HeadGo(st, in, r, w, k, v, u, y) })
			for _, l := range ls {
				gotS, gotY := run(func(st, in, y []float32) { wkv6At(l, st, in, r, w, k, v, u, y) })
				if i := floatbits.FirstDiff(gotS, wantS); i >= 0 {
					t.Errorf("n%d/in place %v: %v's state differs from the twin at %d", n, inPlace, l, i)
				}
				if i := floatbits.FirstDiff(gotY, wantY); i >= 0 {
					t.Errorf("n%d/in place %v: %v's y differs from the twin at %d", n, inPlace, l, i)
				}
			}
		}
	}
}

// A short argument panics in WKV6Head, before any kernel reads or writes
// past it (all but r, whose length is the head's size).
func TestWKV6HeadShortArguments(t *testing.T) {
	const n = 16
	full := func() [][]float32 {
		return [][]float32{make([]float32, n*n), make([]float32, n*n), make([]float32, n), make([]float32, n),
			make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)}
	}
	for _, a := range []int{0, 1, 3, 4, 5, 6, 7} {
		t.Run(fmt.Sprint(a), func(t *testing.T) {
			args := full()
			args[a] = args[a][:len(args[a])-1]
			defer func() {
				if recover() == nil {
					t.Errorf("argument %d one short: no panic", a)
				}
			}()
			WKV6Head(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7])
		})
	}
}

func BenchmarkWKV6Head(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 64
	st, r, w, k, v, u, y := randFloats(rng, n*n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), make([]float32, n)
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			wkv6HeadGo(st, st, r, w, k, v, u, y)
		}
	})
	for _, l := range levels() {
		b.Run(l.String(), func(b *testing.B) {
			for b.Loop() {
				wkv6At(l, st, st, r, w, k, v, u, y)
			}
		})
	}
}
