package testutil

import (
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// TinyCohere2 is a 4-layer cohere2 as Command R7B's converter writes it:
// layers 0-2 windowed (a window of 4, shorter than the tests' prompts)
// and rotated, layer 3 global and unrotated; LayerNorm without bias
// (epsilon 1e-5) before attention and the feed-forward in parallel;
// logit_scale 0.25 (Command R7B's); the output tied to the embedding, as
// llama.cpp requires; Q8_0 weights.
func TinyCohere2() ModelSpec {
	return tiny(ModelSpec{
		Arch: "cohere2", Seed: 47, Layers: 4, RopeBase: 50000, NormEps: 1e-5, TiedOutput: true,
		SlidingWindow: 4, LogitScale: 0.25,
	})
}

// TinyCommandR is a 2-layer command-r as Aya Expanse 8B's converter
// writes it: one LayerNorm without bias (epsilon 1e-5) before attention
// and the feed-forward in parallel, NORM RoPE in every layer (no window),
// no Q/K norms (llama.cpp takes them from 64 layers on), logit_scale
// 0.125 (Aya Expanse 8B's); the output tied to the embedding, as
// llama.cpp requires; Q8_0 weights.
func TinyCommandR() ModelSpec {
	return tiny(ModelSpec{Arch: "command-r", Seed: 151, RopeBase: 10000, NormEps: 1e-5, TiedOutput: true, LogitScale: 0.125})
}

// TinyCommandRPlus is a command-r of 64 layers, the depth from which
// llama.cpp's loader requires Command R+'s per-head Q/K LayerNorms (a
// weight row a head, before RoPE), 32 wide so that the depth stays
// cheap; logit_scale 0.8333 and rope_theta 7.5e7 (Command R+'s);
// otherwise TinyCommandR.
func TinyCommandRPlus() ModelSpec {
	return tiny(ModelSpec{
		Arch: "command-r", Seed: 157, Layers: 64, Embd: 32, FFN: 64, RopeBase: 75000000, NormEps: 1e-5, TiedOutput: true,
		LogitScale: 0.8333333,
	})
}

// TinyArcee is a 2-layer arcee (AFM-4.5B's layers: llama's attention, a
// gate-less ReLU² feed-forward) with YaRN ×4 over 16 positions, as
// AFM-4.5B's 64K files state it; Q8_0 weights.
func TinyArcee() ModelSpec {
	return tiny(ModelSpec{
		Arch: "arcee", Seed: 53, RopeBase: 10000, RMSEps: 1e-5,
		Yarn: &Yarn{Factor: 4, OrigContext: 16},
	})
}

// TinyApertus is a 2-layer apertus: per-head Q/K norms before NEOX RoPE,
// a gate-less xIELU feed-forward whose raw parameters differ between the
// layers (xielu.* arrays, as the converter writes them); Q8_0 weights.
func TinyApertus() ModelSpec {
	return tiny(ModelSpec{
		Arch: "apertus", Seed: 59, RopeBase: 12000000, RMSEps: 1e-5,
		XIELU: [][4]float32{{0.8, 0.8, 0.5, -1e-6}, {-1.5, 2.5, 0.25, -1e-6}},
	})
}

// TinyHunyuanDense is a 2-layer hunyuan-dense: NEOX RoPE on a base already
// scaled by alpha (the converter's 10000·1000^(16/14) for this head size),
// then per-head Q/K norms; tied output; Q8_0 weights.
func TinyHunyuanDense() ModelSpec {
	return tiny(ModelSpec{Arch: "hunyuan-dense", Seed: 61, RopeBase: 26826958, RMSEps: 1e-5, TiedOutput: true})
}

// TinyExaone is a 2-layer exaone as EXAONE 3.5's converter writes it:
// llama's layers with NEOX RoPE divided by rope_freqs' factors (Llama 3's
// scaling, around 2 here so that they matter), the output tied as the
// 2.4B's is; Q8_0 weights.
func TinyExaone() ModelSpec {
	return tiny(ModelSpec{Arch: "exaone", Seed: 67, RopeBase: 1000000, RMSEps: 1e-5, TiedOutput: true})
}

// TinyStarCoder2 is a 2-layer starcoder2: LayerNorms of weight and bias
// (epsilon 1e-5), biases on Q, K, V and the output projection, a
// gate-less GELU feed-forward with biases, NEOX RoPE; the output tied to
// the embedding, as StarCoder2-3B's file has it; Q8_0 weights.
func TinyStarCoder2() ModelSpec {
	return tiny(ModelSpec{Arch: "starcoder2", Seed: 72, RopeBase: 100000, NormEps: 1e-5, TiedOutput: true})
}

// TinyGemma is a 2-layer gemma as Gemma 2B's converter writes it: one KV
// head (multi-query), heads of 32 on a width of 64 (Gemma 7B's 256 on
// 3072 is wider than width/heads too), RMSNorm weights around 1 (the
// converter's +1), GeGLU, the output always the embedding; Q8_0 weights.
func TinyGemma() ModelSpec {
	return tiny(ModelSpec{
		Arch: "gemma", Seed: 73, HeadsKV: 1, HeadDim: 32, RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true,
	})
}

// TinyNemotron is a 2-layer nemotron as Nemotron-Mini-4B's converter
// writes it: LayerNorms of weight (the converter's layernorm1p +1) and
// bias, a gate-less ReLU² feed-forward, NEOX RoPE over half of each head
// (rope.dimension_count 8 of 16), an untied output; layer 1 has every
// optional bias (Q, K, V, output, up, down), layer 0 none, as
// Nemotron-Mini's; Q8_0 weights.
func TinyNemotron() ModelSpec {
	return tiny(ModelSpec{Arch: "nemotron", Seed: 79, RopeBase: 10000, NormEps: 1e-5, RopeDim: 8})
}

// TinyJais2 is a 2-layer jais2 as Jais 2's converter writes it:
// nemotron's LayerNorms of weight and bias (epsilon 1e-5) and gate-less
// ReLU² feed-forward, every projection with its bias, NEOX RoPE over
// whole heads; as many KV heads as query heads (llama.cpp shapes the K
// and V biases as wide as the embedding); the output tied, no
// output.weight; Q8_0 weights.
func TinyJais2() ModelSpec {
	return tiny(ModelSpec{Arch: "jais2", Seed: 103, HeadsKV: 4, RopeBase: 500000, NormEps: 1e-5, TiedOutput: true})
}

// TinyStableLM is a 2-layer stablelm as StableLM 2 1.6B's converter
// writes it: LayerNorms of weight and bias (epsilon 1e-5), biases on Q,
// K and V, NEOX RoPE over the first quarter of each head
// (rope.dimension_count 4 of 16), SwiGLU, an untied output; Q8_0 weights.
func TinyStableLM() ModelSpec {
	return tiny(ModelSpec{Arch: "stablelm", Seed: 83, RopeBase: 10000, NormEps: 1e-5, RopeDim: 4, QKVBias: true})
}

// TinyStableLM12B is a 2-layer stablelm laid out as StableLM 2 12B's:
// no ffn_norm (the feed-forward reads attn_norm's output beside the
// attention), per-head Q/K LayerNorms without bias (a weight row a head),
// no projection biases; otherwise TinyStableLM.
func TinyStableLM12B() ModelSpec {
	return tiny(ModelSpec{Arch: "stablelm", Seed: 89, RopeBase: 10000, NormEps: 1e-5, RopeDim: 4, NoFFNNorm: true})
}

// TinyPhi2 is a 2-layer phi2 as llama.cpp's converter writes Phi-2 from
// today's checkpoints: one LayerNorm of weight and bias (epsilon 1e-5)
// before attention and the gate-less GELU feed-forward side by side,
// separate Q, K and V, biases on every projection and on the untied
// output, NEOX RoPE over the first 8 dims of each head of 16 (Phi-2's 32
// of 80); Q8_0 weights.
func TinyPhi2() ModelSpec {
	return tiny(ModelSpec{Arch: "phi2", Seed: 83, HeadsKV: 4, RopeBase: 10000, NormEps: 1e-5, RopeDim: 8})
}

// TinyPhi2Fused is TinyPhi2 with Q, K and V (and their biases) fused in
// attn_qkv, as the converter wrote Phi-2's first checkpoints (Wqkv).
func TinyPhi2Fused() ModelSpec {
	s := TinyPhi2()
	s.Seed, s.FusedQKV = 89, true
	return s
}

// TinyFalcon is a 2-layer falcon as llama.cpp's converter writes
// Falcon-7B: one LayerNorm with bias before attention and the gate-less
// GELU feed-forward side by side, Q, K and V fused in attn_qkv without
// bias on one KV head (multi-query), NEOX RoPE over whole heads, no
// other bias, an untied output.
func TinyFalcon() ModelSpec {
	return tiny(ModelSpec{Arch: "falcon", Seed: 97, HeadsKV: 1, RopeBase: 10000, NormEps: 1e-5, FusedQKV: true})
}

// TinyFalcon40B is TinyFalcon as Falcon-40B is made: attn_norm_2 (the
// attention's norm) beside attn_norm (the feed-forward's) in every block,
// two KV heads, the output tied to token_embd.
func TinyFalcon40B() ModelSpec {
	s := TinyFalcon()
	s.Seed, s.HeadsKV, s.AttnNorm2, s.TiedOutput = 101, 2, true, true
	return s
}

// TinyBloom is a 2-layer bloom as llama.cpp's converter writes BLOOM and
// BLOOMZ: TinyGPT2's blocks (LayerNorms and projections all with biases,
// fused attn_qkv, gate-less GELU) without positions, a LayerNorm of weight
// and bias on the token embeddings (token_embd_norm), 6 heads of 16 (not
// a power of 2: two take ALiBi's odd-power slopes), the output tied.
func TinyBloom() ModelSpec {
	return tiny(ModelSpec{Arch: "bloom", Seed: 133, Embd: 96, Heads: 6, HeadsKV: 6, NormEps: 1e-5, TiedOutput: true})
}

// TinyMPT is a 2-layer mpt as llama.cpp's converter writes MPT-7B (its
// no_bias config): LayerNorms of weight alone, a fused attn_qkv and a
// gate-less GELU feed-forward without any bias, 10 heads of 16 (two past
// the power of 2) with ALiBi of maximum bias 8 (attention.max_alibi_bias),
// no clamp, the output tied.
func TinyMPT() ModelSpec {
	return tiny(ModelSpec{Arch: "mpt", Seed: 137, Embd: 160, Heads: 10, HeadsKV: 10, NormEps: 1e-5, MaxALiBiBias: 8, TiedOutput: true})
}

// TinyMPTClamp is TinyMPT with every bias llama.cpp's mpt loader takes
// (the norms', attn_qkv's, attn_output's, ffn_up's and ffn_down's), Q, K
// and V clamped to 0.5 (attention.clamp_kqv, MPT's clip_qkv), maximum
// bias 6 and an untied output.
func TinyMPTClamp() ModelSpec {
	s := TinyMPT()
	s.Seed, s.QKVBias, s.ClampKQV, s.MaxALiBiBias, s.TiedOutput = 139, true, 0.5, 6, false
	return s
}

// TinyGPT2 is a 2-layer gpt2 as llama.cpp's converter writes GPT-2 and
// distilgpt2: learned positions (position_embd, a row for each of the 256
// trained positions), LayerNorms of weight and bias (epsilon 1e-5) before
// attention and the feed-forward, Q, K and V fused in attn_qkv, biases on
// every projection, a gate-less GELU feed-forward, no RoPE (no
// rope.freq_base), the output tied to the embedding; Q8_0 weights.
func TinyGPT2() ModelSpec {
	return tiny(ModelSpec{Arch: "gpt2", Seed: 97, HeadsKV: 4, NormEps: 1e-5, TiedOutput: true})
}

// TinyStarCoder is a 2-layer starcoder as llama.cpp's converter writes
// StarCoder 1 and SantaCoder: TinyGPT2's layers with one KV head
// (multi-query: attn_qkv Embd + 2 head sizes wide) and an untied output.
func TinyStarCoder() ModelSpec {
	return tiny(ModelSpec{Arch: "starcoder", Seed: 103, HeadsKV: 1, NormEps: 1e-5})
}

// TinyGPTNeoX is a 2-layer gptneox as llama.cpp's converter writes Pythia
// and GPT-NeoX-20B: LayerNorms of weight and bias (epsilon 1e-5), Q, K
// and V fused in attn_qkv, biases on every projection, a gate-less GELU
// feed-forward, NEOX RoPE over the first quarter of each head
// (rope.dimension_count 4 of 16, Pythia's rotary_pct 0.25), an untied
// output, and use_parallel_residual: the feed-forward on ffn_norm of the
// block's input beside the attention; Q8_0 weights.
func TinyGPTNeoX() ModelSpec { return tinyGPTNeoX(111, false) }

// TinyGPTNeoXSequential is TinyGPTNeoX with use_parallel_residual false:
// the feed-forward after the attention's sum.
func TinyGPTNeoXSequential() ModelSpec { return tinyGPTNeoX(121, true) }

// tinyGPTNeoX is TinyGPTNeoX's layout of seed, sequential or not.
func tinyGPTNeoX(seed uint64, sequential bool) ModelSpec {
	return tiny(ModelSpec{Arch: "gptneox", Seed: seed, HeadsKV: 4, RopeBase: 10000, NormEps: 1e-5, RopeDim: 4, Sequential: sequential})
}

// TinyBitnet is a 2-layer bitnet as BitNet b1.58 2B-4T's config states
// it: hidden_activation relu2 (ReLU(gate)²·up), NEOX RoPE, attn_sub_norm
// before attn_output and ffn_sub_norm before ffn_down, no .scale tensors
// (llama.cpp's converter folds them into the weights), the output tied
// to the embedding as llama.cpp requires; Q8_0 weights.
func TinyBitnet() ModelSpec {
	return tiny(ModelSpec{Arch: "bitnet", Seed: 127, RopeBase: 500000, RMSEps: 1e-5, HiddenAct: "relu2"})
}

// TinyBitnetScales is a bitnet as 1bitLLM/bitnet_b1_58's files are
// written: no hidden_activation (SiLU, llama.cpp's default), and a
// one-element .scale on every projection (around 1.5, so that they
// matter).
func TinyBitnetScales() ModelSpec {
	return tiny(ModelSpec{Arch: "bitnet", Seed: 134, RopeBase: 10000, RMSEps: 1e-5, Scales: true})
}

// TinyInternLM2 is a 2-layer internlm2 as InternLM2.5's converter writes
// it: llama's blocks with Q, K and V split from the checkpoint's wqkv,
// NORM RoPE on InternLM2.5-7B's base of 1000000, an untied output; Q8_0
// weights.
func TinyInternLM2() ModelSpec {
	return tiny(ModelSpec{Arch: "internlm2", Seed: 137, RopeBase: 1000000, RMSEps: 1e-5})
}

// TinyOlmo is a 2-layer olmo as OLMo-1B's converter writes it: llama's
// tensors without a norm (each a LayerNorm without weight or bias,
// epsilon 1e-5), NORM RoPE, the output tied; Q8_0 weights.
func TinyOlmo() ModelSpec {
	return tiny(ModelSpec{Arch: "olmo", Seed: 139, RopeBase: 10000, TiedOutput: true})
}

// TinyOlmoClamp is a 2-layer olmo as OLMo-1.7-7B's converter writes it:
// attention.clamp_kqv (0.5 here, where OLMo 1.7's 8 would clamp nothing
// of these small projections), the output untied; Q8_0 weights.
func TinyOlmoClamp() ModelSpec {
	return tiny(ModelSpec{Arch: "olmo", Seed: 141, RopeBase: 10000, ClampKQV: 0.5})
}

// unitNormTensors is an olmo's tensors: a llama's of s's sizes without
// attn_norm, ffn_norm or output_norm, which OLMo 1's LayerNorms have no
// weight or bias for.
func (s ModelSpec) unitNormTensors() []tensorSpec {
	l := s
	l.Arch = "llama"
	return slices.DeleteFunc(l.drawnTensors(), func(t tensorSpec) bool {
		return t.name == "output_norm.weight" || strings.HasSuffix(t.name, ".attn_norm.weight") || strings.HasSuffix(t.name, ".ffn_norm.weight")
	})
}

// subNorms is bitnet block p's attn_sub_norm and ffn_sub_norm and, with
// Scales, its projections' scales.
func (s ModelSpec) subNorms(p string) []tensorSpec {
	norm := dist{1, 0.1}
	ts := []tensorSpec{
		{p + "attn_sub_norm.weight", quant.F32, []int64{int64(s.Embd)}, norm},
		{p + "ffn_sub_norm.weight", quant.F32, []int64{int64(s.FFN)}, norm}}
	if s.Scales {
		for _, m := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"} {
			ts = append(ts, tensorSpec{p + m + ".scale", quant.F32, []int64{1}, dist{1.5, 0.3}})
		}
	}
	return ts
}

// denseArch reports whether s is one of the architectures this file
// describes (cohere2, arcee, apertus, hunyuan-dense, exaone, starcoder2,
// gemma, nemotron, stablelm, phi2, gpt2, starcoder, gptneox, bitnet, olmo,
// command-r, falcon, bloom, mpt, jais2, xverse, orion, refact, baichuan,
// codeshell).
func (s ModelSpec) denseArch() bool {
	switch s.Arch {
	case "cohere2", "arcee", "apertus", "hunyuan-dense", "exaone", "starcoder2", "gemma", "nemotron", "stablelm", "phi2", "gpt2", "starcoder", "gptneox", "bitnet", "olmo",
		"command-r", "falcon", "bloom", "mpt", "jais2", "xverse", "orion", "refact", "baichuan", "codeshell":
		return true
	}
	return false
}

// cohere reports whether s is one of Cohere's architectures (cohere2,
// command-r, cohere2moe): one norm before attention and the feed-forward
// side by side, the logits scaled.
func (s ModelSpec) cohere() bool {
	return s.Arch == "cohere2" || s.Arch == "command-r" || s.Arch == "cohere2moe"
}

// headRowNormed reports whether s has per-head Q/K LayerNorms of a weight
// row a head: a stablelm without ffn_norm (StableLM 2 12B's), and a
// command-r of 64 layers or more (Command R+'s), the depth from which
// llama.cpp's loader takes them.
func (s ModelSpec) headRowNormed() bool {
	return s.NoFFNNorm || s.Arch == "command-r" && s.Layers >= 64
}

// learnedPositions reports whether s adds a learned row of position_embd
// a position to its token embeddings and rotates nothing (a decoder's:
// gpt2, starcoder; bert is an encoder).
func (s ModelSpec) learnedPositions() bool { return s.Arch == "gpt2" || s.Arch == "starcoder" }

// classicFused reports whether s is GPT-2's family of layouts (gpt2,
// starcoder, gptneox, bloom): Q, K and V fused in attn_qkv, LayerNorms and
// projections all with biases, a gate-less GELU feed-forward.
func (s ModelSpec) classicFused() bool {
	return s.learnedPositions() || s.Arch == "gptneox" || s.Arch == "bloom"
}

// alibi reports whether s biases its attention by ALiBi in place of
// positions (bloom, mpt; jina-bert-v2 is an encoder).
func (s ModelSpec) alibi() bool { return s.Arch == "bloom" || s.Arch == "mpt" }

// mptBiases reports whether s is an mpt with every bias llama.cpp's mpt
// loader takes (QKVBias gives it them all).
func (s ModelSpec) mptBiases() bool { return s.Arch == "mpt" && s.QKVBias }

// normBias reports whether s's norms have biases: LayerNorms of weight
// and bias (starcoder2, nemotron, jais2, stablelm, phi2, falcon, orion,
// mptBiases', and classicFused's), or phimoe's RMSNorms.
func (s ModelSpec) normBias() bool {
	return s.Arch == "starcoder2" || s.Arch == "nemotron" || s.Arch == "jais2" || s.Arch == "stablelm" || s.phiBiases() || s.Arch == "falcon" || s.mptBiases() ||
		s.classicFused() || s.Arch == "orion" || s.Arch == "codeshell"
}

// phiBiases reports whether s has Phi's biases on its norms, its
// projections and its untied output (phi2, phimoe).
func (s ModelSpec) phiBiases() bool { return s.Arch == "phi2" || s.Arch == "phimoe" }

// headRowNorms is block p's per-head Q/K norms with a weight row a head
// (StableLM 2 12B's attn_q_norm [HeadDim, Heads], attn_k_norm [HeadDim,
// HeadsKV]).
func (s ModelSpec) headRowNorms(p string) []tensorSpec {
	hd := int64(s.HeadDim)
	return []tensorSpec{
		{p + "attn_q_norm.weight", quant.F32, []int64{hd, int64(s.Heads)}, dist{1, 0.1}},
		{p + "attn_k_norm.weight", quant.F32, []int64{hd, int64(s.HeadsKV)}, dist{1, 0.1}}}
}

// layerBiases reports whether layer l of s has biases on its Q, K, V,
// output, up and down projections (every starcoder2, jais2, phiBiases,
// mptBiases and classicFused layer, a phimoe's experts without; a
// nemotron's odd layers, its even ones none).
func (s ModelSpec) layerBiases(l int) bool {
	return s.Arch == "starcoder2" || s.Arch == "jais2" || s.Arch == "codeshell" || s.phiBiases() || s.mptBiases() || s.classicFused() ||
		s.Arch == "nemotron" && l%2 == 1
}

// denseArchGlobals lists the tensors outside the blocks that these
// architectures add: output_norm.bias (normBias) and phiBiases' output.bias,
// gpt2's and starcoder's position_embd (a row a trained position, around
// the embeddings' size, so that it matters), bloom's token_embd_norm,
// exaone's and llama4's rope_freqs (divisors around 2).
func (s ModelSpec) denseArchGlobals() []tensorSpec {
	switch {
	case s.learnedPositions():
		return []tensorSpec{{"output_norm.bias", quant.F32, []int64{int64(s.Embd)}, dist{0, 0.1}},
			{"position_embd.weight", quant.F32, []int64{int64(s.Embd), int64(s.Context)}, dist{0, 0.5}}}
	case s.Arch == "bloom":
		return []tensorSpec{{"output_norm.bias", quant.F32, []int64{int64(s.Embd)}, dist{0, 0.1}},
			{"token_embd_norm.weight", quant.F32, []int64{int64(s.Embd)}, dist{1, 0.1}},
			{"token_embd_norm.bias", quant.F32, []int64{int64(s.Embd)}, dist{0, 0.1}}}
	case s.phiBiases():
		return []tensorSpec{{"output_norm.bias", quant.F32, []int64{int64(s.Embd)}, dist{0, 0.1}},
			{"output.bias", quant.F32, []int64{int64(s.Vocab)}, dist{0, 0.5}}}
	case s.normBias():
		return []tensorSpec{{"output_norm.bias", quant.F32, []int64{int64(s.Embd)}, dist{0, 0.1}}}
	case s.Arch == "exaone" || s.Arch == "llama4":
		return []tensorSpec{{"rope_freqs.weight", quant.F32, []int64{int64(s.HeadDim / 2)}, dist{2, 0.5}}}
	}
	return nil
}

// withDenseArchDefaults fills a cohere2's or command-r's LayerNorm
// epsilon (1e-5), its output (always tied) and logit scale (0.25), and an
// apertus's xIELU parameters (Apertus-8B's initial ones, alike in every
// layer).
func (s ModelSpec) withDenseArchDefaults() ModelSpec {
	switch s.Arch {
	case "cohere2", "command-r":
		if s.NormEps == 0 {
			s.NormEps = 1e-5
		}
		if s.LogitScale == 0 {
			s.LogitScale = 0.25
		}
		s.TiedOutput = true
	case "apertus":
		for len(s.XIELU) < s.Layers {
			s.XIELU = append(s.XIELU, [4]float32{0.8, 0.8, 0.5, -1e-6})
		}
		s.XIELU = s.XIELU[:s.Layers]
	case "starcoder2", "nemotron", "jais2", "stablelm", "phi2", "gpt2", "starcoder", "gptneox", "olmo", "falcon", "bloom", "mpt", "orion", "codeshell":
		if s.NormEps == 0 {
			s.NormEps = 1e-5
		}
	case "gemma", "bitnet":
		s.TiedOutput = true // llama.cpp takes no output.weight
	}
	return s
}

// gateless reports whether s's feed-forward has no gate: down(act(up·x))
// (arcee's, nemotron's and jais2's ReLU², apertus's xIELU, starcoder2's,
// phi2's, falcon's, mpt's and classicFused's GELU).
func (s ModelSpec) gateless() bool {
	return s.Arch == "arcee" || s.Arch == "apertus" || s.Arch == "starcoder2" || s.Arch == "nemotron" || s.Arch == "jais2" || s.Arch == "phi2" || s.Arch == "falcon" ||
		s.Arch == "mpt" || s.Arch == "codeshell" || s.classicFused()
}

// denseQKNorm reports whether s has per-head Q/K norms of its own
// (apertus before RoPE, hunyuan-dense and hunyuan-moe after).
func (s ModelSpec) denseQKNorm() bool {
	return s.Arch == "apertus" || s.Arch == "hunyuan-dense" || s.Arch == "hunyuan-moe"
}

// addDenseArchKV writes the keys only these architectures have, as
// llama.cpp's converters write them.
func (s ModelSpec) addDenseArchKV(g *gguf.Writer) {
	switch s.Arch {
	case "cohere2", "command-r":
		if s.Arch == "cohere2" {
			g.AddKV("cohere2.attention.sliding_window", uint32(s.SlidingWindow))
		}
		AddCohereKV(g, s.Arch, s.NormEps, s.LogitScale)
	case "apertus":
		AddXIELU(g, s.XIELU)
	case "starcoder2", "nemotron", "jais2", "stablelm", "phi2", "gpt2", "starcoder", "gptneox", "olmo", "falcon", "bloom", "mpt", "orion", "codeshell":
		g.AddKV(s.Arch+".attention.layer_norm_epsilon", s.NormEps)
		if s.Arch == "gptneox" {
			g.AddKV("gptneox.use_parallel_residual", !s.Sequential)
		}
		if s.ClampKQV != 0 {
			g.AddKV(s.Arch+".attention.clamp_kqv", s.ClampKQV)
		}
		if s.MaxALiBiBias != 0 {
			g.AddKV(s.Arch+".attention.max_alibi_bias", s.MaxALiBiBias)
		}
	case "bitnet":
		if s.HiddenAct != "" {
			g.AddKV("bitnet.hidden_activation", s.HiddenAct)
		}
	}
}

// AddCohereKV writes the LayerNorm epsilon and logit scale of a Cohere
// model of architecture arch (cohere2, command-r); a cohere2's window is
// the caller's.
func AddCohereKV(g *gguf.Writer, arch string, eps, logitScale float32) {
	g.AddKV(arch+".attention.layer_norm_epsilon", eps)
	g.AddKV(arch+".logit_scale", logitScale)
}

// AddXIELU writes apertus's xIELU parameters as the converter does: four
// global keys (no architecture prefix), each one float32 a layer, of the
// raw alpha_n, alpha_p, beta and eps.
func AddXIELU(g *gguf.Writer, layers [][4]float32) {
	for k, key := range []string{"xielu.alpha_n", "xielu.alpha_p", "xielu.beta", "xielu.eps"} {
		v := make([]float32, len(layers))
		for il := range layers {
			v[il] = layers[il][k]
		}
		g.AddKV(key, v)
	}
}
