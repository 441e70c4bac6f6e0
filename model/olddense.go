package model

// The older dense architectures below are llama's or stablelm's blocks
// with RoPE, ALiBi or no positions at all; their registry entries say
// which tensors each takes.

// xverseHparams: XVERSE (7B, 13B, 65B) as llama.cpp's xverse graph runs
// it — llama's blocks (RMSNorms, NORM RoPE over whole heads, as
// llama.cpp asserts, SwiGLU, no biases but the optional Q/K/V ones) with an untied output.weight and
// the RMS epsilon required, as llama.cpp's loader requires them; it sizes
// attn_q and attn_output [n_embd, n_embd], so the query must be as wide
// as the embedding. llama.cpp creates no rope_freqs for it
// (Arch.NoRopeFreqs).
func xverseHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.embdWideQuery(c, "llama.cpp's xverse loader sizes attn_q and attn_output")
	m.wholeHeads(c)
}

// orionHparams: Orion-14B as llama.cpp's orion graph runs it — xverse's
// blocks with LayerNorms of weight and bias (epsilon
// attention.layer_norm_epsilon, required; every bias required) in place
// of the RMSNorms, and NEOX RoPE (llama.cpp's rope type for orion) in
// place of NORM, over whole heads.
func orionHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.embdWideQuery(c, "llama.cpp's orion loader sizes attn_q and attn_output")
	m.wholeHeads(c)
}

// refactMaxALiBiBias is the ALiBi maximum bias llama.cpp gives every
// refact file (and a baichuan of 40 blocks): its loader sets 8 and reads
// no key for it.
const refactMaxALiBiBias = 8

// refactHparams: Refact-1.6B as llama.cpp's refact graph runs it —
// llama's blocks (RMSNorms, SwiGLU) with ALiBi of maximum bias 8 in place
// of RoPE; the RMS epsilon required; the output tied when the file has no
// output.weight. llama.cpp's refact loader also takes an optional
// attn_output.bias, ffn biases and rope_freqs (llama-bench d32676d77
// loads a file with attn_output.bias or rope_freqs), which its graph never
// applies; no released file has them, and such a file is refused here as
// holding tensors this package does not run, rather than run without
// them: a deliberate difference.
func refactHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.sameHeadSizes(c)
	if m.err == nil {
		c.ALiBi = alibiSlopes(c.Heads, refactMaxALiBiBias)
	}
}

// baichuanHparams: Baichuan 1 and 2 as llama.cpp's baichuan graph runs
// them — llama's blocks (RMSNorms, SwiGLU, no biases; the converter
// splits W_pack into attn_q, attn_k and attn_v), the RMS epsilon
// required, heads whole (llama.cpp asserts rope.dimension_count is the
// head size). What places the tokens depends on the depth alone, as
// llama.cpp names the model by it: 32 blocks (7B) rotate Q and K by NORM
// RoPE; 40 blocks (13B) bias the scores by ALiBi of maximum bias 8; any
// other depth has neither, every slope 0 (llama.cpp's unknown type adds
// no positions at all).
func baichuanHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.wholeHeads(c)
	if m.err != nil {
		return
	}
	switch c.Layers {
	case 32:
	case 40:
		c.ALiBi = alibiSlopes(c.Heads, refactMaxALiBiBias)
	default:
		c.ALiBi = make([]float32, c.Heads)
	}
}

// codeshellHparams: CodeShell-7B as llama.cpp's codeshell graph runs it —
// starcoder2's block (LayerNorms of weight and bias, epsilon
// attention.layer_norm_epsilon required; the output projection's, up's
// and down's biases required; a gate-less GELU feed-forward) with Q, K
// and V fused or apart and each of their biases optional
// (create_tensor_qkv), NEOX RoPE over whole heads (the graph asserts
// it), an untied output.weight required and the query as wide as the
// embedding, as llama.cpp's loader sizes attn_output [n_embd, n_embd].
// llama.cpp takes a file without token_embd by using output.weight in
// its place; no released file lacks it, and such a file is refused here.
func codeshellHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.embdWideQuery(c, "llama.cpp's codeshell loader sizes attn_q and attn_output")
	m.wholeHeads(c)
}
