package model

import "math"

// minicpmHparams: MiniCPM (1, 2 and 4) runs llama's layers through
// llama.cpp's granite graph, with Granite's multipliers read optionally
// over MiniCPM's defaults, as llama.cpp's loader sets them before reading
// the file: embedding_scale 12 (scale_emb), residual_scale
// 1.4/sqrt(block_count) (scale_depth over the depth) and logit_scale
// 256/embedding_length. The converter writes logit_scale as
// hidden_size/dim_model_base, which divides the logits; llama.cpp's default
// for a file without it is the inverse ratio, and it is kept here as
// llama.cpp runs it. attention.scale is not read (the softmax is scaled by
// 1/sqrt(head size)), nor rope.scaling.finetuned: MiniCPM always rotates.
// MiniCPM4's LongRoPE factors (rope_factors_long/short) are Arch.RopeFactors'.
func minicpmHparams(c *Config, m *meta) {
	c.EmbedScale = m.finite("embedding_scale", 12)
	c.ResidualScale = m.finite("residual_scale", float32(1.4/math.Sqrt(float64(c.Layers))))
	c.LogitScale = m.logitScale(float32(256 / float64(c.Embd)))
}

// logitScale reads logit_scale (def when absent), which divides the
// logits: finite, and not 0.
func (m *meta) logitScale(def float32) float32 {
	v := m.finite("logit_scale", def)
	if m.err == nil && v == 0 {
		m.fail("%s = 0: the logits are divided by it", m.key("logit_scale"))
	}
	return v
}

// minicpm3Hparams: MiniCPM3 as llama.cpp's minicpm3 graph runs it —
// deepseek2's latent attention in the older form (attn_q_a, its norm and
// attn_q_b; one attn_kv_b; attention.q_lora_rank and kv_lora_rank
// required), NEOX RoPE of the rotated part with LongRoPE's factors, a
// dense SwiGLU — with MiniCPM's multipliers fixed in the graph, no key
// read: the embeddings ×12, each block's attention and feed-forward
// outputs ×1.4/sqrt(block_count), the final norm's output
// ×256/embedding_length before the head. The softmax is scaled by
// 1/sqrt(key_length), the decompressed head's, without deepseek2's mscale.
func minicpm3Hparams(c *Config, m *meta) {
	m.require(true, "attention.q_lora_rank", "attention.kv_lora_rank")
	m.latentAttention(c)
	if m.err == nil && c.QLoraRank == 0 {
		m.fail("%s = 0: minicpm3's query is always through attn_q_a and attn_q_b", m.key("attention.q_lora_rank"))
	}
	if m.err != nil {
		return
	}
	c.EmbedScale = 12
	c.ResidualScale = float32(1.4 / math.Sqrt(float64(c.Layers)))
	c.LogitScale = float32(c.Embd) / 256
	c.KQScale = invSqrt(c.HeadDimKMLA)
}
