// Package expertcache holds the experts of a mixture-of-experts model
// (qwen3moe) that are used most, in a memory budget, and reads the others
// from the model file when a forward pass needs them: a 30B-parameter
// model whose experts are 17 GB runs with its non-expert weights mapped
// and a few GB of experts cached.
//
// A Cache is a model.ExpertSource. It is sized by a byte budget (Size
// tells the memory plan exactly what a budget buys: slots, bytes); each
// block's Fetch starts every missing read at once, on several readers,
// with O_DIRECT into slots allocated up front, so the page cache does not
// grow and nothing is allocated per token. Eviction is LFU with aging by
// default (LRU on request); Stats reports hit rate, bytes read and time
// spent waiting.
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
