package testutil

import (
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// Mimo2 is what a mimo2 file says beyond its experts: the global layers'
// KV heads (HeadsKV is the windowed layers'), the values' head size
// (HeadDim is the keys'), the windowed layers (one flag a layer), the
// attention's output scale (attention.value_scale; 0 writes none) and
// whether Q, K and V are one attn_qkv.
type Mimo2 struct {
	GlobalKV   int
	HeadDimV   int
	Windowed   []bool
	ValueScale float32
	Fused      bool
}

// TinyMimo2 is a 4-layer mimo2 as MiMo-V2-Flash is made: layers 0 and 3
// global with 1 KV head and base 5e6, layers 1 and 2 windowed
// (attention.sliding_window 4, shorter than the tests' prompts) with 2 KV
// heads, base 10000 and attention sinks; 4 query heads of keys of 16
// (8 rotated, NEOX) and values of 8; the attention's output times 0.707;
// layer 0's feed-forward dense, the others' 8 experts of width 32, 2 a
// token, chosen by their sigmoid plus a selection bias and weighted by
// the sigmoids renormalised; Q8_0 weights.
func TinyMimo2() ModelSpec {
	return tiny(ModelSpec{
		Arch: "mimo2", Seed: 231, Layers: 4, HeadDim: 16, RopeDim: 8, RopeBase: 5e6, RopeBaseSWA: 10000, RMSEps: 1e-5,
		SlidingWindow: 4, Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, DenseLead: 1, RouterGain: 4,
		Mimo2: &Mimo2{GlobalKV: 1, HeadDimV: 8, Windowed: []bool{false, true, true, false}, ValueScale: 0.707},
	})
}

// TinyMimo2Fused is TinyMimo2 with attn_qkv, its global layers' rows
// fewer than the windowed ones', and no value scale.
func TinyMimo2Fused() ModelSpec {
	s := TinyMimo2()
	s.Seed, s.Label = 232, "fused"
	s.Mimo2 = &Mimo2{GlobalKV: 1, HeadDimV: 8, Windowed: []bool{false, true, true, false}, Fused: true}
	return s
}

// layerKV is a mimo2's layer l's KV heads.
func (s ModelSpec) layerKV(l int) int {
	if m := s.Mimo2; m != nil && m.GlobalKV > 0 && !m.Windowed[l] {
		return m.GlobalKV
	}
	return s.HeadsKV
}

// addMimo2KV writes a mimo2's own keys: the per-layer KV heads, the head
// sizes, the window flags and base, and the output scale.
func (s ModelSpec) addMimo2KV(g *gguf.Writer) {
	a, m := "mimo2.", s.Mimo2
	kvs := make([]int32, s.Layers)
	for l := range kvs {
		kvs[l] = int32(s.layerKV(l))
	}
	g.AddKV(a+"attention.head_count_kv", kvs)
	g.AddKV(a+"attention.key_length", uint32(s.HeadDim))
	g.AddKV(a+"attention.value_length", uint32(m.HeadDimV))
	g.AddKV(a+"attention.sliding_window", uint32(s.SlidingWindow))
	g.AddKV(a+"attention.sliding_window_pattern", m.Windowed)
	if s.RopeBaseSWA > 0 {
		g.AddKV(a+"rope.freq_base_swa", s.RopeBaseSWA)
	}
	if m.ValueScale != 0 {
		g.AddKV(a+"attention.value_scale", m.ValueScale)
	}
}

// mimo2Block lists a mimo2 block's tensors at prefix p: its attention
// (sinks on the windowed layers) and ffn, its feed-forward.
func (s ModelSpec) mimo2Block(p string, l int, ffn []tensorSpec) []tensorSpec {
	m, w := s.Mimo2, s.WeightType
	e := int64(s.Embd)
	q, k, v := int64(s.Heads*s.HeadDim), int64(s.layerKV(l)*s.HeadDim), int64(s.layerKV(l)*m.HeadDimV)
	o := int64(s.Heads * m.HeadDimV)
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	var ts []tensorSpec // attn_norm is the caller's, as every block's
	if m.Fused {
		ts = append(ts, tensorSpec{p + "attn_qkv.weight", w, []int64{e, q + k + v}, proj(e)})
	} else {
		ts = append(ts,
			tensorSpec{p + "attn_q.weight", w, []int64{e, q}, proj(e)},
			tensorSpec{p + "attn_k.weight", w, []int64{e, k}, proj(e)},
			tensorSpec{p + "attn_v.weight", w, []int64{e, v}, proj(e)})
	}
	ts = append(ts, tensorSpec{p + "attn_output.weight", w, []int64{o, e}, proj(o)})
	if m.Windowed[l] {
		// Sinks around the scores' size, so that they matter.
		ts = append(ts, tensorSpec{p + "attn_sinks.weight", quant.F32, []int64{int64(s.Heads)}, dist{0, 1}})
	}
	ts = append(ts, tensorSpec{p + "ffn_norm.weight", quant.F32, []int64{e}, norm})
	return append(ts, ffn...)
}
