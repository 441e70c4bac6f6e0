package testutil

// TinyMistral4 is a 3-layer mistral4 as the converter writes Mistral
// Small 4's checkpoint (deepseek2's tensors and keys under mistral4):
// the query through a rank of 32 (attn_q_a, its norm, attn_q_b), latent
// attention of rank 64 (heads of 32 unrotated and 16 rotated query dims,
// values of 32), every layer's feed-forward 8 experts of width 32, 2 a
// token, softmax-routed, renormalised and scaled by 1.5, their gate and up
// one ffn_gate_up_exps, beside one shared expert; YaRN ×4 over 32
// positions with mscale_all_dim 1; Q8_0 weights. (Mistral Small 4's own
// routing scale is not checked here; 1.5 makes the scale show.)
func TinyMistral4() ModelSpec {
	s := tiny(ModelSpec{
		Arch: "mistral4", Seed: 230, Layers: 3, RopeBase: 10000, RMSEps: 1e-6,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, RouterGain: 4, FusedExps: true,
		Yarn:      &Yarn{Factor: 4, OrigContext: 32, LogMul: 0.1},
		DeepSeek2: &DeepSeek2{KVLora: 64, QLora: 32, Nope: 32, Rope: 16, VHead: 32, Shared: 1, Scale: 1.5, Norm: true, Gating: 1},
	})
	s.HeadsKV = 0 // withDefaults derives it from the latent attention
	return s
}

// TinyLlamaEmbed is a 2-layer llama-embed as llama-embed-nemotron's
// converter writes it: llama's blocks, no output.weight (the checkpoint
// is a base model without an LM head), no attention.causal (so llama.cpp
// attends causally), mean pooling; Q8_0 weights.
func TinyLlamaEmbed() ModelSpec {
	return tiny(ModelSpec{Arch: "llama-embed", Seed: 233, RopeBase: 500000, RMSEps: 1e-5, TiedOutput: true, Pooling: 1})
}

// TinyLlamaEmbedBidirectional is TinyLlamaEmbed with attention.causal =
// false: every token attends to the whole text.
func TinyLlamaEmbedBidirectional() ModelSpec {
	s := TinyLlamaEmbed()
	s.Seed, s.NonCausal, s.Label = 239, true, "bidirectional"
	return s
}
