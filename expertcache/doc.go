// Package expertcache holds the experts of a mixture-of-experts model
// (qwen3moe) that are used most, in a memory budget, and reads the others
// from the model file when a forward pass needs them: a 30B-parameter
// model whose experts are 17 GB runs with its non-expert weights mapped
// and a few GB of experts cached.
//
// A Cache is a model.ExpertSource. Size tells the memory plan exactly
// what a budget buys (slots, bytes) from the tensor table alone
// (FileLayout), before anything is loaded; New allocates all of it. Each
// block's Fetch starts every missing read at once, on several readers,
// with O_DIRECT straight into the slots, so the reads overlap each other
// and the computation of the experts already cached, the page cache does
// not grow, and nothing is allocated per token. Stats reports hit rate,
// bytes read and time spent waiting.
//
// The default eviction policy, LFU, is W-TinyLFU: a recency window sized
// from the miss rate in front of a frequency-ranked main part. On routing
// traces (the synthetic models' and modelled Zipf routing in the
// qwen3-30b-a3b shape, see sim_test.go) it is never much worse than LRU
// and far better when the cache is smaller than what the routing keeps
// coming back to, where LRU evicts every expert just before its reuse.
// Prefetch takes hints of a block's experts ahead of its Fetch; reading
// the previous token's experts ahead is not worth it (a cache that holds
// one token's experts already has them).
//
//	c, err := expertcache.New(m, "qwen3-30b-a3b-q4_k_m.gguf", 3<<30)
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	m.ExpertSource = c // before any forward pass
//	...
//	st := c.Stats()
//	log.Printf("hit rate %.2f, %d MB read", st.HitRate(), st.BytesRead>>20)
package expertcache
