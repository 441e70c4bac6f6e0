package model

// hunyuanDenseHparams: Tencent's Hunyuan dense models (0.5B to 7B) as
// llama.cpp's hunyuan-dense graph runs them: NEOX RoPE, then per-head Q
// and K norms (after RoPE, where qwen3 norms before it), SwiGLU. Their
// dynamic-NTK "alpha" scaling is no runtime step: llama.cpp's converter
// writes rope.freq_base as rope_theta·alpha^(d/(d−2)) and scaling type
// none, so the file's base is the scaled one and is read as any other.
func hunyuanDenseHparams(c *Config, m *meta) {
	c.QKNormAfterRope = true
}
