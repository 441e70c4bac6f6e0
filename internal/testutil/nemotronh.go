package testutil

import (
	"fmt"
	"math"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// TinyNemotronH is a 7-layer nemotron_h as Nemotron Nano 2's converter
// writes it, pattern "M-M*-M*": Mamba-2 layers 0, 2 and 5 (inner size 96,
// not 2 × the width 64, in 8 heads of 12, 2 groups, state 16, kernel 4),
// ReLU² feed-forwards of 128 at 1 and 4, attention without RoPE at 3 and 6
// (4 query and 2 KV heads of 24, so key_length is not width/heads); Q8_0
// weights, an output matrix of its own.
func TinyNemotronH() ModelSpec {
	return tiny(ModelSpec{
		Arch: "nemotron_h", Seed: 41, HeadDim: 24, RMSEps: 1e-5, Pattern: "M-M*-M*",
		SSMInner: 96, SSMState: 16, SSMHeads: 8, SSMGroups: 2,
	})
}

// TinyNemotronHMoE is TinyNemotronH made Nemotron 3 Nano's way
// (nemotron_h_moe), pattern "MEM*EM*": its feed-forward layers (E) 8
// gate-less experts of width 64, 2 a token, chosen by their sigmoid plus
// a selection bias, weighted by the sigmoid renormalised and scaled by
// 2.5, beside a gate-less shared expert of 96.
func TinyNemotronHMoE() ModelSpec {
	s := TinyNemotronH()
	s.Arch, s.Seed, s.Pattern = "nemotron_h_moe", 43, "MEM*EM*"
	s.Experts, s.ExpertsUsed, s.ExpertFFN, s.SharedFFN, s.RouterGain = 8, 2, 64, 96, 4
	s.FFN = s.ExpertFFN
	return s
}

// withNemotronHDefaults fills a nemotron_h spec's layers (Pattern's
// length) and kernel (4) and checks its sizes.
func (s ModelSpec) withNemotronHDefaults() (ModelSpec, error) {
	s.Layers = len(s.Pattern)
	if s.ConvKernel == 0 {
		s.ConvKernel = 4
	}
	if strings.Trim(s.Pattern, "M-E*") != "" || !strings.Contains(s.Pattern, "*") {
		return s, fmt.Errorf("testutil: nemotron_h's Pattern %q must be of M, - (E) and *, with an attention layer (*)", s.Pattern)
	}
	if s.Arch == "nemotron_h_moe" {
		if err := s.checkExperts(); err != nil || s.SharedFFN <= 0 {
			return s, fmt.Errorf("testutil: nemotron_h_moe needs experts and a shared expert (%v, SharedFFN %d)", err, s.SharedFFN)
		}
	}
	if s.SSMInner <= 0 || s.SSMState <= 0 || s.SSMHeads <= 0 || s.SSMGroups <= 0 || s.SSMInner%s.SSMHeads != 0 || s.SSMHeads%s.SSMGroups != 0 {
		return s, fmt.Errorf("testutil: nemotron_h needs SSMInner, SSMState, SSMHeads dividing SSMInner and SSMGroups dividing SSMHeads (%d, %d, %d, %d)",
			s.SSMInner, s.SSMState, s.SSMHeads, s.SSMGroups)
	}
	s.ConvLayers = nil
	for l := range s.Layers {
		if s.Pattern[l] == 'M' {
			s.ConvLayers = append(s.ConvLayers, l)
		}
	}
	return s, nil
}

// ssmInner is s's Mamba-2 inner size: SSMInner, or granitehybrid's
// 2 × Embd.
func (s ModelSpec) ssmInner() int {
	if s.SSMInner > 0 {
		return s.SSMInner
	}
	return 2 * s.Embd
}

// addNemotronHKV writes a nemotron_h spec's own keys.
func (s ModelSpec) addNemotronHKV(g *gguf.Writer) {
	AddNemotronHKV(g, s.Arch, s.Pattern, s.HeadsKV, s.FFN, SSM{Conv: s.ConvKernel, Inner: s.SSMInner, State: s.SSMState, Heads: s.SSMHeads, Groups: s.SSMGroups})
	if s.Arch == "nemotron_h_moe" {
		AddNemotronHMoEKV(g, s.Arch, s.Experts, s.ExpertsUsed, s.ExpertFFN, s.SharedFFN, 2.5)
	}
}

// AddNemotronHMoEKV writes a nemotron_h_moe's expert keys as llama.cpp's
// converter writes Nemotron 3 Nano's: the counts and widths, one shared
// expert, the weights renormalised (norm_topk_prob) and scaled by scale
// (routed_scaling_factor), one expert group.
func AddNemotronHMoEKV(g *gguf.Writer, arch string, experts, used, width, shared int, scale float32) {
	a := arch + "."
	g.AddKV(a+"expert_count", uint32(experts))
	g.AddKV(a+"expert_used_count", uint32(used))
	g.AddKV(a+"expert_feed_forward_length", uint32(width))
	g.AddKV(a+"expert_shared_feed_forward_length", uint32(shared))
	g.AddKV(a+"expert_shared_count", uint32(1))
	g.AddKV(a+"expert_weights_norm", true)
	g.AddKV(a+"expert_weights_scale", scale)
	g.AddKV(a+"expert_group_count", uint32(1))
}

// AddNemotronHKV writes a nemotron_h's keys beside the common ones, as
// llama.cpp's converter writes Nemotron-H's: head_count_kv and
// feed_forward_length one value a layer of pattern (M Mamba-2: both 0;
// - or E a feed-forward: ffn wide; * attention: headsKV heads), over the common
// keys' single values, and the ssm.* sizes m.
func AddNemotronHKV(g *gguf.Writer, arch, pattern string, headsKV, ffn int, m SSM) {
	kvs, ffns := NemotronHLayers(pattern, headsKV, ffn)
	g.AddKV(arch+".attention.head_count_kv", kvs)
	g.AddKV(arch+".feed_forward_length", ffns)
	m.addTo(g, arch)
}

// NemotronHLayers are the per-layer head_count_kv and feed_forward_length
// arrays of a Nemotron-H layer pattern (M Mamba-2: both 0; - or E a
// feed-forward: ffn wide; * attention: headsKV heads).
func NemotronHLayers(pattern string, headsKV, ffn int) (kvs, ffns []int32) {
	kvs, ffns = make([]int32, len(pattern)), make([]int32, len(pattern))
	for l, k := range pattern {
		switch k {
		case '*':
			kvs[l] = int32(headsKV)
		case '-', 'E':
			ffns[l] = int32(ffn)
		}
	}
	return kvs, ffns
}

// nemotronHTensors lists a nemotron_h's tensors with llama.cpp's names:
// the embedding, output norm and matrix, then each block's attn_norm and
// its operator's tensors (mambaTensors', ffn_up and ffn_down, or the
// attention projections).
func (s ModelSpec) nemotronHTensors() []tensorSpec {
	e, f := int64(s.Embd), int64(s.FFN)
	q, kv := int64(s.Heads*s.HeadDim), int64(s.HeadsKV*s.HeadDim)
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	w := s.WeightType
	ts := s.ends("output_norm.weight")
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, tensorSpec{p + "attn_norm.weight", quant.F32, []int64{e}, norm})
		switch s.Pattern[l] {
		case 'M':
			ts = append(ts, s.mambaTensors(p)...)
		case '-':
			ts = append(ts,
				tensorSpec{p + "ffn_up.weight", w, []int64{e, f}, proj(e)},
				tensorSpec{p + "ffn_down.weight", w, []int64{f, e}, proj(f)})
		case 'E':
			x, fe, sf := int64(s.Experts), int64(s.ExpertFFN), int64(s.SharedFFN)
			ts = append(ts,
				tensorSpec{p + "ffn_gate_inp.weight", quant.F32, []int64{e, x}, dist{0, s.RouterGain / math.Sqrt(float64(e))}},
				tensorSpec{p + "exp_probs_b.bias", quant.F32, []int64{x}, dist{0, 0.5}},
				tensorSpec{p + "ffn_up_exps.weight", w, []int64{e, fe, x}, proj(e)},
				tensorSpec{p + "ffn_down_exps.weight", w, []int64{fe, e, x}, proj(fe)},
				tensorSpec{p + "ffn_up_shexp.weight", w, []int64{e, sf}, proj(e)},
				tensorSpec{p + "ffn_down_shexp.weight", w, []int64{sf, e}, proj(sf)})
		default:
			ts = append(ts,
				tensorSpec{p + "attn_q.weight", w, []int64{e, q}, proj(e)},
				tensorSpec{p + "attn_k.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{p + "attn_v.weight", w, []int64{e, kv}, proj(e)},
				tensorSpec{p + "attn_output.weight", w, []int64{q, e}, proj(q)})
		}
	}
	return ts
}
