package testutil

import "github.com/lowmem/llm/internal/gguf"

// Laguna is what a laguna file says beyond its routing: the global
// layers' query heads when they differ from the windowed layers' Heads
// (attention.head_count then one count a layer), whether attn_gate has a
// row a head (Laguna-XS.2) rather than a row an element (Laguna-M.1),
// and the windowed layers' rotated dimensions and RoPE base
// (rope.dimension_count_swa, rope.freq_base_swa; 0 writes none).
type Laguna struct {
	GlobalHeads int
	HeadGate    bool
	RopeDimSWA  int
	RopeBaseSWA float32
}

// TinyLaguna is a 4-layer laguna as poolside's converter writes
// Laguna-XS.2: layer 0 global with 2 query heads rotating 8 of its 16
// dimensions with YaRN ×4 over 16 positions, layers 1–3 windowed
// (attention.sliding_window 4, shorter than the tests' prompts) with 4
// query heads rotating all 16 with base 10000, unscaled; 2 KV heads;
// per-head Q/K norms before NEOX RoPE; the attention's output times the
// softplus of attn_gate's product with its input, one value a head,
// before attn_output; layer 0's feed-forward dense, the others' 8
// experts of width 32, 2 a token, chosen by their sigmoid plus a
// selection bias, weighted by the sigmoids renormalised and scaled by
// 2.5, beside one shared expert of width 64; Q8_0 weights.
func TinyLaguna() ModelSpec {
	return tiny(ModelSpec{
		Arch: "laguna", Seed: 71, Layers: 4, HeadDim: 16, RopeDim: 8, RopeBase: 500000, RMSEps: 1e-6,
		Windowed: true, SlidingWindow: 4, Yarn: &Yarn{Factor: 4, OrigContext: 16},
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, DenseLead: 1, RouterGain: 4,
		Routing: &Routing{Shared: 1, SharedWidth: 64, Scale: 2.5, Norm: true},
		Laguna:  &Laguna{GlobalHeads: 2, HeadGate: true, RopeDimSWA: 16, RopeBaseSWA: 10000},
	})
}

// TinyLagunaGlobal is a laguna as Laguna-M.1 is made: every layer global
// (no attention.sliding_window) with 4 query heads, attn_gate a row an
// element, the chosen experts' weights neither renormalised
// (expert_weights_norm false) nor scaled (expert_weights_scale 0), and
// the output tied to the embedding.
func TinyLagunaGlobal() ModelSpec {
	s := TinyLaguna()
	s.Seed, s.Windowed, s.TiedOutput, s.Yarn = 72, false, true, nil
	s.Routing = &Routing{Shared: 1, SharedWidth: 64}
	s.Laguna = &Laguna{}
	return s
}

// layerHeads is layer l's query heads.
func (s ModelSpec) layerHeads(l int) int {
	if s.Laguna != nil && s.Laguna.GlobalHeads > 0 && !s.lagunaWindowed(l) {
		return s.Laguna.GlobalHeads
	}
	return s.Heads
}

// lagunaWindowed reports whether a laguna's layer l is windowed:
// llama.cpp's dense-first pattern of 4, layers 0, 4, … global.
func (s ModelSpec) lagunaWindowed(l int) bool { return s.Windowed && l%4 != 0 }

// outGateRows is layer l's attn_gate rows: afmoe's and Laguna-M.1's an
// element of the heads' outputs, Laguna-XS.2's a head; 0 for none.
func (s ModelSpec) outGateRows(l int) int64 {
	switch {
	case s.Laguna != nil && s.Laguna.HeadGate:
		return int64(s.layerHeads(l))
	case s.Arch == "afmoe" || s.Arch == "laguna":
		return int64(s.layerHeads(l) * s.HeadDim)
	}
	return 0
}

// addLagunaKV writes a laguna's own keys: the per-layer query heads (over
// the common keys' single count), the window and the windowed layers'
// RoPE, and expert_weights_norm and expert_weights_scale, which
// llama.cpp requires (Routing.AddTo writes them only when not false or
// 0).
func (s ModelSpec) addLagunaKV(g *gguf.Writer) {
	a, l := s.Arch+".", s.Laguna
	if l.GlobalHeads > 0 {
		heads := make([]int32, s.Layers)
		for i := range heads {
			heads[i] = int32(s.layerHeads(i))
		}
		g.AddKV(a+"attention.head_count", heads)
	}
	if s.Windowed {
		g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	}
	if l.RopeDimSWA > 0 {
		g.AddKV(a+"rope.dimension_count_swa", uint32(l.RopeDimSWA))
	}
	if l.RopeBaseSWA > 0 {
		g.AddKV(a+"rope.freq_base_swa", l.RopeBaseSWA)
	}
	if !s.Routing.Norm {
		g.AddKV(a+"expert_weights_norm", false)
	}
	if s.Routing.Scale == 0 {
		g.AddKV(a+"expert_weights_scale", float32(0))
	}
}
