package model

import "github.com/lowmem/llm/kv"

// KVConfig is the KV cache configuration for a model of this config at
// cells positions: one layer per block, sliding-window layers marked, and
// an Int4 cache's newest positions kept in F16 (kv.DefaultRecent). It
// needs no weights, so a memory plan sizes the cache (kv.Bytes) from the
// same configuration a State allocates.
func (c *Config) KVConfig(t kv.Type, cells int) kv.Config {
	k := kv.Config{
		Layers: c.Layers, KVHeads: c.HeadsKV, HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV,
		Cells: cells, Type: t,
	}
	if t == kv.Int4 {
		k.Recent = kv.DefaultRecent
	}
	if c.Window > 0 {
		k.Windows = make([]int, c.Layers)
		for il := range k.Windows {
			if c.WindowedLayer(il) {
				k.Windows[il] = c.Window
			}
		}
	}
	return k
}
