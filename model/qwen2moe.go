package model

// qwen2moeHparams: Qwen's first mixture-of-experts models
// (Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B) as llama.cpp's qwen2moe graph runs
// them — qwen2's attention (Q, K and V each with its bias when the block
// has it, NEOX RoPE over whole heads, as the graph asserts), then in
// every block the experts chosen by a softmax over all of them and
// weighted by their probabilities as they are (the checkpoints'
// norm_topk_prob is false; llama.cpp neither renormalises them for
// qwen2moe nor reads expert_weights_scale), beside the shared expert
// scaled by the sigmoid of its gate. The RMS epsilon and output.weight
// are required, as llama.cpp's loader requires them.
func qwen2moeHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.wholeHeads(c)
	m.gatedSharedExperts(c)
}
