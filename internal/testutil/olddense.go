package testutil

// TinyXverse is a 2-layer xverse as XVERSE's converter writes it: llama's
// blocks (RMSNorms, NORM RoPE over whole heads, SwiGLU, no biases) with
// grouped KV heads and an untied output, as llama.cpp requires; Q8_0
// weights.
func TinyXverse() ModelSpec {
	return tiny(ModelSpec{Arch: "xverse", Seed: 183, RopeBase: 10000, RMSEps: 1e-6})
}

// TinyOrion is a 2-layer orion as Orion-14B's converter writes it:
// xverse's blocks with LayerNorms of weight and bias (epsilon 1e-5) in
// place of the RMSNorms and NEOX RoPE, grouped KV heads, an untied
// output; Q8_0 weights.
func TinyOrion() ModelSpec {
	return tiny(ModelSpec{Arch: "orion", Seed: 194, RopeBase: 10000, NormEps: 1e-5})
}

// TinyRefact is a 2-layer refact as Refact-1.6B's converter writes it:
// llama's blocks without RoPE but ALiBi of maximum bias 8 on one KV head
// (multi-query, as Refact-1.6B's), 6 heads of 16 (not a power of 2: two
// take ALiBi's odd-power slopes), the output tied; Q8_0 weights.
func TinyRefact() ModelSpec {
	return tiny(ModelSpec{Arch: "refact", Seed: 193, Embd: 96, Heads: 6, HeadsKV: 1, RMSEps: 1e-5, TiedOutput: true})
}

// TinyBaichuan is a baichuan of 32 layers, the depth from which llama.cpp
// names it 7B and rotates Q and K (NORM RoPE over whole heads), 32 wide
// so that the depth stays cheap; llama's blocks with as many KV heads as
// heads (the converter's split W_pack) and an untied output; Q8_0
// weights.
func TinyBaichuan() ModelSpec {
	return tiny(ModelSpec{Arch: "baichuan", Seed: 197, Layers: 32, Embd: 32, FFN: 64, HeadsKV: 4, RopeBase: 10000, RMSEps: 1e-6})
}

// TinyBaichuan13B is TinyBaichuan of 40 layers, the depth llama.cpp names
// 13B, which places tokens by ALiBi of maximum bias 8 instead of RoPE.
func TinyBaichuan13B() ModelSpec {
	s := TinyBaichuan()
	s.Seed, s.Layers, s.Label = 199, 40, "13b"
	return s
}

// TinyCodeShell is a 2-layer codeshell as CodeShell-7B's converter writes
// it: starcoder2's LayerNorms of weight and bias (epsilon 1e-5), biases on
// Q, K, V, the output projection, up and down, a gate-less GELU
// feed-forward, NEOX RoPE over whole heads, grouped KV heads, an untied
// output; Q8_0 weights.
func TinyCodeShell() ModelSpec {
	return tiny(ModelSpec{Arch: "codeshell", Seed: 205, RopeBase: 10000, NormEps: 1e-5})
}
