package model

import "fmt"

// The dense architectures below are llama's layers with other norms,
// biases or feed-forwards, each a choice the shared forward pass already
// makes; their registry entries say which.
//
// exaoneHparams: EXAONE 3.0 and 3.5 as llama.cpp's exaone graph runs
// them — llama's tensors and SwiGLU, NEOX RoPE with the optional
// rope_freqs (Llama 3's frequency factors, which EXAONE 3.5's converter
// writes), an optional output matrix; the RMS epsilon is required, as
// llama.cpp's loader requires it.
func exaoneHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
}

// layerNormHparams: LayerNorms of weight and bias (Arch.NormBias),
// epsilon attention.layer_norm_epsilon (required): starcoder2, whose
// feed-forward is down(GELU(up·x + b_up)) + b_down, and whose Q, K, V and
// output projections have biases, as llama.cpp's starcoder2 graph; gpt2
// and starcoder read nothing more (their learned positions and fused
// attn_qkv are the registry's).
func layerNormHparams(c *Config, m *meta) {
	m.layerNormEps(c)
	c.LayerNorm = true
}

// gemmaHparams: Gemma 1 and CodeGemma as llama.cpp's gemma graph runs them
// — Gemma 2's layers without soft-caps, windows or post-norms: the
// embeddings times sqrt(embedding_length) (Arch.EmbedScale), RMSNorms
// whose weights the converter stores with Gemma's +1 already added, GeGLU,
// the query scaled by 1/sqrt(head size) after RoPE and the attention
// unscaled, the output the embedding (Arch.TiedHead).
func gemmaHparams(c *Config, m *meta) {
	exaoneHparams(c, m)
	c.QueryScale, c.KQScale = invSqrt(c.HeadDimK), 1
}

// nemotronHparams: Nemotron-Mini and Minitron as llama.cpp's nemotron
// graph runs them — LayerNorms of weight and bias (the converter stores
// layernorm1p's weight+1), optional biases on every projection, a
// gate-less down(ReLU(up·x)²) feed-forward, NEOX RoPE over the first
// rope.dimension_count dims of each head (Nemotron-Mini rotates half).
func nemotronHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	c.ReLU2 = true
}

// stablelmHparams: StableLM-2 (1.6B, 12B), StableLM-3B-4E1T and
// StableCode-3B as llama.cpp's stablelm graph runs them — LayerNorms of
// weight and bias (layerNormHparams), optional Q/K/V biases (StableLM 2
// 1.6B's), optional per-head Q/K LayerNorms without bias (12B's;
// QKLayerNorm), NEOX RoPE over the first rope.dimension_count dims of
// each head (a quarter), SwiGLU, and the feed-forward beside the
// attention in a block without ffn_norm (12B's). The query is as wide as
// the embedding, as llama.cpp sizes attn_q and attn_output.
func stablelmHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.embdWideQuery(c, "llama.cpp's stablelm loader sizes attn_q and attn_output")
	c.QKLayerNorm = true
}

// gptneoxHparams: Pythia and GPT-NeoX-20B as llama.cpp's gptneox graph
// runs them — LayerNorms of weight and bias (layerNormHparams), a fused
// attn_qkv with its bias, biases on every projection, a gate-less GELU
// feed-forward, NEOX RoPE over the first rope.dimension_count dims of
// each head (a quarter), an untied output; use_parallel_residual
// (required, as llama.cpp requires it) true runs the feed-forward on
// ffn_norm of the block's input beside the attention, x + attn(ln1(x)) +
// ffn(ln2(x)) (Config.ParallelNorms), false after it.
func gptneoxHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.require(true, "use_parallel_residual")
	c.ParallelNorms = m.flag("use_parallel_residual", true)
}

// phi2Hparams: Phi-2 and Phi-1.5 as llama.cpp's phi2 graph runs them —
// one LayerNorm of weight and bias before attention and the gate-less
// GELU feed-forward side by side (Arch.Parallel), biases on every
// projection and on the output (Arch.HeadBias), NEOX RoPE over the first
// rope.dimension_count dims of each head (32 of 80). llama.cpp scales the
// query by 1/sqrt(head size) after RoPE, before K·Q, so that F16 scores
// cannot overflow, and the attention is then unscaled.
func phi2Hparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	c.QueryScale, c.KQScale = invSqrt(c.HeadDimK), 1
}

// internlm2Hparams: InternLM2 and InternLM2.5 (1.8B, 7B, 20B) as
// llama.cpp's internlm2 graph runs them — llama's blocks exactly: RMSNorms,
// NORM RoPE over whole heads, SwiGLU, no biases. The converter splits the
// checkpoint's fused wqkv into attn_q, attn_k and attn_v, which are all
// llama.cpp's loader takes; it requires the RMS epsilon and an untied
// output.weight (Arch.UntiedOutput), and sizes attn_q and attn_output
// [n_embd, n_embd], so the query must be as wide as the embedding.
func internlm2Hparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.embdWideQuery(c, "llama.cpp's internlm2 loader sizes attn_q and attn_output")
}

// olmoHparams: OLMo 1 (OLMo-1B, OLMo-7B, OLMo-1.7-7B) as llama.cpp's olmo
// graph runs it — llama's blocks with every norm a LayerNorm without
// weight or bias (Arch.UnitNorms), epsilon attention.layer_norm_epsilon
// (required, as llama.cpp requires it), NORM RoPE, SwiGLU, the output
// tied when the file has no output.weight; attention.clamp_kqv, when
// present and above 0, clamps Q, K and V after their projections
// (Config.ClampKQV). llama.cpp sizes attn_q and attn_output [n_embd,
// n_embd], so the query must be as wide as the embedding.
func olmoHparams(c *Config, m *meta) {
	m.layerNormEps(c)
	c.LayerNorm = true
	c.ClampKQV = m.finite("attention.clamp_kqv", 0)
	m.embdWideQuery(c, "llama.cpp's olmo loader sizes attn_q and attn_output")
}

// bitnetHparams: BitNet b1.58 (microsoft/bitnet-b1.58-2B-4T,
// 1bitLLM/bitnet_b1_58) as llama.cpp's bitnet graph runs it — llama's
// blocks with NEOX RoPE, attn_sub_norm over the attention's output before
// attn_output and ffn_sub_norm over the gated activation before ffn_down
// (Arch.SubNorms), optional one-element scales on every projection, the
// output tied to token_embd (Arch.TiedHead). The RMS epsilon is required
// and Q is Embd wide, as llama.cpp's loader requires them.
//
// hidden_activation chooses the gate's activation as llama.cpp's later
// bitnet loader reads it (llm_ffn_op_type_from_string, fallback SiLU):
// absent, silu, swish or swiglu SiLU; relu2 ReLU² (BitNet b1.58 2B-4T's
// config); relu ReLU. llama.cpp d32676d77 ignores the key and runs SiLU
// always, which gives 2B-4T's relu2 the wrong activation. The spellings
// that map to a fused-gate op there (gelu, geglu, reglu) abort its graph
// beside a separate ffn_gate, and an unknown one would silently run SiLU:
// both are refused with ErrUnsupportedArch naming the value.
func bitnetHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.embdWideQuery(c, "llama.cpp's bitnet loader shapes attn_q and attn_output [n_embd, n_embd]")
	switch act := metaValue(m, "hidden_activation", "silu", m.f.String, "a string"); act {
	case "silu", "swish", "swiglu":
	case "relu2":
		c.GatedReLU2 = true
	case "relu":
		c.ReGLU = true
	default:
		if m.err == nil {
			m.err = fmt.Errorf("model: %s = %q: bitnet's feed-forward runs silu, relu2 or relu: %w", m.key("hidden_activation"), act, ErrUnsupportedArch)
		}
	}
}

// falconHparams: Falcon-7B and Falcon-40B as llama.cpp's falcon graph runs
// them — a LayerNorm of weight and bias (epsilon
// attention.layer_norm_epsilon, required) before attention and the
// gate-less GELU feed-forward side by side, both joining the block's
// input; Q, K and V fused in attn_qkv without biases (7B's one KV head,
// 40B's eight), NEOX RoPE over whole heads (the graph asserts it), no
// other bias; the output tied to token_embd when the file has no
// output.weight. A block with attn_norm_2 (Falcon-40B's) runs attention
// on it and the feed-forward on attn_norm (Arch.AttnNorm2).
func falconHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.wholeHeads(c)
}

// bloomMaxALiBiBias is the ALiBi maximum bias llama.cpp gives every bloom
// file: its loader sets 8 and reads no key for it.
const bloomMaxALiBiBias = 8

// bloomHparams: BLOOM and BLOOMZ as llama.cpp's bloom graph runs them —
// gpt2's blocks (LayerNorms of weight and bias, epsilon
// attention.layer_norm_epsilon required; fused attn_qkv; biases on every
// projection; gate-less GELU) after a LayerNorm of the token embeddings
// (Arch.EmbedLayerNorm), with ALiBi of maximum bias 8 in place of
// positions; the output tied when the file has no output.weight.
func bloomHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.sameHeadSizes(c)
	if m.err == nil {
		c.ALiBi = alibiSlopes(c.Heads, bloomMaxALiBiBias)
	}
}

// mptHparams: MPT-7B and its instruct and chat models as llama.cpp's mpt
// graph runs them — bloom's block without its embeddings' LayerNorm, each
// bias optional (MPT-7B's no_bias files have none), Q, K and V clamped to
// attention.clamp_kqv when it is above 0 (optional), and ALiBi of maximum
// bias attention.max_alibi_bias (optional, as llama-bench d32676d77 loads
// a file without it; absent, 0 or below, llama.cpp's mask carries no
// distance, so every slope is 0).
func mptHparams(c *Config, m *meta) {
	layerNormHparams(c, m)
	m.sameHeadSizes(c)
	c.ClampKQV = m.finite("attention.clamp_kqv", 0)
	maxBias := m.finite("attention.max_alibi_bias", 0)
	if m.err != nil {
		return
	}
	c.ALiBi = make([]float32, c.Heads)
	if maxBias > 0 {
		c.ALiBi = alibiSlopes(c.Heads, float64(maxBias))
	}
}
