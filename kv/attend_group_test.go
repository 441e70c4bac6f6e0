package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendGroupBits checks that the kernels serving several query heads
// at once give each head the bits it gets alone, at head sizes the
// multi-row kernels take (and one they do not), with groups of eight query
// heads (two passes of four), rows past every unrolled block, ring wrap in
// a windowed layer, and weights that round to zero.
func TestAttendGroupBits(t *testing.T) {
	const heads, kvHeads, cells, window = 16, 2, 203, 90
	for _, typ := range []Type{F16, Int8, Int4} {
		for _, dim := range []int{24, 64, 128, 36, 136, 160, 96, 192} {
			if typ == Int4 && dim%q4Block != 0 {
				continue // not whole q4_0 blocks
			}
			t.Run(fmt.Sprintf("%v/dim%d", typ, dim), func(t *testing.T) {
				c, err := New(Config{Layers: 2, KVHeads: kvHeads, HeadDimK: dim, HeadDimV: dim, Cells: cells, Type: typ, Windows: []int{0, window}})
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(uint64(dim), 9))
				p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(float64(dim)))}
				alone, grouped := make([]float32, heads*dim), make([]float32, heads*dim)
				for pos := range cells {
					// Large scores make many F16 weights round to zero.
					k, v := randVec(r, kvHeads*dim, 3), randVec(r, kvHeads*dim, 1)
					for l := range 2 {
						if err := c.Store(l, pos, k, v); err != nil {
							t.Fatal(err)
						}
					}
					if pos%13 != 0 && pos < cells-3 {
						continue
					}
					q := randVec(r, heads*dim, 3)
					for l := range 2 {
						n := pos + 1
						if l == 1 {
							n = min(n, window)
						}
						if err := c.Attend(l, pos, q, alone, p, 0, heads, make([]float32, n)); err != nil {
							t.Fatal(err)
						}
						if err := c.Attend(l, pos, q, grouped, p, 0, heads, make([]float32, heads/kvHeads*n)); err != nil {
							t.Fatal(err)
						}
						for i := range alone {
							if math.Float32bits(alone[i]) != math.Float32bits(grouped[i]) {
								t.Fatalf("layer %d pos %d: out[%d] = %v alone, %v grouped", l, pos, i, alone[i], grouped[i])
							}
						}
					}
				}
			})
		}
	}
}

// TestAttendReferenceWide runs the reference comparison at the head size of
// most models, where the 512-bit kernels and their blocking apply.
func TestAttendReferenceWide(t *testing.T) {
	for _, typ := range []Type{F16, Int8, Int4} {
		for _, dim := range []int{128, 256} {
			t.Run(fmt.Sprintf("%v/dim%d", typ, dim), func(t *testing.T) {
				testAttendReference(t, typ, 40, AttnParams{}, 4, 8, 2, dim, dim, 150, 0)
			})
		}
	}
}
