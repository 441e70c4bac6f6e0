package model

// exaoneMoEHparams: LG's K-EXAONE (236B-A23B; exaone-moe) as llama.cpp's
// exaone-moe graph runs it. Unlike exaone4's, its blocks are pre-norm
// (attn_norm, ffn_norm; no norms after); per-head Q/K RMSNorms; Q, K and
// V fused or apart, each bias optional (create_tensor_qkv, applied by
// build_qkv); three layers of every four windowed
// (attention.sliding_window, required and above 0) and NEOX-rotated over
// whole heads (rope_freqs' factors when the file has them), the fourth
// global and unrotated (NoPE); attention.sliding_window_pattern, a
// period, moves the global layer (0: every layer windowed; 1, no layer
// windowed, is refused: llama.cpp d32676d77 aborts on it). The first
// leading_dense_block_count feed-forwards (absent: 0) are dense, of
// feed_forward_length; the others expert_count experts of
// expert_feed_forward_length, expert_used_count a token, chosen by
// expert_gating_func plus the selection bias exp_probs_b when a block
// has it, weighted by the unbiased probabilities renormalised when
// expert_weights_norm says so and scaled by expert_weights_scale (absent
// or 0: not scaled), beside one shared expert of
// expert_shared_feed_forward_length (default the experts' width; llama.cpp
// reads no expert_shared_count for it). The RMS epsilon, the experts'
// counts and width and the gating function are required, as llama.cpp
// requires them; nextn_predict_layers NextN blocks close the stack
// unrun, each with a dense feed-forward, as llama.cpp's loader asks of
// them.
func exaoneMoEHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	if m.err == nil && c.Window == 0 {
		m.fail("%s = 0, want a window of at least one position", m.key("attention.sliding_window"))
	}
	k := m.key("attention.sliding_window_pattern")
	if raw, ok := m.f.Get(k); ok && m.err == nil {
		if _, period := m.f.Uint(k); !period {
			// llama.cpp reads a period alone and passes over anything
			// else, which a file means as something else.
			m.fail("%s is %s, want a period of layers", k, describe(raw))
		}
	}
	c.FullEvery = 4
	m.swaPattern(c)
	switch {
	case m.err != nil:
	case c.SWALayers == nil && c.FullEvery == 1:
		m.fail("%s = 1 leaves no layer windowed, which llama.cpp's exaone-moe graph cannot run", k)
	case c.SWALayers == nil:
		c.NoRopeEvery = c.FullEvery
	}
	m.experts(c, false)
	m.denseLead(c, false)
	m.expertWeights(c, false)
	m.gating(c)
	c.SharedFFN = m.num("expert_shared_feed_forward_length", maxCount, c.ExpertFFN, false)
	m.nextN(c)
	if m.err == nil && c.NextN > 0 {
		// Experts in the blocks that run, a dense feed-forward in the
		// NextN blocks after them.
		c.MoELayers = make([]bool, c.Layers)
		for il := range c.MoELayers {
			c.MoELayers[il] = il >= c.DenseLead
		}
	}
}
