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
	return tinyMoE(ModelSpec{
		Arch: "mellum", Seed: 71, Layers: 4, RopeBase: 500000, RMSEps: 1e-6,
		Windowed: true, SlidingWindow: 4, SWAPattern: 4, Yarn: &Yarn{Factor: 4, OrigContext: 32},
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

// addWindowPattern writes a mellum's or plamo3's attention.sliding_window
// and its attention.sliding_window_pattern, one flag a layer (SWALayers)
// or a period (SWAPattern; 0 writes none: llama.cpp refuses a mellum
// without it, a plamo3 takes a period of 8), and rope.freq_base_swa when
// RopeBaseSWA is set.
func (s ModelSpec) addWindowPattern(g *gguf.Writer) {
	a := s.Arch + "."
	g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	switch {
	case s.SWALayers != nil:
		g.AddKV(a+"attention.sliding_window_pattern", s.SWALayers)
	case s.SWAPattern > 0:
		g.AddKV(a+"attention.sliding_window_pattern", uint32(s.SWAPattern))
	}
	if s.RopeBaseSWA > 0 {
		g.AddKV(a+"rope.freq_base_swa", s.RopeBaseSWA)
	}
}

// TinyMaincoder is a 2-layer maincoder: NORM RoPE, then per-head Q/K
// norms; the output tied to the embedding, as Maincoder-1B's is; Q8_0
// weights.
func TinyMaincoder() ModelSpec {
	return tiny(ModelSpec{Arch: "maincoder", Seed: 91, RopeBase: 1000000, RMSEps: 1e-5, TiedOutput: true})
}

// TinyPlamo3 is a 4-layer plamo3 as PLaMo 3's converter writes it:
// gemma3's norms before and after attention and the feed-forward,
// per-head Q/K norms before NEOX RoPE, Q, K and V in one attn_qkv, the
// gate and up rows in one ffn_up; attention.sliding_window 4 (shorter
// than the tests' prompts) with attention.sliding_window_pattern 2, so
// layers 0 and 2 are windowed and rotate with rope.freq_base_swa 10000,
// layers 1 and 3 global with rope.freq_base 1e6; the output tied to the
// embedding, as PLaMo 3's is; Q8_0 weights.
func TinyPlamo3() ModelSpec {
	return tiny(ModelSpec{
		Arch: "plamo3", Seed: 97, Layers: 4, RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true,
		Windowed: true, SlidingWindow: 4, SWAPattern: 2, RopeBaseSWA: 10000,
	})
}

// TinyPlamo3Pattern is TinyPlamo3 with attention.sliding_window_pattern
// one flag a layer (layers 1 and 2 windowed), no rope.freq_base_swa (the
// windowed layers rotate with rope.freq_base) and an output matrix of its
// own.
func TinyPlamo3Pattern() ModelSpec {
	s := TinyPlamo3()
	s.Seed, s.SWAPattern, s.RopeBaseSWA, s.TiedOutput, s.Label = 96, 0, 0, false, "pattern"
	s.SWALayers = []bool{false, true, true, false}
	return s
}

// postNormSuffix ends the names of the norms after attention and the
// feed-forward: none for a plamo3, whose llama.cpp loader asks for
// blk.N.post_attention_norm and blk.N.post_ffw_norm, .weight otherwise.
func (s ModelSpec) postNormSuffix() string {
	if s.Arch == "plamo3" {
		return ""
	}
	return ".weight"
}

// TinyNanbeige is a 2-layer nanbeige whose stack runs twice
// (num_loops 2), output_norm between the runs (no
// skip_loop_final_norm): llama's block, NORM RoPE, Q/K/V biases; an
// output matrix of its own; Q8_0 weights.
func TinyNanbeige() ModelSpec {
	return tiny(ModelSpec{Arch: "nanbeige", Seed: 252, RopeBase: 1000000, RMSEps: 1e-5, Loops: 2, QKVBias: true})
}

// TinyNanbeigeSkip is TinyNanbeige run 3 times with
// skip_loop_final_norm true (no norm between the runs), Q, K and V in
// one attn_qkv without biases, and the output tied to the embedding.
func TinyNanbeigeSkip() ModelSpec {
	s := TinyNanbeige()
	s.Seed, s.Loops, s.SkipLoopNorm, s.QKVBias, s.FusedQKV, s.TiedOutput, s.Label = 249, 3, true, false, true, true, "skip"
	return s
}
