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
// says so and scaled by expert_weights_scale, beside one shared expert of
// expert_shared_feed_forward_length. attention.head_count may hold one
// count a layer (XS.2: 48 on global layers, 64 on windowed ones;
// Config.LayerQHeads); the KV heads and feed-forward width are one for
// every layer. With attention.sliding_window above 0 (optional; 0 or
// absent: every layer global, M.1) the layers il mod
// attention.sliding_window_pattern (default 4) other than 0 are windowed
// and rotate rope.dimension_count_swa dimensions (default
// rope.dimension_count) with base rope.freq_base_swa (default
// rope.freq_base), unscaled and without YaRN; the global layers with the
// file's RoPE and its scaling. Required, as llama.cpp requires them:
// attention.layer_norm_rms_epsilon, leading_dense_block_count,
// expert_feed_forward_length, expert_weights_scale, expert_weights_norm
// and expert_shared_feed_forward_length; expert_gating_func is optional,
// absent or 0 (none) meaning sigmoid; expert_shared_count is optional and
// unused (one shared expert always runs). One head size serves keys and
// values (the graph asserts it).
func lagunaHparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "expert_weights_norm", "expert_shared_feed_forward_length")
	m.queryHeads(c)
	c.GateSoftplus = true
	c.Window = m.count("attention.sliding_window", maxCount)
	if m.err == nil && c.Window > 0 {
		m.denseFirst(c, 4)
		c.RopeBaseSWA, c.RopeScaleSWA = m.positive("rope.freq_base_swa", c.RopeBase), 1
		c.RopeDimSWA = m.num("rope.dimension_count_swa", maxHeadDim, c.RopeDim, false)
		if m.err == nil && (c.RopeDimSWA > c.HeadDimK || c.RopeDimSWA%2 != 0) {
			m.fail("%s = %d must be even and at most the head size %d", m.key("rope.dimension_count_swa"), c.RopeDimSWA, c.HeadDimK)
		}
	}
	width := m.count("expert_shared_feed_forward_length", maxCount)
	m.routing(c, routingKeys{lead: true, scale: true, gating: GatingSigmoid, noneIsDefault: true, sharedWidth: width, oneShared: true})
	if m.err == nil && width == 0 {
		m.fail("%s = 0, want the shared expert's width", m.key("expert_shared_feed_forward_length"))
	}
}

// queryHeads reads attention.head_count's per-layer counts into
// c.LayerQHeads when they differ (c.Heads is their largest), each a
// multiple of the KV heads; the KV heads and the feed-forward width,
// which the common keys read as their largest, must be one for every
// layer.
func (m *meta) queryHeads(c *Config) {
	for _, k := range []string{"attention.head_count_kv", "feed_forward_length"} {
		if xs := m.layerInts(k); m.err == nil && xs != nil && slices.Min(xs) != slices.Max(xs) {
			m.err = fmt.Errorf("model: %s differs between layers: %s models with per-layer sizes other than the query heads are not supported: %w", m.key(k), c.Arch, ErrUnsupportedArch)
		}
	}
	heads := m.layerInts("attention.head_count")
	if m.err != nil || heads == nil || slices.Min(heads) == slices.Max(heads) {
		return
	}
	for il, h := range heads {
		if h <= 0 || h%c.HeadsKV != 0 {
			m.fail("%s of layer %d is %d, want a positive multiple of %s = %d", m.key("attention.head_count"), il, h, m.key("attention.head_count_kv"), c.HeadsKV)
			return
		}
	}
	c.LayerQHeads = heads
}
