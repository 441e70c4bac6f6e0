package testutil

import (
	"github.com/lowmem/llm/internal/gguf"
)

// TinyCohere2 is a 4-layer cohere2 as Command R7B's converter writes it:
// layers 0-2 windowed (a window of 4, shorter than the tests' prompts)
// and rotated, layer 3 global and unrotated; LayerNorm without bias
// (epsilon 1e-5) before attention and the feed-forward in parallel;
// logit_scale 0.25 (Command R7B's); the output tied to the embedding, as
// llama.cpp requires; Q8_0 weights.
func TinyCohere2() ModelSpec {
	s := tiny("cohere2", 47)
	s.Layers, s.RopeBase, s.NormEps, s.TiedOutput = 4, 50000, 1e-5, true
	s.SlidingWindow, s.LogitScale = 4, 0.25
	return s
}

// TinyArcee is a 2-layer arcee (AFM-4.5B's layers: llama's attention, a
// gate-less ReLU² feed-forward) with YaRN ×4 over 16 positions, as
// AFM-4.5B's 64K files state it; Q8_0 weights.
func TinyArcee() ModelSpec {
	s := tiny("arcee", 53)
	s.RopeBase, s.RMSEps = 10000, 1e-5
	s.Yarn = &Yarn{Factor: 4, OrigContext: 16}
	return s
}

// TinyApertus is a 2-layer apertus: per-head Q/K norms before NEOX RoPE,
// a gate-less xIELU feed-forward whose raw parameters differ between the
// layers (xielu.* arrays, as the converter writes them); Q8_0 weights.
func TinyApertus() ModelSpec {
	s := tiny("apertus", 59)
	s.RopeBase, s.RMSEps = 12000000, 1e-5
	s.XIELU = [][4]float32{{0.8, 0.8, 0.5, -1e-6}, {-1.5, 2.5, 0.25, -1e-6}}
	return s
}

// TinyHunyuanDense is a 2-layer hunyuan-dense: NEOX RoPE on a base already
// scaled by alpha (the converter's 10000·1000^(16/14) for this head size),
// then per-head Q/K norms; tied output; Q8_0 weights.
func TinyHunyuanDense() ModelSpec {
	s := tiny("hunyuan-dense", 61)
	s.RopeBase, s.RMSEps, s.TiedOutput = 26826958, 1e-5, true
	return s
}

// denseArch reports whether s is one of the architectures this file
// describes (cohere2, arcee, apertus, hunyuan-dense).
func (s ModelSpec) denseArch() bool {
	switch s.Arch {
	case "cohere2", "arcee", "apertus", "hunyuan-dense":
		return true
	}
	return false
}

// withDenseArchDefaults fills a cohere2's LayerNorm epsilon (1e-5), its
// output (always tied) and logit scale (0.25), and an apertus's xIELU
// parameters (Apertus-8B's initial ones, alike in every layer).
func (s ModelSpec) withDenseArchDefaults() ModelSpec {
	switch s.Arch {
	case "cohere2":
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
	}
	return s
}

// gateless reports whether s's feed-forward has no gate: down(act(up·x))
// (arcee's ReLU², apertus's xIELU).
func (s ModelSpec) gateless() bool { return s.Arch == "arcee" || s.Arch == "apertus" }

// denseQKNorm reports whether s has per-head Q/K norms of its own
// (apertus before RoPE, hunyuan-dense after).
func (s ModelSpec) denseQKNorm() bool { return s.Arch == "apertus" || s.Arch == "hunyuan-dense" }

// addDenseArchKV writes the keys only these architectures have, as
// llama.cpp's converters write them.
func (s ModelSpec) addDenseArchKV(g *gguf.Writer) {
	switch s.Arch {
	case "cohere2":
		g.AddKV("cohere2.attention.sliding_window", uint32(s.SlidingWindow))
		AddCohere2KV(g, s.NormEps, s.LogitScale)
	case "apertus":
		AddXIELU(g, s.XIELU)
	}
}

// AddCohere2KV writes a cohere2's LayerNorm epsilon and logit scale (its
// window is the caller's).
func AddCohere2KV(g *gguf.Writer, eps, logitScale float32) {
	g.AddKV("cohere2.attention.layer_norm_epsilon", eps)
	g.AddKV("cohere2.logit_scale", logitScale)
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
