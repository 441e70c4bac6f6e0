package model

// bailingmoeHparams: Ling-lite and Ling-plus (Ling 1.0) as llama.cpp
// d32676d77's bailingmoe loader and graph run them — llama's block (NORM
// RoPE over whole heads: the loader sizes the query by
// rope.dimension_count, so it must be the head size; one head size for
// keys and values; optional Q/K/V biases, as create_tensor_qkv takes
// them) whose every feed-forward is expert_count experts of
// expert_feed_forward_length (required), expert_used_count a token,
// chosen and weighted by the softmax of the router's logits,
// renormalised when expert_weights_norm says so and scaled by
// expert_weights_scale (0 or absent: unscaled), beside
// expert_shared_count (required) shared experts of the experts' width run
// as one; the RMS epsilon and output.weight required.
// leading_dense_block_count is read by llama.cpp and used by nothing (its
// loader puts experts in every layer), so it is ignored here.
func bailingmoeHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.wholeHeads(c)
	m.experts(c, false)
	m.sharedExperts(c, c.ExpertFFN, false)
	m.expertWeights(c, false)
	c.ExpertGating = GatingSoftmax // the graph's, whatever the file says
}
