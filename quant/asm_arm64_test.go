//go:build !purego

package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The arm64 kernels keep their pure-Go twins' order of float32 operations
// (as the Go compiler builds the twins for arm64, fused multiply-adds
// included), so they must agree bit for bit, not within a tolerance.

// sameBits reports whether two results are the same float32, any NaN
// matching any NaN.
func sameBits(a, b float32) bool {
	if math.IsNaN(float64(a)) {
		return math.IsNaN(float64(b))
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// armTypes are the weight types with arm64 kernels.
func armTypes() []Type {
	var ts []Type
	seen := map[Type]bool{}
	for _, s := range armSpecs {
		if !seen[s.t] {
			seen[s.t] = true
			ts = append(ts, s.t)
		}
	}
	return ts
}

// TestArmFeatures logs what the CPU offers and, when LLM_ARM64_FEATURES
// names the features the CI's emulated CPU has ("neon", "neon,dotprod",
// "neon,dotprod,i8mm"), checks that golang.org/x/sys/cpu detected exactly
// those, so that no kernel level goes untested unnoticed.
func TestArmFeatures(t *testing.T) {
	have := []string{"neon"}
	if haveDotprod {
		have = append(have, "dotprod")
	}
	if haveI8MM {
		have = append(have, "i8mm")
	}
	got := strings.Join(have, ",")
	var names []string
	for _, typ := range armTypes() {
		var ks []string
		for _, k := range Tiles(typ)[1:] {
			ks = append(ks, fmt.Sprintf("%s %d×%d", k.Name, k.Rows, k.Cols))
		}
		names = append(names, fmt.Sprintf("%v: %s", typ, strings.Join(ks, ", ")))
	}
	t.Logf("arm64 features %s; tiles %s", got, strings.Join(names, "; "))
	if want := os.Getenv("LLM_ARM64_FEATURES"); want != "" && want != got {
		t.Fatalf("detected features %q, the CPU should have %q", got, want)
	}
}

func TestArmKernelsBitExact(t *testing.T) {
	for _, typ := range armTypes() {
		ks := Kernels(typ)
		gen := ks[0].Dot
		vt := typ.VecDotType()
		for _, k := range ks[1:] {
			for _, nb := range []int{1, 2, 3, 7, 16, 33} {
				for trial := 0; trial < 8; trial++ {
					r := newRand(uint64(typ)<<40 | uint64(nb)<<8 | uint64(trial))
					n := nb * typ.BlockElems()
					w := randBlocks(typ, nb, r, kindMixed)
					x := randBlocks(vt, n/vt.BlockElems(), r, kindMixed)
					if trial == 7 {
						// Any bytes at all, -128 quants and NaN scales included.
						for i := range x {
							x[i] = byte(r.Uint32())
						}
					}
					want := gen(n, w, x)
					got := k.Dot(n, unaligned(w, trial), unaligned(x, 7-trial))
					if !sameBits(got, want) {
						t.Errorf("%v/%s, %d blocks, trial %d: got %g (%#08x), generic %g (%#08x)",
							typ, k.Name, nb, trial, got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			}
		}
	}
}

func TestArmTilesBitExact(t *testing.T) {
	for _, typ := range armTypes() {
		for _, k := range Tiles(typ)[1:] {
			for _, nb := range []int{1, 2, 5, 9} {
				for _, rows := range []int{1, 3, 4, 5, 8, 11, 16} {
					for cols := 1; cols <= k.Cols+1; cols++ {
						r := newRand(uint64(typ)<<40 | uint64(nb)<<16 | uint64(rows)<<8 | uint64(cols))
						c := newTileCase(r, typ, nb, rows, cols, r.IntN(8), r.IntN(8), r.IntN(9))
						out := make([]float32, cols*c.outStride)
						k.Tile(c.n, c.w, c.wStride, rows, c.x, c.xStride, cols, out, c.outStride)
						bad := 0
						for ci := 0; ci < cols; ci++ {
							for ri := 0; ri < rows; ri++ {
								got, want := out[ci*c.outStride+ri], c.want[ci*rows+ri]
								if !sameBits(got, want) {
									if bad++; bad <= 3 {
										t.Errorf("%v/%s %d blocks %d×%d: row %d col %d: got %g, generic %g",
											typ, k.Name, nb, rows, cols, ri, ci, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// The assembly must read nothing past the last block: rows end at the end
// of their slices here, and a read past them would fault on the guard page
// no more reliably than a bounds check, so the blocks sit at the end of a
// page-sized buffer.
func TestArmNoOverread(t *testing.T) {
	for _, typ := range armTypes() {
		vt := typ.VecDotType()
		r := rand.New(rand.NewPCG(1, 2))
		nb := 3
		n := nb * typ.BlockElems()
		w := randBlocks(typ, nb, r, kindRandom)
		x := randBlocks(vt, n/vt.BlockElems(), r, kindRandom)
		want := Kernels(typ)[0].Dot(n, w, x)
		for _, k := range Kernels(typ)[1:] {
			if got := k.Dot(n, w[:len(w):len(w)], x[:len(x):len(x)]); !sameBits(got, want) {
				t.Errorf("%v/%s: got %g, want %g", typ, k.Name, got, want)
			}
		}
	}
}
