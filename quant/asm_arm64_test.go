//go:build !purego

package quant

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
	"github.com/lowmem/llm/internal/floatbits"
)

// The arm64 kernels keep their pure-Go twins' order of float32 operations
// (as the Go compiler builds the twins for arm64, fused multiply-adds
// included), so they must agree bit for bit, not within a tolerance.

// armTypes are the weight types with arm64 kernels.
func armTypes() []Type {
	var ts []Type
	seen := map[Type]bool{}
	for _, v := range dotVariants {
		if !seen[v.t] {
			seen[v.t] = true
			ts = append(ts, v.t)
		}
	}
	return ts
}

// TestArmFeatures logs the level golang.org/x/sys/cpu detected, the level
// in use (LLM_CPU caps it) and the tiles that run, and, when
// LLM_ARM64_FEATURES names the features the CI's emulated CPU has ("neon",
// "neon,dotprod", "neon,dotprod,i8mm"), checks that the detected level is
// exactly that, so that no kernel level goes untested unnoticed.
func TestArmFeatures(t *testing.T) {
	var have []string
	for _, l := range []cpu.Level{cpu.NEON, cpu.DotProd, cpu.I8MM} {
		if l <= cpu.Detected() {
			have = append(have, l.String())
		}
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
	t.Logf("arm64 features %s; level in use %v; tiles %s", got, cpu.Max(), strings.Join(names, "; "))
	if want := os.Getenv("LLM_ARM64_FEATURES"); want != "" && want != got {
		t.Fatalf("detected features %q, the CPU should have %q", got, want)
	}
}

func TestArmKernelsBitExact(t *testing.T) {
	for _, typ := range armTypes() {
		ks := Kernels(typ)
		gen := ks[0].Dot
		vt := typ.VecDotType()
		nbs := []int{1, 2, 3, 7, 16, 33}
		if typ.BlockElems() == 1 {
			nbs = []int{1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 33, 64, 100}
		}
		for _, k := range ks[1:] {
			for _, nb := range nbs {
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
					if !floatbits.Same(got, want) {
						t.Errorf("%v/%s, %d blocks, trial %d: got %g (%#08x), generic %g (%#08x)",
							typ, k.Name, nb, trial, got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			}
		}
	}
}

// TestArmTilesBitExact runs every arm64 tile on tiles of every shape the
// kernels split differently (whole 4-row tiles, leftover rows, whole and
// leftover column groups), with rows and columns at odd offsets and gaps,
// against the generic dot product one output at a time.
func TestArmTilesBitExact(t *testing.T) {
	rowCounts := []int{1, 3, 4, 5, 8, 11, 16}
	for _, typ := range armTypes() {
		vt := typ.VecDotType()
		gen := Kernels(typ)[0].Dot
		nbs := []int{1, 2, 5}
		if typ.BlockElems() == 1 {
			nbs = []int{1, 4, 7, 8, 64}
		}
		for _, k := range Tiles(typ)[1:] {
			for _, nb := range nbs {
				for _, rows := range rowCounts {
					for cols := 1; cols <= k.Cols+1; cols++ {
						r := newRand(uint64(typ)<<40 | uint64(nb)<<16 | uint64(rows)<<8 | uint64(cols))
						n := nb * typ.BlockElems()
						rb, xb := nb*typ.BlockBytes(), n/vt.BlockElems()*vt.BlockBytes()
						wStride, xStride, outStride := rb+r.IntN(9), xb+r.IntN(9), rows+r.IntN(4)
						w := make([]byte, (rows-1)*wStride+rb)
						x := make([]byte, (cols-1)*xStride+xb)
						for i := 0; i < rows; i++ {
							copy(w[i*wStride:], randBlocks(typ, nb, r, kindMixed))
						}
						for i := 0; i < cols; i++ {
							copy(x[i*xStride:], randBlocks(vt, n/vt.BlockElems(), r, kindMixed))
						}
						w, x = unaligned(w, r.IntN(8))[:len(w)], unaligned(x, r.IntN(8))[:len(x)]
						out := make([]float32, (cols-1)*outStride+rows)
						k.Tile(n, w, wStride, rows, x, xStride, cols, out, outStride)
						for ci := 0; ci < cols; ci++ {
							for ri := 0; ri < rows; ri++ {
								want := gen(n, w[ri*wStride:ri*wStride+rb], x[ci*xStride:ci*xStride+xb])
								if got := out[ci*outStride+ri]; !floatbits.Same(got, want) {
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
			if got := k.Dot(n, w[:len(w):len(w)], x[:len(x):len(x)]); !floatbits.Same(got, want) {
				t.Errorf("%v/%s: got %g, want %g", typ, k.Name, got, want)
			}
		}
	}
}

// TestArmQuantizeBytes checks the NEON encoders of the activation types
// byte for byte against the Go ones.
func TestArmQuantizeBytes(t *testing.T) {
	for _, tc := range []struct {
		typ      Type
		asm, ref func(dst []byte, src []float32)
	}{
		{Q8_0, quantizeQ8_0, quantQ8_0},
		{Q8_K, quantizeQ8_K, quantQ8_K},
	} {
		n := 4 * QKK
		bb := n / tc.typ.BlockElems() * tc.typ.BlockBytes()
		for i, row := range quantInputs(n) {
			want := make([]byte, bb)
			tc.ref(want, row)
			got := make([]byte, bb+1)
			got[bb] = 0xa5
			tc.asm(got[:bb], row)
			if !bytes.Equal(got[:bb], want) {
				for j := range want {
					if got[j] != want[j] {
						t.Errorf("%v row %d: byte %d (block %d) is %#02x, Go writes %#02x", tc.typ, i, j, j/tc.typ.BlockBytes(), got[j], want[j])
						break
					}
				}
			}
			if got[bb] != 0xa5 {
				t.Errorf("%v row %d: wrote past the end", tc.typ, i)
			}
		}
	}
}
