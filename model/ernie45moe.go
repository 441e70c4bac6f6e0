package model

import "fmt"

// ernie45moeHparams: ERNIE 4.5's mixture-of-experts models (21B-A3B,
// 300B-A47B) as llama.cpp's ernie4_5-moe graph runs them — ernie4_5's
// attention, then after leading_dense_block_count dense layers
// (feed_forward_length wide) expert_count experts of
// expert_feed_forward_length, expert_used_count a token, chosen by the
// router's softmax plus the selection bias exp_probs_b when a layer has
// it (the checkpoint's e_score_correction_bias), weighted by the unbiased
// probabilities renormalised to sum to 1, beside a shared expert of
// expert_shared_feed_forward_length when that is set. All but the shared
// width are required, as llama.cpp requires them, and so is
// interleave_moe_layer_step: llama.cpp's loader gives every layer from
// the lead on experts while its graph runs only every step-th one
// through them, so only a step of 1 (every released model's) runs as
// the file means it. The graph asserts one head size for keys and values
// and the whole head rotated: a file otherwise is refused.
func ernie45moeHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	m.experts(c, false)
	m.denseLead(c, true)
	c.SharedFFN = m.num("expert_shared_feed_forward_length", maxCount, 0, false)
	step := m.num("interleave_moe_layer_step", maxCount, -1, false)
	if m.err == nil && step != 1 {
		m.err = fmt.Errorf("model: %s = %d: experts on every %d-th layer only are not supported (llama.cpp's loader and graph disagree on them; 1 is every layer): %w",
			m.key("interleave_moe_layer_step"), step, step, ErrUnsupportedArch)
	}
	c.ExpertGating = GatingSoftmax
	c.ExpertNorm = true
}

// wholeHeads fails unless the values' head size is the keys' and RoPE
// rotates whole heads: what llama.cpp's graph asserts for ernie4_5-moe,
// smallthinker, qwen2moe and falcon.
func (m *meta) wholeHeads(c *Config) {
	m.sameHeadSizes(c)
	if m.err == nil && c.RopeDim != c.HeadDimK {
		m.fail("%s = %d, want the head size %d (%s rotates whole heads)", m.key("rope.dimension_count"), c.RopeDim, c.HeadDimK, c.Arch)
	}
}

// sameHeadSizes fails unless the values' head size is the keys', as
// llama.cpp's graphs assert for glm4moe, afmoe, bloom, mpt and the
// wholeHeads ones.
func (m *meta) sameHeadSizes(c *Config) {
	if m.err == nil && c.HeadDimV != c.HeadDimK {
		m.fail("%s = %d differs from %s = %d", m.key("attention.value_length"), c.HeadDimV, m.key("attention.key_length"), c.HeadDimK)
	}
}
