package model

// phimoeHparams: Phi-3.5-MoE as llama.cpp's phimoe loader and graph (its
// phi3 graph's expert branch) run it — phi3's attention (Q, K and V fused
// in attn_qkv or apart, each bias taken when the block has it, as
// create_tensor_qkv takes them; NEOX RoPE over whole heads with LongRoPE's
// factors; the query scaled by 1/sqrt(head size) and the product
// unscaled; any sliding window ignored), attn_output's bias, the
// checkpoint's LayerNorms run as RMSNorms times their weights plus their
// biases (llama.cpp's LLM_NORM_RMS with a bias; the RMS epsilon
// required), then experts as wide as feed_forward_length (llama.cpp sizes
// ffn_*_exps by n_ff), chosen by a softmax over all of them and
// renormalised over the chosen ones (build_moe_ffn's norm_w; the
// checkpoint's sparsemixer is not what llama.cpp runs); output.weight and
// output.bias required.
func phimoeHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	phi3Hparams(c, m)
	m.ffnWideExperts(c)
	c.ExpertNorm = true
}
