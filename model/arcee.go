package model

// arceeHparams: Arcee's AFM-4.5B, llama's layers (NORM RoPE, YaRN when
// the file says so, rope_freqs when it has them) whose feed-forward has no
// gate: down(ReLU(up·x)²), as llama.cpp's arcee graph builds it
// (LLM_FFN_RELU_SQR, LLM_FFN_SEQ).
func arceeHparams(c *Config, m *meta) {
	c.ReLU2 = true
}
