package testutil

// TinyLlama4 is a 4-layer llama4 as Llama 4 Scout's converter writes it:
// NORM RoPE divided by rope_freqs' factors on layers 0–2 (chunked, their
// Q and K RMS-normalised head by head after RoPE), layer 3 global and
// unrotated (its queries take the attention temperature); every layer's
// feed-forward 8 experts of width 32 (interleave_moe_layer_step 1), one a
// token chosen by its sigmoid and reading the token times its weight,
// beside a shared expert as wide; an output matrix of its own; Q8_0
// weights. llama.cpp's chunk of 8192 is longer than any test prompt: the
// reference tests shorten it on the loaded Config.
func TinyLlama4() ModelSpec {
	return tiny(ModelSpec{
		Arch: "llama4", Seed: 163, Layers: 4, RopeBase: 500000, RMSEps: 1e-5,
		Experts: 8, ExpertsUsed: 1, ExpertFFN: 32, MoEStep: 1, RouterGain: 4,
	})
}

// TinyLlama4Maverick is TinyLlama4 laid out as Maverick: 128 experts (no
// Q/K norms: llama.cpp's use_kq_norm is off for the 128-expert model),
// experts on the odd layers only (interleave_moe_layer_step 2), the even
// ones a dense feed-forward; Q, K and V biases (optional in llama.cpp's
// loader, which takes them when a file has them); the output tied to the
// embedding; 32 wide
// (2 heads of 16 on 1 KV head), so that each expert tensor stays at 136
// KiB: at 64 wide (272 KiB) residency.TestExpertsFromDisk finds the last
// whole page of blk.1.ffn_gate_exps (the one before the page it shares
// with ffn_up_exps) still in the page cache after every sweep.
func TinyLlama4Maverick() ModelSpec {
	s := TinyLlama4()
	s.Seed, s.Experts, s.MoEStep, s.TiedOutput, s.QKVBias = 167, 128, 2, true, true
	s.Embd, s.Heads, s.HeadsKV, s.Label = 32, 2, 1, "maverick"
	return s
}
