// Package kv holds the key/value cache of a transformer and computes
// attention over it.
//
// A Cache stores, for every layer, the key and value of each token the
// model has processed, in F16 (the default, numerically like llama.cpp's
// CPU backend), Int8 (symmetric, one scale per token and head, about half
// the memory) or Int4 (llama.cpp's q4_0 blocks behind its Walsh–Hadamard
// rotation, 28% of F16). New allocates Config.Initial cells (all of Config.Cells by
// default) and Grow enlarges the cache layer by layer, so a long context
// costs only what it uses. Cache.Bytes tells what is allocated; the
// functions Bytes and GrowBytes size a cache (or a growth) from its Config
// alone, so a memory plan uses the allocator's own formula. Layers with a
// sliding window keep only a ring of the positions they can still see.
// Shift drops positions to continue past a full context, and WriteTo and
// ReadFrom save and restore the stored rows.
//
// Per token and layer, the model stores the token's key and value and then
// lets each query head attend:
//
//	c, err := kv.New(kv.Config{Layers: 32, KVHeads: 8, HeadDimK: 128, HeadDimV: 128, Cells: 4096})
//	if err != nil { ... }
//	p := kv.AttnParams{Heads: 32, Scale: 1 / float32(math.Sqrt(128))}
//	for layer := range 32 {
//		// q, k, v come from the layer's projections after RoPE.
//		if err := c.Store(layer, pos, k, v); err != nil { ... } // errors.Is(err, kv.ErrFull) when the context is full
//		if err := c.Attend(layer, pos, q, out, p, 0, 32, scratch); err != nil { ... }
//	}
//
// Store and Attend never allocate; scratch is the caller's (pos+1 floats
// suffice), so threads can split the heads of one Attend between them.
package kv
