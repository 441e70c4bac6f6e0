package model

// cohereHparams: what Cohere's architectures share as llama.cpp's
// command-r and cohere2 graphs run them — one LayerNorm of weight without
// bias (attention.layer_norm_epsilon, required) before attention and the
// feed-forward in parallel (Arch.Parallel); the logits multiplied by
// logit_scale (required; 0 applies none); the output matrix the embedding
// (Arch.TiedHead).
func cohereHparams(c *Config, m *meta) {
	m.layerNormEps(c)
	c.LayerNorm = true
	if !m.has("logit_scale") {
		m.fail("%s missing", m.key("logit_scale"))
	}
	c.LogitMul = m.finite("logit_scale", 0)
}

// cohere2Hparams: Cohere's Command R7B and Command A as llama.cpp's
// cohere2-iswa graph runs them — Cohere's block (cohereHparams) in three
// layers of four windowed (attention.sliding_window, required) and
// rotated, the fourth global and unrotated (llama.cpp fixes the pattern at
// 4 and reads no pattern key).
func cohere2Hparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	c.FullEvery, c.NoRopeEvery = 4, 4
	cohereHparams(c, m)
}

// commandRHparams: Command R (c4ai-command-r-v01 35B, Aya 23, Aya
// Expanse) and Command R+ as llama.cpp's command-r graph runs them —
// Cohere's block (cohereHparams) with NORM RoPE in every layer and no
// window. A model of 64 blocks or more (Command R+, Arch.QKNormDepth)
// has per-head Q/K LayerNorms without bias before RoPE, a weight row a
// head (QKLayerNorm). llama.cpp's loader sizes attn_q and attn_output
// [n_embd, n_embd], so the query must be as wide as the embedding.
func commandRHparams(c *Config, m *meta) {
	cohereHparams(c, m)
	m.embdWideQuery(c, "llama.cpp's command-r loader sizes attn_q and attn_output")
	c.QKLayerNorm = c.QKNorm
}
