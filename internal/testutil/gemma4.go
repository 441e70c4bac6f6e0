package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// Gemma4 is what a gemma4 spec has beside the common fields: HeadDim is
// the global layers' head size, SWALayers the windowed layers,
// PerLayerEmbd the per-layer input width (0: none, as the 31B) and
// SharedKV the trailing layers that share KV caches.
type Gemma4 struct {
	HeadDimSWA  int  // attention.key_length_swa (and value_length_swa)
	KVHeadsFull int  // the global layers' KV heads (0: HeadsKV)
	FFNShared   int  // the KV-sharing layers' feed-forward width (0: FFN)
	NoV         bool // the global layers have no attn_v: their keys are their values
	OutScale    bool // every block has layer_output_scale
	// With ModelSpec.Experts, every block's experts beside its dense
	// feed-forward (26B-A4B): SplitExperts writes their gate and up as
	// ffn_gate_exps and ffn_up_exps, not the converter's fused
	// ffn_gate_up_exps; NoExpertScale leaves out ffn_down_exps.scale.
	SplitExperts, NoExpertScale bool
}

// TinyGemma4 is a 5-layer gemma4 with every piece of the dense graph:
// layers 0, 1 and 3 windowed (a window of 4, heads of 32, 2 KV heads),
// 2 and 4 global (heads of 64 rotated with rope_freqs' factors, 1 KV
// head, no attn_v); the last two layers share the KV caches of layers 1
// and 2 and have a feed-forward twice as wide; per-layer inputs of 32, a
// layer output scale (about 1.5) in every block; Q8_0 weights, a tied
// output.
func TinyGemma4() ModelSpec {
	return tiny(ModelSpec{
		Arch: "gemma4", Seed: 29,
		Layers: 5, HeadDim: 64, RopeBase: 1000000, RopeBaseSWA: 10000, RMSEps: 1e-6, TiedOutput: true,
		SlidingWindow: 4, SWALayers: []bool{true, true, false, true, false},
		PerLayerEmbd: 32, SharedKV: 2,
		Gemma4: &Gemma4{HeadDimSWA: 32, KVHeadsFull: 1, FFNShared: 256, NoV: true, OutScale: true},
	})
}

// TinyGemma4MoE is a 4-layer gemma4 shaped as the 26B-A4B: layers 0, 1
// and 3 windowed (a window of 4, heads of 32, 2 KV heads), layer 2
// global (heads of 64, 1 KV head, no attn_v); no per-layer inputs or
// shared KV; every block's dense feed-forward of 128 beside 8 experts of
// 32, 2 a token, their gate and up fused, each with its output scale;
// a layer output scale; Q8_0 weights, a tied output.
func TinyGemma4MoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "gemma4", Seed: 32, Label: "moe",
		Layers: 4, HeadDim: 64, RopeBase: 1000000, RopeBaseSWA: 10000, RMSEps: 1e-6, TiedOutput: true,
		SlidingWindow: 4, SWALayers: []bool{true, true, false, true},
		Gemma4: &Gemma4{HeadDimSWA: 32, KVHeadsFull: 1, NoV: true, OutScale: true},
	})
}

// gemma4ExpertTensors are a Gemma 4 block's expert tensors, p its
// prefix: the router and its input scale (about 4, against the
// router's 1/sqrt(Embd), so that the routing is decisive), the norms
// before the experts and after each branch, the experts (gate and up
// fused unless SplitExperts) and their output scales (about 1).
func (s ModelSpec) gemma4ExpertTensors(p string) []tensorSpec {
	e, x, fe := int64(s.Embd), int64(s.Experts), int64(s.ExpertFFN)
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	w := s.ExpertType
	if w == quant.F32 {
		w = s.WeightType
	}
	gain := s.RouterGain
	if gain == 0 {
		gain = 1
	}
	ts := []tensorSpec{
		{p + "ffn_gate_inp.weight", quant.F32, []int64{e, x}, dist{0, gain / math.Sqrt(float64(e))}},
		{p + "ffn_gate_inp.scale", quant.F32, []int64{e}, dist{4, 1}},
		{p + "pre_ffw_norm_2.weight", quant.F32, []int64{e}, norm},
		{p + "post_ffw_norm_1.weight", quant.F32, []int64{e}, norm},
		{p + "post_ffw_norm_2.weight", quant.F32, []int64{e}, norm},
	}
	if s.g4().SplitExperts {
		ts = append(ts,
			tensorSpec{p + "ffn_gate_exps.weight", w, []int64{e, fe, x}, proj(e)},
			tensorSpec{p + "ffn_up_exps.weight", w, []int64{e, fe, x}, proj(e)})
	} else {
		ts = append(ts, tensorSpec{p + "ffn_gate_up_exps.weight", w, []int64{e, 2 * fe, x}, proj(e)})
	}
	ts = append(ts, tensorSpec{p + "ffn_down_exps.weight", w, []int64{fe, e, x}, proj(fe)})
	if !s.g4().NoExpertScale {
		ts = append(ts, tensorSpec{p + "ffn_down_exps.scale", quant.F32, []int64{x}, dist{1, 0.3}})
	}
	return ts
}

// g4 returns the spec's Gemma4, the zero one when nil.
func (s ModelSpec) g4() Gemma4 {
	if s.Gemma4 == nil {
		return Gemma4{HeadDimSWA: s.HeadDim}
	}
	return *s.Gemma4
}

// g4Layer is layer l's head size, KV heads and feed-forward width.
func (s ModelSpec) g4Layer(l int) (d, kv, ffn int) {
	g := s.g4()
	d, kv, ffn = s.HeadDim, s.HeadsKV, s.FFN
	if l < len(s.SWALayers) && s.SWALayers[l] {
		d = g.HeadDimSWA
	} else if g.KVHeadsFull > 0 {
		kv = g.KVHeadsFull
	}
	if g.FFNShared > 0 && l >= s.Layers-s.SharedKV {
		ffn = g.FFNShared
	}
	return d, kv, ffn
}

// addGemma4KV writes a gemma4's own keys (AddGemma4KV).
func (s ModelSpec) addGemma4KV(g *gguf.Writer) {
	k := Gemma4Keys{Window: s.SlidingWindow, HeadDimSWA: s.g4().HeadDimSWA, PerLayer: s.PerLayerEmbd, Shared: s.SharedKV,
		SWA: s.SWALayers, KVHeads: make([]int32, s.Layers), FFN: make([]int32, s.Layers), RopeBaseSWA: s.RopeBaseSWA}
	for l := range s.Layers {
		_, kv, f := s.g4Layer(l)
		k.KVHeads[l], k.FFN[l] = int32(kv), int32(f)
	}
	AddGemma4KV(g, k)
}

// Gemma4Keys are the values of Gemma 4's own keys.
type Gemma4Keys struct {
	Window, HeadDimSWA, PerLayer, Shared int
	SWA                                  []bool  // one flag a layer: windowed
	KVHeads, FFN                         []int32 // one value a layer
	RopeBaseSWA                          float32
}

// AddGemma4KV writes Gemma 4's own keys as llama.cpp's converter does:
// per-layer KV heads and feed-forward widths (over the common keys'
// single values), the window and its per-layer flags, the windowed
// layers' head size, rotated dims and RoPE base, the per-layer input
// width, the shared KV layers and the final softcap, 30.
func AddGemma4KV(g *gguf.Writer, k Gemma4Keys) {
	a := "gemma4."
	g.AddKV(a+"attention.head_count_kv", k.KVHeads)
	g.AddKV(a+"feed_forward_length", k.FFN)
	g.AddKV(a+"attention.sliding_window", uint32(k.Window))
	g.AddKV(a+"attention.sliding_window_pattern", k.SWA)
	d := uint32(k.HeadDimSWA)
	g.AddKV(a+"attention.key_length_swa", d)
	g.AddKV(a+"attention.value_length_swa", d)
	g.AddKV(a+"rope.dimension_count_swa", d)
	g.AddKV(a+"rope.freq_base_swa", k.RopeBaseSWA)
	g.AddKV(a+"embedding_length_per_layer_input", uint32(k.PerLayer))
	g.AddKV(a+"attention.shared_kv_layers", uint32(k.Shared))
	g.AddKV(a+"final_logit_softcapping", float32(30))
}

// gemma4Tensors lists a gemma4's tensors with llama.cpp's names and each
// layer's own sizes; rope_freqs' divisors lie around 2, so that dropping
// them moves the output.
func (s ModelSpec) gemma4Tensors() []tensorSpec {
	e, v, h, w := int64(s.Embd), int64(s.Vocab), int64(s.Heads), s.WeightType
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	g := s.g4()
	ts := []tensorSpec{
		{"token_embd.weight", s.OutputType, []int64{e, v}, dist{0, 1}},
		{"output_norm.weight", quant.F32, []int64{e}, norm},
		{"rope_freqs.weight", quant.F32, []int64{int64(s.HeadDim / 2)}, dist{2, 0.5}},
	}
	if !s.TiedOutput {
		ts = append(ts, tensorSpec{"output.weight", s.OutputType, []int64{e, v}, dist{0, 4 / math.Sqrt(float64(e))}})
	}
	a := int64(s.PerLayerEmbd)
	if a > 0 {
		pl := int64(s.Layers) * a
		ts = append(ts,
			tensorSpec{"per_layer_token_embd.weight", w, []int64{pl, v}, dist{0, 1}},
			tensorSpec{"per_layer_model_proj.weight", w, []int64{e, pl}, proj(e)},
			tensorSpec{"per_layer_proj_norm.weight", quant.F32, []int64{a}, norm})
	}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		di, kvi, fi := s.g4Layer(l)
		d, q, kv, f := int64(di), h*int64(di), int64(kvi*di), int64(fi)
		global := l >= len(s.SWALayers) || !s.SWALayers[l]
		own := l < s.Layers-s.SharedKV
		ts = append(ts,
			tensorSpec{p + "attn_norm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "attn_q.weight", w, []int64{e, q}, proj(e)},
			tensorSpec{p + "attn_q_norm.weight", quant.F32, []int64{d}, norm})
		if own {
			ts = append(ts,
				tensorSpec{p + "attn_k.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{p + "attn_k_norm.weight", quant.F32, []int64{d}, norm})
			if !global || !g.NoV {
				ts = append(ts, tensorSpec{p + "attn_v.weight", w, []int64{e, kv}, proj(e)})
			}
		}
		ts = append(ts,
			tensorSpec{p + "attn_output.weight", w, []int64{q, e}, proj(q)},
			tensorSpec{p + "post_attention_norm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "ffn_gate.weight", w, []int64{e, f}, proj(e)},
			tensorSpec{p + "ffn_up.weight", w, []int64{e, f}, proj(e)},
			tensorSpec{p + "ffn_down.weight", w, []int64{f, e}, proj(f)},
			tensorSpec{p + "post_ffw_norm.weight", quant.F32, []int64{e}, norm})
		if s.Experts > 0 {
			ts = append(ts, s.gemma4ExpertTensors(p)...)
		}
		if g.OutScale {
			ts = append(ts, tensorSpec{p + "layer_output_scale.weight", quant.F32, []int64{1}, dist{1.5, 0.2}})
		}
		if a > 0 {
			ts = append(ts,
				tensorSpec{p + "inp_gate.weight", w, []int64{e, a}, proj(e)},
				tensorSpec{p + "proj.weight", w, []int64{a, e}, proj(a)},
				tensorSpec{p + "post_norm.weight", quant.F32, []int64{e}, norm})
		}
	}
	return ts
}
