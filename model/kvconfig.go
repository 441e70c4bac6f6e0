package model

import "github.com/lowmem/llm/kv"

// KVConfig is the KV cache configuration for a model of this config at
// cells positions: one layer per attention block that keeps keys and
// values (a short-convolution layer keeps none, nor does a Gemma 3n layer
// that shares an earlier layer's), sliding-window layers marked, and
// an Int4 cache's newest positions kept in F16 (kv.DefaultRecent); a
// model without attention (mamba) or whose attention keeps nothing
// (jina-bert-v2: Config.rowsAttention) keeps one placeholder layer. It
// needs no weights, so a memory plan sizes the cache (kv.Bytes) from the
// same configuration a State allocates.
func (c *Config) KVConfig(t kv.Type, cells int) kv.Config {
	k := kv.Config{
		Layers: max(c.KVLayers(), 1), KVHeads: c.HeadsKV, HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV,
		Cells: cells, Type: t,
	}
	if c.rowsAttention() {
		// jina-bert-v2 attends over the pass's own projections and stores
		// nothing: one placeholder layer of one head counts positions.
		k.Layers, k.KVHeads = 1, 1
	}
	if t == kv.Int4 {
		k.Recent = kv.DefaultRecent
	}
	if c.HeadDimSWA > 0 || c.LayerKVHeads != nil {
		// Gemma 4's layers differ in head size and KV heads, mimo2's in
		// KV heads: each keeps its own rather than all padded to the
		// widest.
		k.Geometry = make([]kv.Geometry, k.Layers)
		for kl := range k.Geometry {
			k.Geometry[kl] = c.layerGeometry(c.modelLayer(kl))
		}
	}
	if c.Window > 0 && !c.NonCausal {
		k.Chunked = c.Chunked
		k.Windows = make([]int, k.Layers)
		for kl := range k.Windows {
			if c.WindowedLayer(c.modelLayer(kl)) {
				k.Windows[kl] = c.Window
			}
		}
	}
	return k
}

// layerGeometry is the KV heads and head sizes of layer il's keys and
// values, as its cache layer holds them and the attention stores them:
// the Config's, but a Gemma 4 layer's own kind's head size (values as wide
// as keys) and every layer's own KV heads where they differ.
func (c *Config) layerGeometry(il int) kv.Geometry {
	g := kv.Geometry{KVHeads: c.LayerHeadsKV(il), HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV}
	if c.HeadDimSWA > 0 {
		g.HeadDimK = c.LayerHeadDim(il)
		g.HeadDimV = g.HeadDimK
	}
	return g
}

// StateKVConfig is the configuration of the KV cache NewState(e, o)
// allocates, so a caller can size it (kv.Bytes) first; a memory plan, which
// has no Model, calls it on the file's Config with the options it plans a
// session for, so the plan and the session read o.NoRecent alike.
func (c *Config) StateKVConfig(o StateOptions) kv.Config {
	kc := c.KVConfig(o.Cache, o.Cells)
	kc.Initial = o.Initial
	if c.KVFrom > 0 && len(kc.Windows) > 0 {
		// A windowed layer whose cache a later layer reads keeps a whole
		// pass beside its window: it stores the pass before any of its
		// tokens attend, since the sharing layer attends after it.
		kc.Batch = max(o.Batch, 1)
	}
	if o.NoRecent {
		kc.Recent = 0
	}
	return kc
}
