package model

// minimaxM2Hparams: MiniMax-M2 and M2.1 (230B-A10B) as llama.cpp's
// minimax-m2 graph runs them — llama's pre-norms; Q, K and V fused or
// apart (create_tensor_qkv) without biases; each of Q and K RMS-normalised
// across all its heads at once (attn_q_norm as wide as the query,
// attn_k_norm as the keys: QKNormFull), then NEOX RoPE over the first
// rope.dimension_count dims of each head (64 of 128 in the released
// files); in every block expert_count experts as wide as
// feed_forward_length (llama.cpp sizes ffn_*_exps by n_ff, though its
// loader requires expert_feed_forward_length too), expert_used_count a
// token, chosen by their gating function (expert_gating_func: sigmoid
// in the released files; required here, since llama.cpp's graph aborts
// without one) plus the selection bias exp_probs_b (required), weighted
// by the unbiased probabilities renormalised to sum to 1 and never
// scaled (llama.cpp reads no expert_weights_scale for it); no shared
// expert; output.weight required. One head size serves keys and values,
// as the graph asserts.
func minimaxM2Hparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "expert_feed_forward_length")
	c.QKNormFull = true
	m.ffnWideExperts(c)
	m.gating(c)
	c.ExpertNorm = true
}
