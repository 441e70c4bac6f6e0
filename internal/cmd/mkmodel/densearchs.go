package main

import (
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
)

// cohereShape is the part of a Cohere config.json (cohere2, command-r)
// only Cohere's have.
type cohereShape struct {
	NormEps, LogitScale float32
}

// mptShape is the part of an MPT config.json only MPT's has: its
// LayerNorms' epsilon (weights without bias: no_bias) and attn_config's
// alibi_bias_max.
type mptShape struct {
	NormEps, MaxALiBiBias float32
}

// gateless reports whether s's feed-forward has no gate: arcee's,
// nemotron's and jais2's ReLU², apertus's xIELU, starcoder2's, phi2's,
// falcon's, mpt's, codeshell's and classicFused's GELU.
func (s shape) gateless() bool {
	return s.Arch == "arcee" || s.Arch == "apertus" || s.Arch == "starcoder2" || s.Arch == "nemotron" || s.Arch == "jais2" || s.Arch == "phi2" || s.Arch == "falcon" ||
		s.Arch == "mpt" || s.Arch == "codeshell" || s.classicFused()
}

// allBiases reports whether every projection of s has a bias
// (starcoder2, phi2, jais2, codeshell: Q, K, V as QKVBias says, and the output, up
// and down; classicFused: the fused attn_qkv's, the output's, up and
// down).
func (s shape) allBiases() bool {
	return s.Arch == "starcoder2" || s.Arch == "phi2" || s.Arch == "jais2" || s.Arch == "codeshell" || s.classicFused()
}

// normBiases reports whether s's block and final norms have biases:
// LayerNorms (BiasNormEps), or phimoe's RMSNorms.
func (s shape) normBiases() bool { return s.BiasNormEps != 0 || s.Arch == "phimoe" }

// headBias reports whether s's output has a bias (phi2, phimoe).
func (s shape) headBias() bool { return s.Arch == "phi2" || s.Arch == "phimoe" }

// learnedPositions reports whether s is a decoder of learned positions
// (gpt2, starcoder): position_embd, a row a trained position.
func (s shape) learnedPositions() bool { return s.Arch == "gpt2" || s.Arch == "starcoder" }

// classicFused reports whether s is of GPT-2's family of layouts (gpt2,
// starcoder, gptneox, bloom): Q, K and V fused in attn_qkv with its bias.
func (s shape) classicFused() bool {
	return s.learnedPositions() || s.Arch == "gptneox" || s.Arch == "bloom"
}

// fusedQKV reports whether s's Q, K and V are one attn_qkv (phi3,
// bailingmoe2, falcon, mpt, plamo3, classicFused, and chatglm as the
// converter writes ChatGLM's query_key_value).
func (s shape) fusedQKV() bool {
	return s.Arch == "phi3" || s.Arch == "bailingmoe2" || s.Arch == "falcon" || s.Arch == "mpt" || s.Arch == "plamo3" || s.classicFused() ||
		s.Arch == "chatglm" || s.Arch == "neo-bert" || s.Arch == "openelm"
}

// unitNorms reports whether s's norms have no weight or bias, of which
// the file holds nothing (olmo's LayerNorms: OLMo 1; talkie's RMSNorms).
func (s shape) unitNorms() bool { return s.Arch == "olmo" || s.Arch == "talkie" }

// parallel reports whether one norm feeds attention and the feed-forward
// side by side, with no ffn_norm (cohere2, command-r, phi2, falcon).
func (s shape) parallel() bool { return s.Cohere != nil || s.Arch == "phi2" || s.Arch == "falcon" }

// apertusXIELU is Apertus's xIELU parameters as its modelling code
// initialises them (alpha_p and alpha_n 0.8 before softplus, beta 0.5,
// eps -1e-6), which a random-weight file takes in every layer.
var apertusXIELU = [4]float32{0.8, 0.8, 0.5, -1e-6}

// addDenseArchKV writes the keys only cohere2 and command-r (LayerNorm
// epsilon, logit scale), apertus (the xielu.* arrays), the LayerNorms with biases
// (starcoder2, nemotron: their epsilon), gptneox (its parallel residual)
// bitnet (its hidden_activation), olmo (the LayerNorm epsilon, 1e-5
// as llama.cpp's converter writes it for OLMo) and mpt (its epsilon and
// ALiBi maximum bias) have.
func (s shape) addDenseArchKV(g *gguf.Writer) {
	if c := s.Cohere; c != nil {
		testutil.AddCohereKV(g, s.Arch, c.NormEps, c.LogitScale)
	}
	if s.BiasNormEps != 0 {
		g.AddKV(s.Arch+".attention.layer_norm_epsilon", s.BiasNormEps)
	}
	if s.Arch == "gptneox" {
		g.AddKV("gptneox.use_parallel_residual", true) // Pythia's and GPT-NeoX-20B's
	}
	if s.Arch == "olmo" {
		g.AddKV(s.Arch+".attention.layer_norm_epsilon", float32(1e-5))
	}
	if s.Arch == "talkie" {
		g.AddKV(s.Arch+".logit_scale", s.LogitScale)
	}
	if s.Loops > 0 {
		g.AddKV(s.Arch+".num_loops", uint32(s.Loops))
	}
	if m := s.MPT; m != nil {
		g.AddKV(s.Arch+".attention.layer_norm_epsilon", m.NormEps)
		g.AddKV(s.Arch+".attention.max_alibi_bias", m.MaxALiBiBias)
	}
	if s.HiddenAct != "" {
		g.AddKV(s.Arch+".hidden_activation", s.HiddenAct)
	}
	if s.Arch == "apertus" {
		layers := make([][4]float32, s.Layers)
		for l := range layers {
			layers[l] = apertusXIELU
		}
		testutil.AddXIELU(g, layers)
	}
}
