package ssm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
	"github.com/lowmem/llm/internal/floatbits"
)

// rwkvHead is one RWKV head kernel over fixed r, w, k, v (and u or
// scale), at a level (cpu.Generic the twin).
type rwkvHead func(l cpu.Level, st, in, y []float32)

// rwkvHeads are the RWKV head kernels over random vectors of size n.
func rwkvHeads(rng *rand.Rand, n int) map[string]rwkvHead {
	r, w, k, v, u := randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n), randFloats(rng, n)
	scale := float32(rng.NormFloat64())
	return map[string]rwkvHead{
		"wkv6": func(l cpu.Level, st, in, y []float32) {
			if l == cpu.Generic {
				wkv6HeadGo(st, in, r, w, k, v, u, y)
			} else {
				wkv6At(l, st, in, r, w, k, v, u, y)
			}
		},
		"gla": func(l cpu.Level, st, in, y []float32) {
			if l == cpu.Generic {
				glaHeadGo(st, in, r, w, k, v, scale, y)
			} else {
				glaAt(l, st, in, r, w, k, v, scale, y)
			}
		},
	}
}

// Every RWKV head kernel this CPU runs gives its twin's bits, state and
// outputs, in place (in is st, as the model calls it) and out of place:
// head sizes the AVX2 kernels take (multiples of 8), those AVX-512 takes
// (of 16) and others, which fall back to the twin.
func TestRWKVHeadsMatchTwins(t *testing.T) {
	ls := kernelLevels(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 8, 16, 24, 40, 64, 72, 128} {
		for name, head := range rwkvHeads(rng, n) {
			for _, inPlace := range []bool{true, false} {
				in := randFloats(rng, n*n)
				run := func(l cpu.Level) (st, y []float32) {
					st, y = slices.Clone(in), randFloats(rng, n)
					src := slices.Clone(in)
					if inPlace {
						src = st
					}
					head(l, st, src, y)
					return st, y
				}
				wantS, wantY := run(cpu.Generic)
				for _, l := range ls {
					gotS, gotY := run(l)
					if i := floatbits.FirstDiff(gotS, wantS); i >= 0 {
						t.Errorf("%s/n%d/in place %v: %v's state differs from the twin at %d", name, n, inPlace, l, i)
					}
					if i := floatbits.FirstDiff(gotY, wantY); i >= 0 {
						t.Errorf("%s/n%d/in place %v: %v's y differs from the twin at %d", name, n, inPlace, l, i)
					}
				}
			}
		}
	}
}

// A short argument panics in WKV6Head and GLAHead, before any kernel reads
// or writes past it (all but r, whose length is the head's size).
func TestRWKVHeadsShortArguments(t *testing.T) {
	const n = 16
	heads := []struct {
		name string
		vecs int // after st and in
		run  func(a [][]float32)
	}{
		{"WKV6Head", 6, func(a [][]float32) { WKV6Head(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]) }},
		{"GLAHead", 5, func(a [][]float32) { GLAHead(a[0], a[1], a[2], a[3], a[4], a[5], 1, a[6]) }},
	}
	for _, h := range heads {
		for a := range 2 + h.vecs {
			if a == 2 {
				continue
			}
			t.Run(fmt.Sprint(h.name, "/", a), func(t *testing.T) {
				args := [][]float32{make([]float32, n*n), make([]float32, n*n)}
				for range h.vecs {
					args = append(args, make([]float32, n))
				}
				args[a] = args[a][:len(args[a])-1]
				defer func() {
					if recover() == nil {
						t.Errorf("argument %d one short: no panic", a)
					}
				}()
				h.run(args)
			})
		}
	}
}

// BenchmarkRWKVHead runs each RWKV head kernel, a 64-wide head in place,
// at every level this CPU has.
func BenchmarkRWKVHead(b *testing.B) {
	const n = 64
	rng := rand.New(rand.NewPCG(5, 6))
	st, y := randFloats(rng, n*n), make([]float32, n)
	for name, head := range rwkvHeads(rng, n) {
		for _, l := range append([]cpu.Level{cpu.Generic}, levels()...) {
			b.Run(fmt.Sprint(name, "/", l), func(b *testing.B) {
				for b.Loop() {
					head(l, st, st, y)
				}
			})
		}
	}
}
