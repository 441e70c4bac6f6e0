package testutil

import (
	"fmt"
	"math"
	"slices"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// PerLayer is each layer's query heads, KV heads and feed-forward width,
// written as attention.head_count, attention.head_count_kv and
// feed_forward_length arrays (deci, openelm). A deci layer may have 0
// query heads (no attention), query heads but 0 KV heads (attn_output
// alone) or a feed-forward of 0 (a layer llama.cpp's graph drops).
type PerLayer struct {
	Heads, HeadsKV, FFN []int
}

// AddTo writes p's arrays under arch's prefix, over the common keys'
// single counts.
func (p *PerLayer) AddTo(g *gguf.Writer, arch string) {
	for _, kv := range []struct {
		k  string
		xs []int
	}{{"attention.head_count", p.Heads}, {"attention.head_count_kv", p.HeadsKV}, {"feed_forward_length", p.FFN}} {
		xs := make([]int32, len(kv.xs))
		for i, x := range kv.xs {
			xs[i] = int32(x)
		}
		g.AddKV(arch+"."+kv.k, xs)
	}
}

// perLayer makes s's common counts p's largest, as a converter's
// single-valued reader would see them, and sets p.
func perLayer(s ModelSpec, p *PerLayer) ModelSpec {
	s.PerLayer, s.Layers = p, len(p.Heads)
	s.Heads, s.HeadsKV, s.FFN = slices.Max(p.Heads), slices.Max(p.HeadsKV), slices.Max(p.FFN)
	return s
}

// TinyDeci is a 5-layer deci with every kind of layer
// Llama-3_1-Nemotron's files hold: layer 0 attention of 4 heads on 2 KV
// heads, layer 1 no attention, layer 2 attn_output alone ("linear
// attention"), layer 3 no feed-forward (a layer llama.cpp's graph drops,
// its attention 4 heads on 1), layer 4 attention of 2 heads on as many;
// feed-forwards of different widths, llama3's rope_freqs, RMS 1e-5.
func TinyDeci() ModelSpec {
	return perLayer(tiny(ModelSpec{Arch: "deci", Seed: 86, HeadDim: 16, RopeBase: 500000, RMSEps: 1e-5}),
		&PerLayer{Heads: []int{4, 0, 4, 4, 2}, HeadsKV: []int{2, 0, 0, 1, 2}, FFN: []int{128, 96, 64, 0, 160}})
}

// TinyOpenELM is a 3-layer openelm as OpenELM is made: query heads,
// KV heads and feed-forward widths growing with depth (2, 4, 6 heads of
// 16 on 1, 2, 2 KV heads; 64, 96, 128 wide), a fused attn_qkv, per-head
// Q and K norms, NEOX RoPE, the output tied to the embedding.
func TinyOpenELM() ModelSpec {
	return perLayer(tiny(ModelSpec{Arch: "openelm", Seed: 87, HeadDim: 16, RopeBase: 10000, RMSEps: 1e-6, TiedOutput: true}),
		&PerLayer{Heads: []int{2, 4, 6}, HeadsKV: []int{1, 2, 2}, FFN: []int{64, 96, 128}})
}

// perLayerTensors lists a deci's or openelm's tensors, each layer's
// sized by s.PerLayer, with llama.cpp's names: a layer without
// attention has no attn_norm, one of attn_output alone an Embd × Embd
// attn_output, one without a feed-forward no ffn_norm or ffn_*.
func (s ModelSpec) perLayerTensors() []tensorSpec {
	e, hd, w := int64(s.Embd), int64(s.HeadDim), s.WeightType
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	ts := s.ends("output_norm.weight")
	if s.Arch == "deci" {
		ts = append(ts, tensorSpec{"rope_freqs.weight", quant.F32, []int64{hd / 2}, dist{2, 0.5}})
	}
	p := s.PerLayer
	for l := range s.Layers {
		b := fmt.Sprintf("blk.%d.", l)
		q, kv, f := int64(p.Heads[l])*hd, int64(p.HeadsKV[l])*hd, int64(p.FFN[l])
		if q > 0 {
			ts = append(ts, tensorSpec{b + "attn_norm.weight", quant.F32, []int64{e}, norm})
		}
		switch {
		case q > 0 && kv == 0:
			ts = append(ts, tensorSpec{b + "attn_output.weight", w, []int64{e, e}, proj(e)})
		case q > 0 && s.Arch == "openelm":
			ts = append(ts,
				tensorSpec{b + "attn_qkv.weight", w, []int64{e, q + 2*kv}, proj(e)},
				tensorSpec{b + "attn_q_norm.weight", quant.F32, []int64{hd}, norm},
				tensorSpec{b + "attn_k_norm.weight", quant.F32, []int64{hd}, norm},
				tensorSpec{b + "attn_output.weight", w, []int64{q, e}, proj(q)})
		case q > 0:
			ts = append(ts,
				tensorSpec{b + "attn_q.weight", w, []int64{e, q}, proj(e)},
				tensorSpec{b + "attn_k.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{b + "attn_v.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{b + "attn_output.weight", w, []int64{q, e}, proj(q)})
		}
		if f > 0 {
			ts = append(ts,
				tensorSpec{b + "ffn_norm.weight", quant.F32, []int64{e}, norm},
				tensorSpec{b + "ffn_gate.weight", w, []int64{e, f}, proj(e)},
				tensorSpec{b + "ffn_up.weight", w, []int64{e, f}, proj(e)},
				tensorSpec{b + "ffn_down.weight", w, []int64{f, e}, proj(f)})
		}
	}
	return ts
}
