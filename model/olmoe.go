package model

// olmoeHparams: OLMoE as llama.cpp's olmoe graph runs it — llama's
// pre-norms (attn_norm, ffn_norm; none after), OLMo 2's Q and K norms
// across all heads at once before NEOX RoPE, and experts: softmax over
// expert_count, the top expert_used_count (at least 1, as llama.cpp
// requires) weighted by their probabilities as they are (not
// renormalised), no shared expert; output.weight required.
func olmoeHparams(c *Config, m *meta) {
	c.QKNormFull = true
	m.ffnWideExperts(c)
	if m.err == nil && c.ExpertsUsed == 0 {
		m.fail("%s = 0: llama.cpp's olmoe needs at least one expert a token", m.key("expert_used_count"))
	}
}

// ffnWideExperts reads expert_count and expert_used_count, the experts
// each as wide as feed_forward_length (required), whatever
// expert_feed_forward_length says: llama.cpp sizes granitemoe's and
// olmoe's experts by n_ff.
func (m *meta) ffnWideExperts(c *Config) {
	m.experts(c, true)
	if m.err == nil && c.FFN == 0 {
		m.fail("%s missing (llama.cpp sizes the experts by it)", m.key("feed_forward_length"))
	}
	c.ExpertFFN = c.FFN
}
