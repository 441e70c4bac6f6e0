package testutil

import (
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// TinyGemma3n is a 4-layer gemma3n with every piece of its graph: four
// AltUp streams, LAuReL of rank 32, per-layer inputs of 32, layers 0 and 2
// windowed (a window of 4) and 1 and 3 global, the last two layers
// sharing the KV caches of layers 0 and 1, and activation sparsity in
// every layer (llama.cpp's first ten); Q8_0 weights, a tied output.
func TinyGemma3n() ModelSpec {
	return tiny(ModelSpec{
		Arch: "gemma3n", Seed: 21, Layers: 4, HeadDim: 32, RopeBase: 1000000, RMSEps: 1e-6, TiedOutput: true,
		SlidingWindow: 4, SWALayers: []bool{true, false, true, false},
		AltUp: 4, PerLayerEmbd: 32, LaurelRank: 32, SharedKV: 2,
	})
}

// withGemma3nDefaults fills a gemma3n spec's zero fields.
func (s ModelSpec) withGemma3nDefaults() ModelSpec {
	if s.AltUp == 0 {
		s.AltUp = 4
	}
	if s.PerLayerEmbd == 0 {
		s.PerLayerEmbd = 32
	}
	if s.LaurelRank == 0 {
		s.LaurelRank = 32
	}
	if s.SWALayers == nil {
		s.SWALayers = Gemma3nPattern(s.Layers)
	}
	return s
}

// Gemma3nPattern is the released Gemma 3n models' layer kinds for n
// layers: four windowed layers, then a global one.
func Gemma3nPattern(n int) []bool {
	p := make([]bool, n)
	for i := range p {
		p[i] = i%5 < 4
	}
	return p
}

// addGemma3nKV writes a gemma3n's own keys as llama.cpp's converter
// does.
func (s ModelSpec) addGemma3nKV(g *gguf.Writer) {
	AddGemma3nKV(g, s.Layers, s.SlidingWindow, s.AltUp, s.PerLayerEmbd, s.SharedKV, s.SWALayers)
}

// AddGemma3nKV writes Gemma 3n's keys for a model of layers layers, with
// the types llama.cpp's converter gives them: the window, the per-layer
// flags of the windowed layers, AltUp's stream count and active stream
// (0), the per-layer input width, the shared KV layers, and the
// activation sparsity scales (the normal quantile of 0.95 for the first
// ten layers, of 0 after).
func AddGemma3nKV(g *gguf.Writer, layers, window, altup, perLayer, shared int, swa []bool) {
	a := "gemma3n."
	g.AddKV(a+"attention.sliding_window", uint32(window))
	g.AddKV(a+"attention.sliding_window_pattern", swa)
	g.AddKV(a+"altup.active_idx", uint32(0))
	g.AddKV(a+"altup.num_inputs", uint32(altup))
	g.AddKV(a+"embedding_length_per_layer_input", uint32(perLayer))
	g.AddKV(a+"attention.shared_kv_layers", uint32(shared))
	sparsity := make([]float32, layers)
	for i := range sparsity {
		sparsity[i] = float32(math.Inf(-1))
		if i < 10 {
			sparsity[i] = 1.6448536
		}
	}
	g.AddKV(a+"activation_sparsity_scale", sparsity)
}

// gemma3nGlobals are a gemma3n's tensors outside its blocks: the
// per-layer token embeddings and their projection and norm, AltUp's
// projections into and out of the extra streams.
func (s ModelSpec) gemma3nGlobals() []tensorSpec {
	e, v, k := int64(s.Embd), int64(s.Vocab), int64(s.AltUp)
	pl := int64(s.Layers * s.PerLayerEmbd)
	proj := dist{0, 1 / math.Sqrt(float64(e))}
	return []tensorSpec{
		{"per_layer_token_embd.weight", s.WeightType, []int64{pl, v}, dist{0, 1}},
		{"per_layer_model_proj.weight", s.WeightType, []int64{e, pl}, proj},
		{"per_layer_proj_norm.weight", quant.F32, []int64{int64(s.PerLayerEmbd)}, dist{1, 0.1}},
		{"altup_proj.weight", s.WeightType, []int64{e, e, k - 1}, proj},
		{"altup_unembd_proj.weight", s.WeightType, []int64{e, e, k - 1}, proj},
	}
}

// gemma3nBlock are the tensors a gemma3n block has beyond gemma3's, with
// spreads that make each piece move the output: a router whose
// modalities reach tanh's bend, coefficients of order one.
func (s ModelSpec) gemma3nBlock(p string) []tensorSpec {
	e, a, k, r := int64(s.Embd), int64(s.PerLayerEmbd), int64(s.AltUp), int64(s.LaurelRank)
	w := s.WeightType
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	return []tensorSpec{
		{p + "inp_gate.weight", w, []int64{e, a}, proj(e)},
		{p + "proj.weight", w, []int64{a, e}, proj(a)},
		{p + "post_norm.weight", quant.F32, []int64{e}, norm},
		{p + "altup_correct_coef.weight", quant.F32, []int64{k, k}, dist{0, 0.5}},
		{p + "altup_correct_scale.weight", quant.F32, []int64{e}, norm},
		{p + "altup_predict_coef.weight", quant.F32, []int64{k, k * k}, dist{0, 0.5}},
		{p + "altup_router.weight", quant.F32, []int64{e, k}, dist{0, 8}},
		{p + "altup_router_norm.weight", quant.F32, []int64{e}, norm},
		{p + "laurel_l.weight", w, []int64{e, r}, proj(e)},
		{p + "laurel_r.weight", w, []int64{r, e}, proj(r)},
		{p + "laurel_post_norm.weight", quant.F32, []int64{e}, norm},
	}
}
