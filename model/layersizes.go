package model

import (
	"fmt"
	"slices"
)

// layerSizes reads attention.head_count, attention.head_count_kv and
// feed_forward_length as per-layer arrays where the file holds them
// (c.LayerQHeads, c.LayerKVHeads, c.LayerFFN; the common keys read their
// largest as c.Heads, c.HeadsKV and c.FFN); without head_count_kv each
// layer has as many KV heads as query heads. With zeros, a layer may have
// no attention (0 query heads), attention of attn_output alone (query
// heads but 0 KV heads: deci's "linear attention") or no feed-forward (0
// width); without, every count must be above 0. Each attending layer's
// query heads are a multiple of its KV heads. As llama.cpp sizes heads,
// the default head size (and rotated dimensions, and the scale with
// them) is the width over layer 0's query heads, not the largest's.
func (m *meta) layerSizes(c *Config, zeros bool) {
	q, kv, ffn := m.layerInts("attention.head_count"), m.layerInts("attention.head_count_kv"), m.layerInts("feed_forward_length")
	if m.err != nil {
		return
	}
	if kv == nil && q != nil && !m.has("attention.head_count_kv") {
		// llama.cpp's default: each layer as many KV heads as query heads.
		kv = slices.Clone(q)
	}
	least := 1
	if zeros {
		least = 0
	}
	keeps := 0
	for il := range c.Layers {
		h, hkv, f := pick(q, il, c.Heads), pick(kv, il, c.HeadsKV), pick(ffn, il, c.FFN)
		switch {
		case h < least || hkv < least || f < least:
			m.fail("layer %d has %d query heads, %d KV heads and a feed-forward %d wide (%s, %s, %s), want each at least %d",
				il, h, hkv, f, m.key("attention.head_count"), m.key("attention.head_count_kv"), m.key("feed_forward_length"), least)
		case h == 0 && hkv > 0:
			m.fail("layer %d has %d KV heads (%s) but no query heads (%s)", il, hkv, m.key("attention.head_count_kv"), m.key("attention.head_count"))
		case hkv > 0 && h%hkv != 0:
			m.fail("layer %d's %d query heads are not a multiple of its %d KV heads (%s)", il, h, hkv, m.key("attention.head_count_kv"))
		}
		if hkv > 0 && (f > 0 || !c.DropFFNFree) {
			keeps++
		}
	}
	if m.err == nil && keeps == 0 {
		m.err = fmt.Errorf("model: no layer of this %s model attends (%s): models without a KV cache layer are not supported: %w", c.Arch, m.key("attention.head_count_kv"), ErrUnsupportedArch)
	}
	if m.err != nil {
		return
	}
	c.LayerQHeads, c.LayerKVHeads, c.LayerFFN = q, kv, ffn
	if h0 := c.LayerHeads(0); q != nil && h0 != c.Heads {
		m.layer0HeadSize(c, h0)
	}
}

// pick is xs[i], or def when the key held one value for every layer.
func pick(xs []int, i, def int) int {
	if xs == nil {
		return def
	}
	return xs[i]
}

// attends reports whether layer il has attention of its own as far as
// the per-layer counts say: query heads (Config.LayerQHeads) and KV heads
// (Config.LayerKVHeads) where they are given.
func (c *Config) attends(il int) bool {
	return (c.LayerQHeads == nil || c.LayerQHeads[il] > 0) && (c.LayerKVHeads == nil || c.LayerKVHeads[il] > 0)
}

// attnFree reports whether layer il has no attention at all: 0 query
// heads in Config.LayerQHeads.
func (c *Config) attnFree(il int) bool { return c.LayerQHeads != nil && c.LayerQHeads[il] == 0 }

// outputOnly reports whether layer il's attention is attn_output alone
// over its normalised input: query heads without KV heads (deci's
// "linear attention").
func (c *Config) outputOnly(il int) bool {
	return !c.attnFree(il) && c.LayerKVHeads != nil && c.LayerKVHeads[il] == 0
}

// ffnFree reports whether layer il has no feed-forward: width 0 in
// Config.LayerFFN (nemotron_h's non-feed-forward layers are SingleOp's).
func (c *Config) ffnFree(il int) bool { return !c.SingleOp && c.LayerFFN != nil && c.LayerFFN[il] == 0 }

// droppedLayer reports whether layer il leaves the stream as it was: a
// layer without a feed-forward in a model whose graph drops such a
// layer's output (Config.DropFFNFree).
func (c *Config) droppedLayer(il int) bool { return c.DropFFNFree && c.ffnFree(il) }

// maxGroup is the most query heads a KV head serves in one layer.
func (c *Config) maxGroup() int {
	if c.LayerQHeads == nil && c.LayerKVHeads == nil {
		return c.Heads / max(c.HeadsKV, 1)
	}
	g := 1
	for il := range c.Layers {
		if c.attends(il) && !c.droppedLayer(il) {
			g = max(g, c.LayerHeads(il)/c.LayerHeadsKV(il))
		}
	}
	return g
}
