package testutil

// TinyHunyuanMoE is a 2-layer hunyuan-moe as Hunyuan-A13B's converter
// writes it: hunyuan-dense's attention (NEOX RoPE on the alpha-scaled
// base, then per-head Q/K norms), then in every block 8 experts as wide
// as feed_forward_length (32, as expert_feed_forward_length says too), 2
// a token, chosen by a softmax and renormalised, beside an ungated shared
// expert of 64 (expert_shared_feed_forward_length, read rather than
// defaulted to feed_forward_length); the router's logits spread
// (RouterGain 4); tied output; Q8_0 weights.
func TinyHunyuanMoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "hunyuan-moe", Seed: 83, RopeBase: 26826958, RMSEps: 1e-5, TiedOutput: true,
		FFN: 32, SharedFFN: 64,
	})
}

// TinyDots1 is a 3-layer dots1 as dots.llm1's converter writes it:
// per-head Q/K norms before NEOX RoPE, as many KV heads as query heads;
// layer 0's feed-forward dense, the others' 8 experts of width 32, 2 a
// token, chosen by their sigmoid (expert_gating_func 2) plus a selection
// bias, weighted by the sigmoids renormalised and scaled by 2.5, beside 2
// shared experts run as one of 64; an output matrix of its own; Q8_0
// weights.
func TinyDots1() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "dots1", Seed: 75, Layers: 3, HeadsKV: 4, RopeBase: 10000000, RMSEps: 1e-5,
		DenseLead: 1,
		Routing:   &Routing{Shared: 2, Scale: 2.5, Norm: true, Gating: 2, QKNorm: true},
	})
}
