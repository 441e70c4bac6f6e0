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
	return tinyMoE(ModelSpec{
		Arch: "laguna", Seed: 74, Layers: 4, HeadDim: 16, RopeDim: 8, RopeBase: 500000, RMSEps: 1e-6,
		Windowed: true, SlidingWindow: 4, Yarn: &Yarn{Factor: 4, OrigContext: 16},
		DenseLead: 1,
		Routing:   &Routing{Shared: 1, SharedWidth: 64, Scale: 2.5, Norm: true},
		Laguna:    &Laguna{GlobalHeads: 2, HeadGate: true, RopeDimSWA: 16, RopeBaseSWA: 10000},
	})
}

// TinyLagunaGlobal is a laguna as Laguna-M.1 is made: every layer global
// (no attention.sliding_window) with 4 query heads, attn_gate a row an
// element, the chosen experts' weights neither renormalised nor scaled
// (no expert_weights_norm or expert_weights_scale), and the output tied
// to the embedding.
func TinyLagunaGlobal() ModelSpec {
	s := TinyLaguna()
	s.Seed, s.Windowed, s.TiedOutput, s.Yarn, s.Label = 85, false, true, nil, "global"
	s.Routing = &Routing{Shared: 1, SharedWidth: 64}
	s.Laguna = &Laguna{}
	return s
}

// layerHeads is layer l's query heads.
func (s ModelSpec) layerHeads(l int) int {
	if s.Laguna == nil {
		return s.Heads
	}
	return s.Laguna.LayerHeads(l, s.Heads, s.Windowed)
}

// LayerHeads is layer l's query heads in a laguna of heads on its
// windowed layers: GlobalHeads (when not 0) on its global ones, which
// with a window are llama.cpp's dense-first pattern of 4 (layers 0, 4,
// …) and without one every layer.
func (l *Laguna) LayerHeads(il, heads int, windowed bool) int {
	if l.GlobalHeads > 0 && (!windowed || il%4 == 0) {
		return l.GlobalHeads
	}
	return heads
}

// outGateRows is layer l's attn_gate rows: afmoe's and Laguna-M.1's an
// element of the heads' outputs, Laguna-XS.2's a head; 0 for none.
func (s ModelSpec) outGateRows(l int) int64 {
	if s.Arch != "afmoe" && s.Arch != "laguna" {
		return 0
	}
	return int64(s.Laguna.GateRows(s.layerHeads(l), s.HeadDim))
}

// GateRows is the attn_gate rows of a layer of heads heads of headDim:
// a row a head (HeadGate), else a row an element (afmoe's too: l nil).
func (l *Laguna) GateRows(heads, headDim int) int {
	if l != nil && l.HeadGate {
		return heads
	}
	return heads * headDim
}

// AddTo writes a laguna's own keys for layers layers of heads query
// heads on the windowed ones: the per-layer query heads (over the
// common keys' single count) and the windowed layers' RoPE.
func (l *Laguna) AddTo(g *gguf.Writer, layers, heads int, windowed bool) {
	a := "laguna."
	if l.GlobalHeads > 0 {
		hs := make([]int32, layers)
		for il := range hs {
			hs[il] = int32(l.LayerHeads(il, heads, windowed))
		}
		g.AddKV(a+"attention.head_count", hs)
	}
	if l.RopeDimSWA > 0 {
		g.AddKV(a+"rope.dimension_count_swa", uint32(l.RopeDimSWA))
	}
	if l.RopeBaseSWA > 0 {
		g.AddKV(a+"rope.freq_base_swa", l.RopeBaseSWA)
	}
}
