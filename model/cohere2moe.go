package model

// cohere2moeHparams: Cohere's mixture of experts (North Code) as llama.cpp
// d32676d77's cohere2moe loader and graph run it — cohere2's parallel
// block (one norm before attention and the feed-forward, both outputs
// joining the stream, Arch.Parallel) with:
//   - the norm chosen by the file: RMSNorm when
//     attention.layer_norm_rms_epsilon is set, else a LayerNorm without
//     bias of attention.layer_norm_epsilon; both absent is refused, as
//     llama.cpp refuses it. (llama.cpp also takes an RMS epsilon of 0 as
//     "LayerNorm"; this package refuses that 0 as every architecture's.)
//   - windowed layers (attention.sliding_window, required) by
//     attention.sliding_window_pattern (required, as llama-bench
//     d32676d77 requires it), dense first: a period p makes every layer
//     but each p-th from layer 0 windowed, or one flag a layer; only the windowed layers and the leading dense ones
//     are rotated (NORM pairs), the other global layers not
//     (Config.NoRopeGlobal). rope.freq_base_swa is read by llama.cpp and
//     used by no layer, so it is ignored here too.
//   - leading_dense_block_count dense SwiGLU layers (required), the others
//     expert_count experts of expert_feed_forward_length (both required),
//     expert_used_count a token, routed by expert_gating_func (absent or
//     0: sigmoid) without a selection bias, renormalised when
//     expert_weights_norm says so and scaled by expert_weights_scale (0 or
//     absent: unscaled); expert_shared_count shared experts (absent: none)
//     run as one of expert_shared_feed_forward_length (absent or 0: the
//     count × the experts' width), and with them the experts' and the
//     shared experts' sum is halved (Config.SharedSumScale), as the graph
//     does.
//   - logit_scale (required) multiplying the logits; output.weight
//     optional, the embedding in its place; attn_q/k/v.bias (or
//     attn_qkv.bias) each optional, as llama-bench d32676d77 loads a file
//     with attn_q.bias.
//   - nextn_predict_layers NextN blocks after the main stack that no pass
//     runs; their tensors are required only when the first has
//     nextn.eh_proj (a trunk-only file declares them and holds none), as
//     llama.cpp's loader takes them (Arch.NextNOptional).
func cohere2moeHparams(c *Config, m *meta) {
	if !m.has("attention.layer_norm_rms_epsilon") {
		if !m.has("attention.layer_norm_epsilon") {
			m.fail("%s and %s both missing: cohere2moe needs one norm epsilon", m.key("attention.layer_norm_epsilon"), m.key("attention.layer_norm_rms_epsilon"))
			return
		}
		m.layerNormEps(c)
		if m.err == nil && c.NormEps == 0 {
			m.fail("%s = 0 and no %s: cohere2moe needs one norm epsilon", m.key("attention.layer_norm_epsilon"), m.key("attention.layer_norm_rms_epsilon"))
		}
		c.LayerNorm = true
	}
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	if m.err == nil && c.Window == 0 {
		m.fail("%s = 0, want a window above 0", m.key("attention.sliding_window"))
	}
	m.require(true, "logit_scale")
	c.LogitMul = m.finite("logit_scale", 0)
	m.experts(c, false)
	m.denseLead(c, true)
	n := m.count("expert_shared_count", maxExperts)
	width := int64(m.count("expert_shared_feed_forward_length", maxCount))
	if width == 0 {
		width = int64(n) * int64(c.ExpertFFN)
	}
	if m.err == nil && width > maxCount {
		m.fail("%s = %d × a width of %d is wider than %d", m.key("expert_shared_count"), n, c.ExpertFFN, maxCount)
	}
	if m.err == nil && n > 0 {
		c.SharedFFN, c.SharedSumScale = int(width), 0.5
	}
	m.expertWeights(c, false)
	c.ExpertGating = GatingSigmoid
	if v, ok := m.f.Uint(m.key("expert_gating_func")); m.has("expert_gating_func") && !(ok && v == 0) {
		m.gating(c)
	}
	m.nextN(c)
	// Required: llama.cpp's fallback from a period to the array reads the
	// array as required (llama-bench d32676d77 refuses a file without the
	// key), so its period of 4 never applies.
	m.require(true, "attention.sliding_window_pattern")
	m.swaPattern(c)
	if m.err == nil && c.SWALayers == nil {
		// A period counts from a global layer 0 (llama.cpp's
		// set_swa_pattern with dense_first).
		c.SWALayers = denseFirst(c.Layers, c.FullEvery)
		c.FullEvery = 0
	}
	c.NoRopeGlobal = true
}

// denseFirst flags, of n layers, the windowed ones of a period p whose
// first layer is global: all but every p-th from layer 0.
func denseFirst(n, p int) []bool {
	flags := make([]bool, n)
	for il := range flags {
		flags[il] = il%p != 0
	}
	return flags
}
