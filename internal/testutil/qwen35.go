package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// TinyQwen35 is a 4-layer qwen35 as Qwen 3.5's converter writes it:
// full_attention_interval 4 (layers 0–2 gated delta-net, layer 3 gated
// attention with per-head Q/K norms, heads of 32 of which RoPE turns 16),
// the delta-net layers' 4 value heads reading 2 key heads of 16 (inner
// size 64, kernel 4); a dense SwiGLU; Q8_0 weights.
func TinyQwen35() ModelSpec {
	return tiny(ModelSpec{
		Arch: "qwen35", Seed: 37, Layers: 4, HeadDim: 32, RopeDim: 16, RopeBase: 10000000, RMSEps: 1e-6,
		SSMState: 16, SSMHeads: 4, SSMGroups: 2,
	})
}

// TinyQwen35MoE is TinyQwen35 with qwen35moe's feed-forward in every
// block: 8 experts of 32, 2 a token, and a shared expert of 64 with its
// sigmoid gate; the router's logits spread (RouterGain 4) so that the
// choice of experts is not a near tie.
func TinyQwen35MoE() ModelSpec {
	s := TinyQwen35()
	s.Arch, s.Seed = "qwen35moe", 39
	s.Experts, s.ExpertsUsed, s.ExpertFFN, s.SharedFFN, s.RouterGain = 8, 2, 32, 64, 4
	return s
}

// TinyQwen35MoEFused is TinyQwen35MoE with each block's gate and up
// experts in one ffn_gate_up_exps.
func TinyQwen35MoEFused() ModelSpec {
	s := TinyQwen35MoE()
	s.FusedExps, s.Seed = true, 41
	return s
}

// TinyQwen3Next is TinyQwen35MoE as a qwen3next: no
// rope.dimension_sections, its 4 value heads reading the 2 key heads in
// blocks (heads 0 and 1 key head 0), β and α in one ssm_ba grouped by key
// head.
func TinyQwen3Next() ModelSpec {
	s := TinyQwen35MoE()
	s.Arch, s.Seed = "qwen3next", 45
	return s
}

// TinyQwen3NextSSMIn is TinyQwen3Next as older converters wrote it: the
// queries, keys, values and z in one ssm_in, grouped by key head.
func TinyQwen3NextSSMIn() ModelSpec {
	s := TinyQwen3Next()
	s.SSMIn = true
	return s
}

// qwen35 reports whether s is one of Qwen 3.5's architectures or
// Qwen3-Next, whose blocks are gated delta-net or gated attention layers.
func (s ModelSpec) qwen35() bool {
	return s.Arch == "qwen35" || s.Arch == "qwen35moe" || s.Arch == "qwen3next"
}

// withQwen35Defaults fills a qwen35 spec's kernel (4) and recurrent layers
// (every layer but each fourth, as full_attention_interval 4 makes them,
// unless ConvLayers lists them: attention.recurrent_layers) and checks its
// sizes.
func (s ModelSpec) withQwen35Defaults() (ModelSpec, error) {
	if s.ConvKernel == 0 {
		s.ConvKernel = 4
	}
	if s.SSMState <= 0 || s.SSMHeads <= 0 || s.SSMGroups <= 0 || s.SSMHeads%s.SSMGroups != 0 {
		return s, fmt.Errorf("testutil: qwen35 needs SSMState, SSMHeads and SSMGroups dividing SSMHeads (%d, %d, %d)", s.SSMState, s.SSMHeads, s.SSMGroups)
	}
	return s, nil
}

// recurrentQwen35 reports whether layer l of a qwen35 s is a delta-net
// layer.
func (s ModelSpec) recurrentQwen35(l int) bool {
	if s.ConvLayers != nil {
		return s.convLayer(l)
	}
	return l < s.Layers && (l+1)%4 != 0
}

// addQwen35KV writes a qwen35 spec's delta-net sizes, recurrent layers
// (full_attention_interval 4, or attention.recurrent_layers for an
// explicit ConvLayers), NextN blocks and rope.dimension_sections.
func (s ModelSpec) addQwen35KV(g *gguf.Writer) {
	var rec []bool
	if s.ConvLayers != nil {
		rec = make([]bool, s.Layers+s.NextN)
		for l := range rec {
			rec[l] = s.recurrentQwen35(l)
		}
	}
	rope := s.HeadDim
	if s.RopeDim > 0 {
		rope = s.RopeDim
	}
	if s.Arch == "qwen3next" || s.RopeSections != nil {
		rope = 0 // plain NEOX RoPE: no sections; or the spec's own, written with the common keys
	}
	AddQwen35KV(g, s.Arch, SSM{Conv: s.ConvKernel, Inner: s.SSMHeads * s.SSMState, State: s.SSMState, Heads: s.SSMHeads, Groups: s.SSMGroups}, rec, s.NextN, rope)
}

// AddQwen35KV writes a qwen35's keys beside the common ones, as the
// converter writes Qwen 3.5's: the delta-net sizes m (Heads the value
// heads, Groups the key heads), full_attention_interval 4 when rec is nil
// or else attention.recurrent_layers (one flag a block, NextN blocks
// included), nextn_predict_layers when nextn is above 0, and, when ropeDim
// is above 0 (not for qwen3next), rope.dimension_sections splitting the
// ropeDim/2 rotated pairs in three as Qwen's mrope_section does ([11, 11,
// 10] for 64).
func AddQwen35KV(g *gguf.Writer, arch string, m SSM, rec []bool, nextn, ropeDim int) {
	a := arch + "."
	m.addTo(g, arch)
	if rec == nil {
		g.AddKV(a+"full_attention_interval", uint32(4))
	} else {
		g.AddKV(a+"attention.recurrent_layers", rec)
	}
	if nextn > 0 {
		g.AddKV(a+"nextn_predict_layers", uint32(nextn))
	}
	if ropeDim > 0 {
		r := int32(ropeDim / 2)
		g.AddKV(a+"rope.dimension_sections", []int32{(r + 2) / 3, (r + 1) / 3, r / 3, 0})
	}
}

// qwen35Block lists block l's tensors after its attn_norm (prefix p): a
// gated delta-net layer's (the kernel, the time steps' bias, ssm_a and
// the norm in F32; ssm_a negative, as the converter writes -exp(A_log))
// or a gated attention layer's (attn_q twice the heads' width: each
// head's query, then its gate), then post_attention_norm and the
// feed-forward; a NextN block (l ≥ Layers) is an attention block with
// the NextN projection and norms.
func (s ModelSpec) qwen35Block(p string, l int, ffn []tensorSpec) []tensorSpec {
	e, w := int64(s.Embd), s.WeightType
	norm := dist{1, 0.1}
	proj := func(in int64) dist { return dist{0, 1 / math.Sqrt(float64(in))} }
	var ts []tensorSpec
	if s.recurrentQwen35(l) {
		n, h, g, k := int64(s.SSMState), int64(s.SSMHeads), int64(s.SSMGroups), int64(s.ConvKernel)
		cw := 2*g*n + h*n
		ts = []tensorSpec{
			{p + "attn_qkv.weight", w, []int64{e, cw}, proj(e)},
			{p + "attn_gate.weight", w, []int64{e, h * n}, proj(e)},
			{p + "ssm_conv1d.weight", quant.F32, []int64{k, cw}, dist{0, 1 / math.Sqrt(float64(k))}},
			{p + "ssm_dt.bias", quant.F32, []int64{h}, dist{-1, 0.5}},
			{p + "ssm_a", quant.F32, []int64{h}, dist{-1.5, 0.3}},
			{p + "ssm_beta.weight", w, []int64{e, h}, proj(e)},
			{p + "ssm_alpha.weight", w, []int64{e, h}, proj(e)},
			{p + "ssm_norm.weight", quant.F32, []int64{n}, norm},
			{p + "ssm_out.weight", w, []int64{h * n, e}, proj(h * n)},
		}
		if s.Arch == "qwen3next" {
			// β and α in one ssm_ba; with SSMIn the channels and z in
			// one ssm_in (both grouped by key head).
			ts[5] = tensorSpec{p + "ssm_ba.weight", w, []int64{e, 2 * h}, proj(e)}
			ts = append(ts[:6], ts[7:]...)
			if s.SSMIn {
				ts[0] = tensorSpec{p + "ssm_in.weight", w, []int64{e, cw + h*n}, proj(e)}
				ts = ts[:1+copy(ts[1:], ts[2:])]
			}
		}
	} else {
		hd := int64(s.HeadDim)
		q, kv := int64(s.Heads)*hd, int64(s.HeadsKV)*hd
		ts = []tensorSpec{
			{p + "attn_q.weight", w, []int64{e, 2 * q}, proj(e)},
			{p + "attn_k.weight", w, []int64{e, kv}, proj(e)},
			{p + "attn_v.weight", w, []int64{e, kv}, proj(e)},
			{p + "attn_q_norm.weight", quant.F32, []int64{hd}, norm},
			{p + "attn_k_norm.weight", quant.F32, []int64{hd}, norm},
			{p + "attn_output.weight", w, []int64{q, e}, proj(q)},
		}
	}
	ts = append(append(ts, tensorSpec{p + "post_attention_norm.weight", quant.F32, []int64{e}, norm}), ffn...)
	if l >= s.Layers {
		ts = append(ts,
			tensorSpec{p + "nextn.eh_proj.weight", w, []int64{2 * e, e}, proj(2 * e)},
			tensorSpec{p + "nextn.enorm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "nextn.hnorm.weight", quant.F32, []int64{e}, norm},
			tensorSpec{p + "nextn.shared_head_norm.weight", quant.F32, []int64{e}, norm})
	}
	return ts
}
