package testutil

import "github.com/lowmem/llm/internal/gguf"

// TinyMellum is a 4-layer mellum as Mellum2's files are made:
// per-head Q/K norms before NEOX RoPE, YaRN ×4 over 32 positions on the
// global layers; attention.sliding_window 4 (shorter than the tests'
// prompts) with attention.sliding_window_pattern 4, so layers 0–2 are
// windowed and rotate unscaled, layer 3 global; in every block 8 experts
// of width 32, 2 a token, softmax-routed and renormalised; an output
// matrix of its own; Q8_0 weights.
func TinyMellum() ModelSpec {
	return tiny(ModelSpec{
		Arch: "mellum", Seed: 71, Layers: 4, RopeBase: 500000, RMSEps: 1e-6,
		Windowed: true, SlidingWindow: 4, SWAPattern: 4, Yarn: &Yarn{Factor: 4, OrigContext: 32},
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, RouterGain: 4,
	})
}

// TinyMellumPattern is TinyMellum with attention.sliding_window_pattern
// one flag a layer (layers 1 and 2 windowed), Q, K and V fused in
// attn_qkv, and no YaRN.
func TinyMellumPattern() ModelSpec {
	s := TinyMellum()
	s.Seed, s.Yarn, s.FusedQKV, s.SWAPattern = 85, nil, true, 0
	s.SWALayers = []bool{false, true, true, false}
	return s
}

// addMellumWindow writes a mellum's attention.sliding_window and its
// attention.sliding_window_pattern, one flag a layer (SWALayers) or a
// period (SWAPattern; 0 writes none, which llama.cpp refuses).
func (s ModelSpec) addMellumWindow(g *gguf.Writer) {
	a := s.Arch + "."
	g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	switch {
	case s.SWALayers != nil:
		g.AddKV(a+"attention.sliding_window_pattern", s.SWALayers)
	case s.SWAPattern > 0:
		g.AddKV(a+"attention.sliding_window_pattern", uint32(s.SWAPattern))
	}
}

// TinyMaincoder is a 2-layer maincoder: NORM RoPE, then per-head Q/K
// norms; the output tied to the embedding, as Maincoder-1B's is; Q8_0
// weights.
func TinyMaincoder() ModelSpec {
	return tiny(ModelSpec{Arch: "maincoder", Seed: 91, RopeBase: 1000000, RMSEps: 1e-5, TiedOutput: true})
}
