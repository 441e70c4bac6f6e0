package testutil

// TinyJinaBertV3 is a 2-layer jina-bert-v3 as jina-embeddings-v3's
// converter writes it: XLM-RoBERTa's Unigram vocabulary and one token
// type, Q, K and V fused in attn_qkv with its bias, NEOX RoPE of base
// 20000 (the model's rotary_emb_base), attn_output's bias, bert's GELU
// feed-forward with both biases, LayerNorms after the residual sums,
// attention over the whole text; mean pooling, Q8_0 weights.
func TinyJinaBertV3() ModelSpec {
	s := tiny(ModelSpec{
		Arch: "jina-bert-v3", Seed: 211, RopeBase: 20000, NormEps: 1e-5, Pooling: 1, Biases: true,
		Unigram: true, TokenTypes: 1,
	})
	s.HeadsKV = 0 // as many KV heads as heads (withDefaults)
	return s
}

// TinyEuroBert is a 2-layer eurobert as EuroBERT's converter writes it:
// llama's pre-norm blocks (RMSNorm, Q, K and V apart without biases,
// SwiGLU) with NEOX RoPE, attention over the whole text
// (attention.causal false), output_norm's states the embeddings, no
// output matrix; mean pooling, Q8_0 weights.
func TinyEuroBert() ModelSpec {
	return tiny(ModelSpec{Arch: "eurobert", Seed: 223, RopeBase: 250000, RMSEps: 1e-5, TiedOutput: true, Pooling: 1})
}

// TinyNeoBert is a 2-layer neo-bert as NeoBERT's converter writes it:
// pre-norm RMSNorm blocks with Q, K and V fused in attn_qkv, NORM RoPE,
// a fused SwiGLU ffn_up (the gate's rows, then the up's), attention over
// the whole text, the final norm named enc.output_norm, no output matrix;
// CLS pooling, as the converter sets it; Q8_0 weights.
func TinyNeoBert() ModelSpec {
	return tiny(ModelSpec{
		Arch: "neo-bert", Seed: 227, RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true, Pooling: 2,
		FusedQKV: true, OutputNorm: "enc.output_norm.weight",
	})
}
