package model

// hunyuanDenseHparams: Tencent's Hunyuan dense models (0.5B to 7B) as
// llama.cpp's hunyuan-dense graph runs them: NEOX RoPE, then per-head Q
// and K norms (after RoPE, where qwen3 norms before it), SwiGLU. Their
// dynamic-NTK "alpha" scaling is no runtime step: llama.cpp's converter
// writes rope.freq_base as rope_theta·alpha^(d/(d−2)) and scaling type
// none, so the file's base is the scaled one and is read as any other.
func hunyuanDenseHparams(c *Config, m *meta) {
	c.QKNormAfterRope = true
}

// hunyuanMoEHparams: Hunyuan-A13B as llama.cpp's hunyuan-moe graph runs
// it — hunyuan-dense's attention (NEOX RoPE over whole heads of one size,
// as the graph asserts, then the per-head Q/K norms; the alpha-scaled
// base as the converter writes it), then in every block expert_count
// experts as wide as feed_forward_length (llama.cpp sizes ffn_*_exps by
// n_ff; it requires expert_feed_forward_length but sizes nothing by it),
// expert_used_count a token, chosen by a softmax over all of them and
// renormalised over the chosen ones (expert_weights_norm and
// expert_weights_scale are not read), beside one ungated shared expert
// of expert_shared_feed_forward_length (absent or 0: feed_forward_length,
// as llama.cpp d32676d77 sizes it). Q, K and V each take a bias when the
// block has one (llama-bench d32676d77 loads a file with them); the RMS
// epsilon is required.
func hunyuanMoEHparams(c *Config, m *meta) {
	hunyuanDenseHparams(c, m)
	m.wholeHeads(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "expert_feed_forward_length")
	m.ffnWideExperts(c)
	c.ExpertNorm = true
	if c.SharedFFN = m.count("expert_shared_feed_forward_length", maxCount); c.SharedFFN == 0 {
		c.SharedFFN = c.FFN
	}
}
