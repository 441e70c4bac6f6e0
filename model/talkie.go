package model

// talkieHparams: Talkie 1930 13B as llama.cpp's talkie graph runs it —
// llama's block with every norm an RMSNorm without a weight (the file
// has no attn_norm, ffn_norm or output_norm: Arch.UnitNorms), NEOX RoPE
// over whole heads (llama.cpp asserts it), then each head of Q and K
// RMS-normalised without a weight (QKUnitNorm), each query head
// multiplied by its own gain, attn_q_norm of [1, head_count]
// (QHeadGain); the softmax scaled by 1/sqrt(head size). The token
// embeddings are RMS-normalised before the first block, and every block
// adds them, times its one-float layer_output_scale, after its
// feed-forward (EmbedSkip). The logits are multiplied by logit_scale.
// attention.layer_norm_rms_epsilon and logit_scale are required, as
// llama.cpp requires them; output.weight is required (UntiedOutput), and
// rope_freqs is refused, as llama.cpp loads none. One deliberate
// difference: a logit_scale of 0, which llama.cpp would multiply every
// logit by, is refused.
func talkieHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "logit_scale")
	c.LogitMul = m.finite("logit_scale", 0)
	if m.err == nil && c.LogitMul == 0 {
		m.fail("%s = 0 would make every logit 0", m.key("logit_scale"))
	}
	c.QKUnitNorm, c.QHeadGain, c.EmbedSkip = true, true, true
}
