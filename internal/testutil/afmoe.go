package testutil

// TinyAfmoe is a 4-layer afmoe as Arcee's converter writes Trinity's
// files: embeddings scaled by √64, per-head Q/K norms before NEOX RoPE,
// attn_gate's sigmoid on the attention's output before attn_output,
// norms before and after attention and the feed-forward; layers 0–2
// windowed (attention.sliding_window 4, shorter than the tests' prompts)
// and rotated, layer 3 global and unrotated; layer 0's feed-forward
// dense, the others' 8 experts of width 32, 2 a token, chosen by their
// sigmoid (no expert_gating_func, as the converter writes none) plus a
// selection bias, weighted by the sigmoids renormalised
// (expert_weights_norm) and scaled by 2.826 (Trinity's route_scale),
// beside one shared expert; an output matrix of its own; Q8_0 weights.
func TinyAfmoe() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "afmoe", Seed: 67, Layers: 4, RopeBase: 10000, RMSEps: 1e-5,
		Windowed: true, SlidingWindow: 4,
		DenseLead: 1,
		Routing:   &Routing{Shared: 1, Scale: 2.826, Norm: true},
	})
}

// TinyAfmoeGlobal is TinyAfmoe without attention.sliding_window (every
// layer global, layer 3 still unrotated), expert_weights_norm or
// expert_weights_scale (the chosen sigmoids weight the experts as they
// are), and with the output tied to the embedding.
func TinyAfmoeGlobal() ModelSpec {
	s := TinyAfmoe()
	s.Seed, s.Windowed, s.TiedOutput, s.Label = 68, false, true, "global"
	s.Routing = &Routing{Shared: 1}
	return s
}
