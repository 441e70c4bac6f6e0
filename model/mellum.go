package model

import "cmp"

// mellumHparams: JetBrains Mellum (Mellum2-12B-A2.5B) as llama.cpp's
// mellum graph runs it — qwen3moe's block (per-head Q/K RMSNorms before
// NEOX RoPE over whole heads, then expert_count experts,
// expert_used_count a token, chosen by a softmax over all of them and
// renormalised; llama.cpp reads neither expert_weights_norm nor
// expert_weights_scale for it) with, when attention.sliding_window is
// above 0, windowed layers as attention.sliding_window_pattern says, a
// period (the last layer of each period global; 0 every layer windowed)
// or one flag a layer. The pattern is required then: llama.cpp's loader
// falls back to a period of 4 only in name, reading the key again as
// required; and it must window some layer, which llama.cpp asserts. The
// windowed layers rotate with rope.freq_base unscaled (no linear factor,
// no YaRN, attention factor 1): llama.cpp reads rope.freq_base_swa for
// mellum but its graph passes them the model's base.
// attention.layer_norm_rms_epsilon and expert_feed_forward_length are
// required, as llama.cpp requires them; an expert width of 0 means
// feed_forward_length / expert_used_count, as llama.cpp sizes it then.
// output.weight is required (UntiedOutput).
func mellumHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "expert_feed_forward_length")
	if m.err != nil || !m.expertCounts(c) {
		return
	}
	c.ExpertFFN = cmp.Or(m.count("expert_feed_forward_length", maxCount), c.defaultExpertFFN())
	c.ExpertNorm = true
	c.Window = m.count("attention.sliding_window", maxCount)
	if m.err != nil || c.Window == 0 {
		return
	}
	m.require(true, "attention.sliding_window_pattern")
	m.swaPattern(c)
	m.windowsSome(c)
	c.RopeScaleSWA = 1
}

// windowsSome fails unless some layer is windowed, as llama.cpp asserts
// of a model whose attention.sliding_window is above 0 (mellum, plamo3).
func (m *meta) windowsSome(c *Config) {
	if m.err == nil && !c.anyWindowed() {
		m.fail("%s windows no layer of %d, with %s = %d", m.key("attention.sliding_window_pattern"), c.Layers, m.key("attention.sliding_window"), c.Window)
	}
}

// maincoderHparams: Maincode's Maincoder as llama.cpp's maincoder graph
// runs it — llama's block with NORM RoPE over whole heads, then per-head
// Q and K RMSNorms (after RoPE, as hunyuan-dense's), SwiGLU; Q, K and V
// fused or apart, their biases optional (create_tensor_qkv), no
// attn_output bias; the output tied to the embedding when the file has
// no output.weight; the RMS epsilon required, as llama.cpp requires it.
func maincoderHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.QKNormAfterRope = true
}
