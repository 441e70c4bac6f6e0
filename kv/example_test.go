package kv_test

import (
	"fmt"

	"github.com/lowmem/llm/kv"
)

// Two query heads share one KV head. The second token's key matches the
// first head's query far better than the first token's key does, so head 0
// takes almost all of its output from the second value; head 1's query is
// orthogonal to both keys and averages the two values.
func Example() {
	c, err := kv.New(kv.Config{Layers: 1, KVHeads: 1, HeadDimK: 2, HeadDimV: 2, Cells: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	tokens := []struct{ k, v []float32 }{
		{k: []float32{0, 0}, v: []float32{1, 0}},
		{k: []float32{8, 0}, v: []float32{0, 1}},
	}
	p := kv.AttnParams{Heads: 2, Scale: 1}
	q := []float32{1, 0, 0, 1} // head 0, head 1
	out := make([]float32, 4)
	scratch := make([]float32, c.Cells())
	for pos, t := range tokens {
		if err := c.Store(0, pos, t.k, t.v); err != nil {
			fmt.Println(err)
			return
		}
		if err := c.Attend(0, pos, q, out, p, 0, 2, scratch); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("pos %d: head 0 %.4f, head 1 %.4f\n", pos, out[:2], out[2:])
	}
	fmt.Println(c.Bytes(), "bytes")
	// Output:
	// pos 0: head 0 [1.0000 0.0000], head 1 [1.0000 0.0000]
	// pos 1: head 0 [0.0003 0.9995], head 1 [0.5000 0.5000]
	// 64 bytes
}
