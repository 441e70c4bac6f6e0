package model

// mistral4Hparams: Mistral Small 4, which llama.cpp d32676d77 runs as
// deepseek2 — its mistral4 model is deepseek2's loader and graph under
// another name (multi-head latent attention, shared experts, the
// converter's experts one ffn_gate_up_exps and ffn_down_exps a layer) —
// and which this package therefore reads with deepseek2Hparams. One
// difference from this package's deepseek2: attention.q_lora_rank is
// required unless the block count is one llama.cpp takes for a "lite"
// model without a query rank (26 or 27 blocks, or 48 with a vocabulary
// of 128256), whose attn_q then serves whatever the key says, as
// llama-bench d32676d77 refuses a 3-block mistral4 file without the key
// (deepseek2 here keeps taking such a file, as it did before mistral4).
// attention.layer_norm_rms_epsilon is required, as deepseek2 requires it.
// attention.temperature_scale, which the Mistral-format converter writes
// for Mistral Large 3 and llama.cpp's graph needs beside
// temperature_length (without it llama-bench d32676d77 aborts), is
// refused as deepseek2 refuses it; the converter of Mistral Small 4's
// Hugging Face checkpoint writes neither.
func mistral4Hparams(c *Config, m *meta) {
	lite := c.Layers == 26 || c.Layers == 27 || c.Layers == 48 && m.vocabSize() == 128256
	m.require(!lite, "attention.q_lora_rank")
	deepseek2Hparams(c, m)
	if lite {
		c.QLoraRank = 0 // llama.cpp does not read the key for these
	}
}
