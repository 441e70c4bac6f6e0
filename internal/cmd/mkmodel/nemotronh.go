package main

import (
	"fmt"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
)

// keepAttentionPattern is keepAttention for a shape with a Pattern: the
// last of its first Layers blocks made attention when none of them is
// (Nemotron Nano 2's first attention layer is 14).
func (s shape) keepAttentionPattern() shape {
	p := s.Pattern[:s.Layers]
	if strings.Contains(p, "*") {
		return s
	}
	s.Pattern = p[:s.Layers-1] + "*"
	s.Name += fmt.Sprintf(", block %d attending", s.Layers-1)
	return s
}

// nemotronHPlan lists a nemotron_h's tensors as llama.cpp's converter
// writes Nemotron-H's: the embedding, then each block's attn_norm and its
// operator's tensors (mambaPlan's; ffn_up and ffn_down; Nemotron 3 Nano's
// router (F32), selection bias, gate-less experts and shared expert; or
// attn_q, attn_k, attn_v and attn_output), then the final norm and the
// output matrix.
func nemotronHPlan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	q, kv := int64(s.Heads*s.headDim()), int64(s.HeadsKV*s.headDim())
	add("token_embd.weight", kindWeight, e, v)
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", kindNorm, e)
		switch s.Pattern[l] {
		case 'M':
			mambaPlan(s, p, add)
		case '-':
			add(p+"ffn_up.weight", kindWeight, e, f)
			add(p+"ffn_down.weight", kindWeight, f, e)
		case 'E':
			x, fe, sf := int64(s.Experts), int64(s.ExpertFFN), int64(s.SharedFFN)
			add(p+"ffn_gate_inp.weight", kindRouter, e, x)
			add(p+"exp_probs_b.bias", kindBias, x)
			add(p+"ffn_up_exps.weight", kindWeight, e, fe, x)
			add(p+"ffn_down_exps.weight", kindWeight, fe, e, x)
			add(p+"ffn_up_shexp.weight", kindWeight, e, sf)
			add(p+"ffn_down_shexp.weight", kindWeight, sf, e)
		default:
			attnPlan(add, p, e, q, kv)
		}
	}
	add("output_norm.weight", kindNorm, e)
	if !s.TiedOutput {
		add("output.weight", kindWeight, e, v)
	}
}

// routedScale is Nemotron 3 Nano's routed_scaling_factor, which the
// converter writes as expert_weights_scale.
const routedScale = 2.5

// addNemotronHKV writes a Pattern shape's per-layer arrays and ssm sizes
// and, with experts, Nemotron 3 Nano's expert keys.
func (s shape) addNemotronHKV(g *gguf.Writer) {
	testutil.AddNemotronHKV(g, s.Arch, s.Pattern[:s.Layers], s.HeadsKV, s.FFN, *s.SSM)
	if s.Experts > 0 {
		testutil.AddNemotronHMoEKV(g, s.Arch, s.Experts, s.ExpertsUsed, s.ExpertFFN, s.SharedFFN, routedScale)
	}
}
