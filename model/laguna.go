package model

import (
	"fmt"
	"slices"
)

// lagunaHparams: poolside's Laguna (XS.2, M.1) as llama.cpp's laguna
// graph runs it. afmoe's block without its embedding scale or post norms:
// attn_norm, per-head Q/K norms before NEOX RoPE, the attention's output
// multiplied by the softplus of attn_gate's product with the attention's
// input (one value a head, or one an element: Config.GateSoftplus) before
// attn_output, ffn_norm; leading_dense_block_count dense layers, then
// experts chosen by their sigmoid plus the selection bias exp_probs_b,
// weighted by the unbiased sigmoids renormalised when expert_weights_norm
// says so and scaled by expert_weights_scale, beside one shared expert
// (lagunaShared). attention.head_count may hold one count a layer (XS.2:
// 48 on global layers, 64 on windowed ones; Config.LayerQHeads); the KV
// heads and feed-forward width are one for every layer. With
// attention.sliding_window above 0 (optional; 0 or absent: every layer
// global, M.1) the layers il mod attention.sliding_window_pattern (a
// period, default 4) other than 0 are windowed and rotate
// rope.dimension_count_swa dimensions (default rope.dimension_count) with
// base rope.freq_base_swa (default rope.freq_base), unscaled and without
// YaRN; the global layers with the file's RoPE and its scaling. As
// llama-bench d32676d77 loads files: attention.layer_norm_rms_epsilon,
// leading_dense_block_count and expert_feed_forward_length are required;
// expert_weights_norm (false), expert_weights_scale (0: none),
// expert_gating_func (absent or 0: sigmoid) optional. One head size
// serves keys and values (the graph asserts it); rope_freqs is refused
// (Arch.NoRopeFreqs).
func lagunaHparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.queryHeads(c, false)
	c.GateSoftplus = true
	c.Window = m.count("attention.sliding_window", maxCount)
	if _, ok := m.f.Uint(m.key("attention.sliding_window_pattern")); m.err == nil && !ok && m.has("attention.sliding_window_pattern") {
		// llama.cpp's laguna loader reads a period only: over one flag a
		// layer it keeps its period of 4, whatever the flags say.
		m.err = fmt.Errorf("model: %s is not a period: per-layer window flags are not supported for laguna: %w", m.key("attention.sliding_window_pattern"), ErrUnsupportedArch)
	}
	if m.err == nil && c.Window > 0 {
		m.denseFirst(c, 4)
		c.RopeBaseSWA, c.RopeScaleSWA = m.positive("rope.freq_base_swa", c.RopeBase), 1
		c.RopeDimSWA = m.num("rope.dimension_count_swa", maxHeadDim, c.RopeDim, false)
		if m.err == nil && (c.RopeDimSWA > c.HeadDimK || c.RopeDimSWA%2 != 0) {
			m.fail("%s = %d must be even and at most the head size %d", m.key("rope.dimension_count_swa"), c.RopeDimSWA, c.HeadDimK)
		}
	}
	m.routing(c, routingKeys{lead: true, gating: GatingSigmoid, noneIsDefault: true, ownShared: true})
	m.lagunaShared(c)
}

// lagunaShared reads laguna's always-on shared expert's width:
// expert_shared_feed_forward_length, or when the file lacks it
// expert_shared_count (default 1) experts' widths, as llama.cpp d32676d77
// sizes ffn_*_shexp.
func (m *meta) lagunaShared(c *Config) {
	n := 1
	if m.has("expert_shared_count") {
		n = m.count("expert_shared_count", maxExperts)
	}
	w := int64(n) * int64(c.ExpertFFN)
	if m.has("expert_shared_feed_forward_length") {
		w = int64(m.count("expert_shared_feed_forward_length", maxCount))
	}
	switch {
	case m.err != nil:
	case w == 0 || w > maxCount:
		m.fail("the shared expert's width (%s, or %s × %s) is %d, want 1 to %d", m.key("expert_shared_feed_forward_length"), m.key("expert_shared_count"), m.key("expert_feed_forward_length"), w, maxCount)
	default:
		c.SharedFFN = int(w)
	}
}

// queryHeads reads attention.head_count's per-layer counts into
// c.LayerQHeads when they differ (c.Heads is their largest), each a
// multiple of the layer's KV heads; the feed-forward width, which the
// common keys read as its largest, must be one for every layer, and so
// must the KV heads unless kvPerLayer (mimo2: c.LayerKVHeads read first).
func (m *meta) queryHeads(c *Config, kvPerLayer bool) {
	keys := []string{"attention.head_count_kv", "feed_forward_length"}
	if kvPerLayer {
		keys = keys[1:]
	}
	for _, k := range keys {
		if xs := m.layerInts(k); m.err == nil && xs != nil && slices.Min(xs) != slices.Max(xs) {
			m.err = fmt.Errorf("model: %s differs between layers: %s models with per-layer sizes other than the query heads are not supported: %w", m.key(k), c.Arch, ErrUnsupportedArch)
		}
	}
	heads := m.layerInts("attention.head_count")
	if m.err != nil || heads == nil || slices.Min(heads) == slices.Max(heads) {
		return
	}
	for il, h := range heads {
		if h <= 0 || h%c.LayerHeadsKV(il) != 0 {
			m.fail("%s of layer %d is %d, want a positive multiple of %s = %d", m.key("attention.head_count"), il, h, m.key("attention.head_count_kv"), c.LayerHeadsKV(il))
			return
		}
	}
	c.LayerQHeads = heads
	m.layer0HeadSize(c, heads[0])
}

// layer0HeadSize makes the default head size (and rotated dims, and the
// scale with them) the width over layer 0's h0 query heads, as llama.cpp
// sizes heads, not the largest layer's, where the file states no
// attention.key_length and value_length; and checks the sizes.
func (m *meta) layer0HeadSize(c *Config, h0 int) {
	if !m.has("attention.key_length") || !m.has("attention.value_length") {
		if h0 == 0 || c.Embd%h0 != 0 {
			m.fail("%s = %d is not a multiple of layer 0's %d heads, and %s or %s is not set", m.key("embedding_length"), c.Embd, h0, m.key("attention.key_length"), m.key("attention.value_length"))
			return
		}
		c.HeadDimK = m.num("attention.key_length", maxHeadDim, c.Embd/h0, false)
		c.HeadDimV = m.num("attention.value_length", maxHeadDim, c.Embd/h0, false)
		c.RopeDim = m.num("rope.dimension_count", maxHeadDim, c.HeadDimK, false)
		c.KQScale = invSqrt(c.HeadDimK)
	}
	switch {
	case m.err != nil:
	case c.RopeDim > c.HeadDimK:
		m.fail("%s = %d is more than the head size %d", m.key("rope.dimension_count"), c.RopeDim, c.HeadDimK)
	case int64(c.Heads)*int64(max(c.HeadDimK, c.HeadDimV)) > maxAttnWidth:
		m.fail("%s's largest, %d heads of %d floats, are more than %d", m.key("attention.head_count"), c.Heads, max(c.HeadDimK, c.HeadDimV), maxAttnWidth)
	case int64(c.Layers)*int64(c.HeadsKV)*int64(c.HeadDimK+c.HeadDimV) > maxKVPerToken:
		m.fail("%s = %d layers of %d KV heads of %d floats are more than %d KV elements a token", m.key("block_count"), c.Layers, c.HeadsKV, c.HeadDimK+c.HeadDimV, int64(maxKVPerToken))
	}
}
