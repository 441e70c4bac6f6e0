package model

import (
	"fmt"
	"slices"
)

// mimo2Hparams: Xiaomi's MiMo-V2-Flash as llama.cpp d32676d77's mimo2
// loader and graph run it. attn_norm; Q, K and V (fused attn_qkv or
// separate) with keys of attention.key_length and values of
// attention.value_length a head, NEOX RoPE of rope.dimension_count
// dimensions on Q and K without norms; attention at 1/sqrt(key length)
// with the layer's attn_sinks when the block has them (MiMo-V2-Flash's
// windowed layers do, its global ones not); attn_output, then the output
// multiplied by attention.value_scale when the file states one other than
// 0 or 1 (Config.AttnOutScale; applied here to the heads' output before
// attn_output, the same product as llama.cpp's after it, attn_output having
// no bias); ffn_norm; a block with ffn_gate_inp runs experts chosen by
// their sigmoid plus the optional selection bias exp_probs_b, weighted by
// the unbiased sigmoids renormalised and never scaled (the graph passes
// expert_weights_scale, which its loader never reads: 0, none), any other
// block a dense SwiGLU of feed_forward_length. attention.head_count and
// attention.head_count_kv may hold one count a layer (MiMo-V2-Flash: 4 KV
// heads on its global layers, 8 on its windowed ones; Config.LayerKVHeads).
// Required, as llama.cpp requires them: attention.layer_norm_rms_epsilon,
// expert_feed_forward_length, attention.sliding_window (above 0) and
// attention.sliding_window_pattern, one flag a layer or one integer for
// all (windowFlags; windowed layers rotate with rope.freq_base_swa,
// default rope.freq_base); nextn_predict_layers (optional) takes its
// blocks off the ones run. Deliberately unlike llama.cpp, which loads and
// runs such files: a window of 0 (every position masked on the windowed
// layers) is refused, and so is a block with neither ffn_gate_inp nor the
// dense ffn_gate, ffn_up and ffn_down (llama.cpp's build_ffn would then
// run on missing weights).
// rope_freqs is refused (Arch.NoRopeFreqs): the graph passes no factors.
func mimo2Hparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.windowFlags(c) // of every block: llama.cpp reads them before the NextN count
	m.nextN(c)
	m.layerKVHeads(c)
	m.queryHeads(c, true)
	m.experts(c, false)
	c.ExpertGating, c.ExpertNorm = GatingSigmoid, true
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	if m.err == nil && c.Window == 0 {
		m.fail("%s = 0, want a window of at least 1 position", m.key("attention.sliding_window"))
	}
	c.RopeBaseSWA = m.positive("rope.freq_base_swa", c.RopeBase)
	if s := m.finite("attention.value_scale", 0); m.err == nil && s != 1 {
		c.AttnOutScale = s
	}
	if m.err != nil {
		return
	}
	c.MoELayers = make([]bool, c.Layers)
	for il := range c.MoELayers {
		_, c.MoELayers[il] = m.f.Tensor(fmt.Sprintf("blk.%d.ffn_gate_inp.weight", il))
	}
}

// layerKVHeads reads attention.head_count_kv's per-layer counts into
// c.LayerKVHeads when they differ (c.HeadsKV is their largest), each a
// divisor of the layer's query heads: a layer of fewer keeps them in its own cache layer (KVConfig's
// Geometry).
func (m *meta) layerKVHeads(c *Config) {
	xs := m.layerInts("attention.head_count_kv")
	if m.err != nil || xs == nil || slices.Min(xs) == slices.Max(xs) {
		return
	}
	qs := m.layerInts("attention.head_count")
	for il, h := range xs {
		q := c.Heads
		if qs != nil {
			q = qs[il]
		}
		if h <= 0 || q%h != 0 {
			m.fail("%s of layer %d is %d, want a divisor of its %d query heads", m.key("attention.head_count_kv"), il, h, q)
			return
		}
	}
	c.LayerKVHeads = xs
}

// windowFlags reads attention.sliding_window_pattern (required) as
// llama.cpp's get_key_or_arr fills its per-layer flags: one integer or
// bool a layer (set: windowed), block_count of them, NextN blocks
// included; or one integer, every layer's (non-zero: every layer
// windowed), not a period as other architectures read it.
func (m *meta) windowFlags(c *Config) {
	k := "attention.sliding_window_pattern"
	raw, present := m.f.Get(m.key(k))
	switch {
	case m.err != nil:
		return
	case !present:
		m.fail("%s missing", m.key(k))
		return
	}
	if v, ok := m.f.Uint(m.key(k)); ok {
		c.SWALayers = make([]bool, c.Layers)
		for il := range c.SWALayers {
			c.SWALayers[il] = v != 0
		}
		return
	}
	if flags, ok := m.blockFlags(c, k, raw, "an integer or one flag per layer"); ok {
		c.SWALayers = append([]bool(nil), flags...)
	}
}
