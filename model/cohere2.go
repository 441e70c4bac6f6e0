package model

// cohere2Hparams: Cohere's Command R7B and Command A as llama.cpp's
// cohere2-iswa graph runs them — three layers of four windowed
// (attention.sliding_window, required) and rotated, the fourth global and
// unrotated (llama.cpp fixes the pattern at 4 and reads no pattern key);
// one LayerNorm of weight without bias (attention.layer_norm_epsilon,
// required) before attention and the feed-forward in parallel; the
// logits multiplied by logit_scale (required; 0 applies none); the output
// matrix the embedding (Arch.TiedHead).
func cohere2Hparams(c *Config, m *meta) {
	c.Window = m.num("attention.sliding_window", maxCount, -1, false)
	c.FullEvery, c.NoRopeEvery = 4, 4
	m.layerNormEps(c)
	c.LayerNorm = true
	if !m.has("logit_scale") {
		m.fail("%s missing", m.key("logit_scale"))
	}
	c.LogitMul = m.finite("logit_scale", 0)
}
