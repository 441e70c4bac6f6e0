package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendChunked checks a chunked layer against a full one holding the
// same rows: a query at pos sees what the full layer's query sees from
// its chunk's first position on (within 1e-6), the chunks counted from
// the text's first position (From), through the window's ring wrapping.
func TestAttendChunked(t *testing.T) {
	const (
		heads, kvHeads, dim = 4, 2, 8
		chunk, cells        = 4, 19
	)
	for _, from := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("from%d", from), func(t *testing.T) {
			chunked, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: dim, HeadDimV: dim, Cells: cells, Windows: []int{chunk}, Chunked: true})
			if err != nil {
				t.Fatal(err)
			}
			full, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: dim, HeadDimV: dim, Cells: cells})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, uint64(from)))
			row := func(n int) []float32 {
				x := make([]float32, n)
				for i := range x {
					x[i] = r.Float32()*2 - 1
				}
				return x
			}
			q, got, want, scratch := row(heads*dim), make([]float32, heads*dim), make([]float32, heads*dim), make([]float32, cells*heads)
			for pos := range cells {
				k, v := row(kvHeads*dim), row(kvHeads*dim)
				for _, c := range []*Cache{chunked, full} {
					if err := c.Store(0, pos, k, v); err != nil {
						t.Fatal(err)
					}
				}
				if pos < from {
					continue
				}
				p := AttnParams{Heads: heads, Scale: 0.5, From: from}
				if err := chunked.Attend(0, pos, q, got, p, 0, heads, scratch); err != nil {
					t.Fatalf("pos %d: %v", pos, err)
				}
				p.From = pos - (pos-from)%chunk
				if err := full.Attend(0, pos, q, want, p, 0, heads, scratch); err != nil {
					t.Fatal(err)
				}
				// A chunk across the ring's end is read in two runs, which
				// the pure Go kernels sum in another order: the last bits
				// may differ.
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-6 {
						t.Fatalf("pos %d: chunked attention differs from the full layer's over its chunk from %d by %g", pos, p.From, d)
					}
				}
			}
		})
	}
}
