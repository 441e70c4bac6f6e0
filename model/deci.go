package model

// deciHparams: NVIDIA's Llama-Nemotron models (Llama-3_1-Nemotron-51B,
// Llama-3.3-Nemotron-Super-49B, Llama-3_1-Nemotron-Ultra-253B, DeciLM)
// as llama.cpp's deci loader and graph run them: llama's block, but
// attention.head_count, attention.head_count_kv and feed_forward_length
// may hold one value a layer (Config.LayerQHeads, LayerKVHeads,
// LayerFFN; layerSizes). A layer of 0 query heads has no attention (nor
// attn_norm): the feed-forward reads the stream. A layer of query heads
// but 0 KV heads adds attn_output's product with its attn_norm's output
// (no bias; attn_output is Embd × Embd). A layer of feed-forward width 0
// leaves the stream as it was: llama.cpp's graph goes on to the next
// layer without taking its output (Config.DropFFNFree), so this package
// skips it, and keeps no keys or values for it, which nothing would read.
// attn_q/k/v/output.bias and ffn_up/down.bias are optional, as llama.cpp
// loads them. As llama-bench d32676d77 loads files:
// attention.layer_norm_rms_epsilon is required; rope.dimension_count
// must be the head size (llama.cpp refuses "invalid n_rot"), and the
// values' head size the keys' (its graph asserts both).
func deciHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.DropFFNFree = true
	m.layerSizes(c, true)
	m.wholeHeads(c)
}

// openELMHparams: Apple's OpenELM as llama.cpp's openelm loader and
// graph run it: each layer its own query heads, KV heads and
// feed-forward width (layerSizes; none 0), a fused attn_qkv (the layer's
// query heads, then its key heads, then its value heads), per-head RMS
// Q and K norms before NEOX RoPE, SwiGLU, and the output tied to the
// embedding (Arch.TiedHead: llama.cpp loads no output.weight).
// attention.layer_norm_rms_epsilon is required; the values' head size
// must be the keys' (the graph asserts it).
func openELMHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.layerSizes(c, false)
	m.sameHeadSizes(c)
}
