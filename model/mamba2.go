package model

// mamba2Hparams: Mamba-2 models (state-spaces/mamba2-*, Mistral's
// Mamba-Codestral-7B) as llama.cpp's mamba graph runs its mamba2 branch:
// every block attn_norm, a Mamba-2 layer (State.mamba2, with the grouped
// norm ssm_norm; the kernel's bias required, as llama.cpp's loader
// requires it) and the residual sum, nothing else (mixersAlone). The sizes
// are mamba2Sizes', all required: llama.cpp's loader takes any inner size
// the heads divide (its converter writes 2 × embedding_length). The
// converter's attention.head_count and feed_forward_length of 0 are not
// read.
func mamba2Hparams(c *Config, m *meta) {
	m.mamba2Sizes(c, false)
	mixersAlone(c, m)
}
