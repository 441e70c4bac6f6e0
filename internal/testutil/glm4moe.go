package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// Routing is what a glm4moe, bailingmoe2, afmoe or exaone-moe file says of its routing and
// shared experts beside the expert counts (and a deepseek2's, written by
// DeepSeek2.AddTo through it).
type Routing struct {
	// Shared is expert_shared_count; SharedWidth bailingmoe2's
	// expert_shared_feed_forward_length, one shared expert's width (0:
	// no key; withDefaults makes it ExpertFFN for bailingmoe2).
	Shared, SharedWidth int
	// Scale is expert_weights_scale (0: no key); Norm
	// expert_weights_norm (written when true); Gating expert_gating_func
	// (0: no key); Groups and GroupsUsed expert_group_count and
	// expert_group_used_count (0: no keys).
	Scale              float32
	Norm               bool
	Gating             uint32
	Groups, GroupsUsed int
	// QKNorm writes a glm4moe's optional attn_q_norm and attn_k_norm
	// (GLM-4.5's files have them, GLM-4.5-Air's not); bailingmoe2's are
	// always written.
	QKNorm bool
}

// AddTo writes r under arch's key prefix.
func (r *Routing) AddTo(g *gguf.Writer, arch string) {
	a := arch + "."
	g.AddKV(a+"expert_shared_count", uint32(r.Shared))
	if r.SharedWidth > 0 {
		g.AddKV(a+"expert_shared_feed_forward_length", uint32(r.SharedWidth))
	}
	if r.Scale != 0 {
		g.AddKV(a+"expert_weights_scale", r.Scale)
	}
	if r.Norm {
		g.AddKV(a+"expert_weights_norm", true)
	}
	if r.Gating != 0 {
		g.AddKV(a+"expert_gating_func", r.Gating)
	}
	if r.Groups != 0 {
		g.AddKV(a+"expert_group_count", uint32(r.Groups))
		g.AddKV(a+"expert_group_used_count", uint32(r.GroupsUsed))
	}
}

// TinyGLM4MoE is a glm4moe as GLM-4.5 is made, in 3 layers and a NextN
// block: NEOX RoPE over half of each 32-wide head (the query's 4 heads
// wider than the 64-wide embedding, as GLM-4.5-Air's 96 × 128 are than its
// 4096), Q/K/V biases and GLM-4.5's per-head Q/K norms; layer 0's
// feed-forward dense, the others' 8 experts of width 32, 2 a token,
// chosen by their sigmoid plus a selection bias, weighted by the sigmoids
// renormalised and scaled by 2.5, beside one shared expert; the last
// block a NextN block (nextn_predict_layers 1) with its projection and
// norms; Q8_0 weights.
func TinyGLM4MoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "glm4moe", Seed: 62, Layers: 3, NextN: 1, QKVBias: true,
		HeadDim: 32, RopeDim: 16, RopeBase: 1000000, RMSEps: 1e-5,
		DenseLead: 1,
		Routing:   &Routing{Shared: 1, Scale: 2.5, Norm: true, QKNorm: true},
	})
}

// TinyGLM4MoEAir is TinyGLM4MoE as GLM-4.5-Air is made: no Q/K norms,
// expert_gating_func written (sigmoid).
func TinyGLM4MoEAir() ModelSpec {
	s := TinyGLM4MoE()
	s.Seed, s.Label = 64, "air"
	r := *s.Routing
	r.QKNorm, r.Gating = false, 2
	s.Routing = &r
	return s
}

// TinyBailingMoE2 is a bailingmoe2 as Ling-mini-2.0 is made, in 3 layers
// and a NextN block: one fused attn_qkv (4 heads of 16 on 2 KV heads),
// per-head Q/K norms, NEOX RoPE over half of each head; layer 0's
// feed-forward dense, the others' 8 experts of width 32 in 4 groups of 2,
// 2 a token from the best 2 groups, chosen by their sigmoid plus a
// selection bias, weighted by the sigmoids renormalised and scaled by
// 2.5, beside one shared expert of width 64; the NextN block with its
// layer_output_norm; Q8_0 weights.
func TinyBailingMoE2() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "bailingmoe2", Seed: 53, Layers: 3, NextN: 1, FusedQKV: true,
		RopeDim: 8, RopeBase: 600000, RMSEps: 1e-6,
		DenseLead: 1,
		Routing:   &Routing{Shared: 1, SharedWidth: 64, Scale: 2.5, Norm: true, Gating: 2, Groups: 4, GroupsUsed: 2},
	})
}

// TinyExaoneMoE is an exaone-moe as K-EXAONE is made, in 4 layers and a
// NextN block: pre-norms, per-head Q/K norms, layers 0–2 windowed (4
// positions) and NEOX-rotated over whole heads, layer 3 global and
// unrotated; layer 0's feed-forward dense, the others' 8 experts of width
// 32, 2 a token, chosen by their sigmoid plus a selection bias, weighted
// by the sigmoids renormalised and scaled by 2.5, beside one shared
// expert of the experts' width; the NextN block with a dense
// feed-forward, its projection and norms; Q8_0 weights.
func TinyExaoneMoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "exaone-moe", Seed: 182, Layers: 4, NextN: 1, RopeBase: 1000000, RMSEps: 1e-5,
		Windowed: true, SlidingWindow: 4,
		DenseLead: 1,
		Routing:   &Routing{Shared: 1, Scale: 2.5, Norm: true, Gating: 2, QKNorm: true},
	})
}

// denseNextN reports whether block l is a NextN block whose feed-forward
// llama.cpp loads dense (exaone-moe's), not as experts.
func (s ModelSpec) denseNextN(l int) bool { return s.Arch == "exaone-moe" && l >= s.Layers }

// withRoutingDefaults checks a glm4moe's, bailingmoe2's, afmoe's, dots1's,
// exaone-moe's or laguna's spec and sizes its shared experts.
func (s ModelSpec) withRoutingDefaults() (ModelSpec, error) {
	r := s.Routing
	if r == nil || r.Shared <= 0 || s.DenseLead < 0 {
		return s, fmt.Errorf("testutil: %s needs Routing with Shared above 0", s.Arch)
	}
	if err := s.checkExperts(); err != nil {
		return s, err
	}
	width := s.ExpertFFN
	if s.Arch == "bailingmoe2" || s.Arch == "laguna" {
		if r.SharedWidth == 0 {
			c := *r
			c.SharedWidth = s.ExpertFFN
			s.Routing, r = &c, &c
		}
		width = r.SharedWidth
	}
	s.SharedFFN = r.Shared * width
	return s, nil
}

// nextNTensors lists the tensors a glm4moe's or bailingmoe2's NextN block
// (prefix p) holds besides an ordinary block's.
func (s ModelSpec) nextNTensors(p string) []tensorSpec {
	e := int64(s.Embd)
	norm := dist{1, 0.1}
	ts := []tensorSpec{
		{p + "nextn.eh_proj.weight", s.WeightType, []int64{2 * e, e}, dist{0, 1 / math.Sqrt(float64(2*e))}},
		{p + "nextn.enorm.weight", quant.F32, []int64{e}, norm},
		{p + "nextn.hnorm.weight", quant.F32, []int64{e}, norm},
		{p + "nextn.shared_head_norm.weight", quant.F32, []int64{e}, norm}}
	if s.Arch == "bailingmoe2" {
		ts = append(ts, tensorSpec{p + "layer_output_norm.weight", quant.F32, []int64{e}, norm})
	}
	return ts
}

// TinyCohere2MoE is a cohere2moe in 5 layers and a NextN block: one
// LayerNorm without bias (attention.layer_norm_epsilon, no RMS epsilon)
// before attention and the feed-forward side by side; a window pattern of
// period 4, counted from a global layer 0 as llama.cpp does: layers
// 1–3 windowed (4 positions) and rotated, layer 0 global and rotated as
// the dense lead, layer 4 global and unrotated; layer 0's feed-forward
// dense, the others' 8 experts of width 32, 2 a token, chosen and
// weighted by their sigmoids (no gating key), renormalised and scaled by
// 2.5, beside one shared expert, the two outputs halved; logit_scale
// 0.25; the output tied; the NextN block with its projection and norms;
// Q8_0 weights.
func TinyCohere2MoE() ModelSpec {
	return tiny(ModelSpec{
		Arch: "cohere2moe", Seed: 229, Layers: 5, NextN: 1, RopeBase: 50000, NormEps: 1e-5, TiedOutput: true,
		SlidingWindow: 4, SWAPattern: 4, LogitScale: 0.25,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, DenseLead: 1, RouterGain: 4,
		Routing: &Routing{Shared: 1, Scale: 2.5, Norm: true},
	})
}

// TinyCohere2MoERMS is TinyCohere2MoE with RMSNorms (the file's
// attention.layer_norm_rms_epsilon), a period of 2 written (layers 1 and
// 3 windowed), an untied output, softmax routing written and no
// NextN block.
func TinyCohere2MoERMS() ModelSpec {
	s := TinyCohere2MoE()
	s.Seed, s.Label, s.NormEps, s.RMSEps, s.TiedOutput, s.SWAPattern, s.NextN = 251, "rms", 0, 1e-5, false, 2, 0
	s.Routing = &Routing{Shared: 1, Scale: 2.5, Norm: true, Gating: 1}
	return s
}

// TinyBailingMoE is a bailingmoe as Ling-lite is made, in 3 layers:
// llama's attention (NORM RoPE over whole heads), every feed-forward 8
// experts of width 32, 2 a token, chosen and weighted by their softmax,
// renormalised and scaled by 1.5, beside one shared expert of the
// experts' width; leading_dense_block_count 0 written, as the converter
// writes Ling's first_k_dense_replace; the output untied; Q8_0 weights.
func TinyBailingMoE() ModelSpec {
	return tiny(ModelSpec{
		Arch: "bailingmoe", Seed: 263, Layers: 3, RopeBase: 600000, RMSEps: 1e-6,
		Experts: 8, ExpertsUsed: 2, ExpertFFN: 32, RouterGain: 4,
		Routing: &Routing{Shared: 1, Scale: 1.5, Norm: true},
	})
}
