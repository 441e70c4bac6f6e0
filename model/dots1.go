package model

// dots1Hparams: rednote's dots.llm1 (base and inst) as llama.cpp's dots1
// graph runs it — qwen3's attention (per-head Q/K norms before NEOX RoPE
// over whole heads of one size, as the graph asserts), then after
// leading_dense_block_count dense layers DeepSeek-V3's routing: experts
// chosen by the gating function expert_gating_func (the converter writes
// sigmoid) plus the selection bias exp_probs_b when a layer has it,
// weighted by the unbiased scores, renormalised when expert_weights_norm
// says so and scaled by expert_weights_scale, beside
// expert_shared_count shared experts of the experts' width run as one;
// the expert groups limit the choice when the file has them. Required, as
// llama.cpp requires them: the RMS epsilon, leading_dense_block_count,
// expert_feed_forward_length, expert_shared_count and
// expert_weights_scale; and expert_gating_func, which llama.cpp reads as
// optional but whose absence (its NONE) its graph cannot route.
// Q, K and V each take a bias when the block has one (llama.cpp
// d32676d77 loads a file with them). Its loader sizes attn_k and attn_v
// as the query, so attention.head_count_kv must be head_count (dots.llm1
// has no grouped heads; llama-bench d32676d77 refuses a file with 8 of
// 32). output.weight is required (Arch.UntiedOutput).
func dots1Hparams(c *Config, m *meta) {
	m.wholeHeads(c)
	if m.err == nil && c.HeadsKV != c.Heads {
		m.fail("%s = %d, want %s = %d (llama.cpp's dots1 loader sizes attn_k and attn_v as the query)",
			m.key("attention.head_count_kv"), c.HeadsKV, m.key("attention.head_count"), c.Heads)
	}
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.routing(c, routingKeys{lead: true, scale: true})
}
