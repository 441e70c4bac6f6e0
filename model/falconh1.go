package model

// falconH1Hparams: TII's Falcon-H1 as llama.cpp's falcon-h1 graph runs it.
// Every layer normalises the stream once (attn_norm) and runs on it both
// attention (NEOX RoPE, GQA) and a Mamba-2 mixer whose sizes are
// mamba2Sizes' (ssm.inner_size any multiple of the heads, not 2 ×
// embedding_length), adds both outputs to the stream, then runs a SwiGLU
// feed-forward after ffn_norm. The µP multipliers are not in the file:
// llama.cpp's converter folds them into the weights (embedding, Q/K/V,
// output, ssm_in by its five bands, ssm_out, gate, down, lm_head), and
// its graph applies none.
func falconH1Hparams(c *Config, m *meta) {
	m.mamba2Sizes(c, false)
	c.ConvLayers = make([]bool, c.Layers)
	for il := range c.ConvLayers {
		c.ConvLayers[il] = true
	}
	c.ParallelSSM = true
}
