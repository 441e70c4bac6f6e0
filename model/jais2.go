package model

// jais2Hparams: Inception's Jais 2 as llama.cpp's jais2 graph runs it —
// nemotron's block (LayerNorms of weight and bias, epsilon
// attention.layer_norm_epsilon required; a gate-less down(ReLU(up·x)²)
// feed-forward) with every bias required (Q, K, V, the output
// projection, up and down), Q, K and V apart (attn_qkv refused, as
// llama.cpp's loader requires attn_q, attn_k and attn_v), NEOX RoPE over
// whole heads (llama.cpp asserts it), no rope_freqs, the output tied
// when the file has no output.weight. llama.cpp shapes the Q, K and V
// biases as wide as the embedding, so a file of grouped KV heads or of
// a query narrower or wider than the embedding is refused, as llama.cpp
// refuses its biases' shapes.
func jais2Hparams(c *Config, m *meta) {
	nemotronHparams(c, m)
	m.wholeHeads(c)
}
