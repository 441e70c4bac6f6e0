package model

import (
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// gemma4MoEPerturb are changes to the expert block of Gemma 4's graph,
// for the reference to show that the comparison sees each step; each is
// named by its tag (mustMoveEach).
type gemma4MoEPerturb struct {
	RouteInput   bool `perturb:"router reading the experts' input"` // pre_ffw_norm_2 of the stream
	NoRouteScale bool `perturb:"no router input scale"`             // ffn_gate_inp.scale left out
	NoRouteRoot  bool `perturb:"no router 1/sqrt(Embd)"`
	NoExpScale   bool `perturb:"no per-expert output scale"` // ffn_down_exps.scale left out
	// Not among the ones the test checks: the renormalisation of the
	// chosen experts' weights, which post_ffw_norm_2 undoes (it moves
	// the reference by 2.6e-5).
	NoRenorm    bool `perturb:"no renormalisation"`
	SwapGateUp  bool `perturb:"gate and up swapped"`   // the fused tensor's up rows taken as the gate
	NoDense     bool `perturb:"no dense feed-forward"` // the dense feed-forward beside the experts left out
	NoPostDense bool `perturb:"no post_ffw_norm_1"`
	NoPostExp   bool `perturb:"no post_ffw_norm_2"`
	ExpFFNNorm  bool `perturb:"experts reading ffn_norm's output"` // not pre_ffw_norm_2's
}

// gemma4Experts is a Gemma 4 expert block's feed-forward for one token whose
// residual stream (the attention's output added) is x, written from
// llama.cpp's gemma4 graph and build_moe_ffn in float64, before
// post_ffw_norm: the dense GeGLU of ffn_norm(x) normalised by
// post_ffw_norm_1, plus the experts of pre_ffw_norm_2(x) normalised by
// post_ffw_norm_2. The router's logits are ffn_gate_inp times x's RMS
// norm (no weight) times 1/sqrt(Embd) times ffn_gate_inp.scale; their
// softmax chooses the ExpertsUsed best, weighted by their probabilities
// renormalised to sum to 1; expert e computes down_e(GELU(gate_e·y) ⊙
// up_e·y) from its slice of ffn_gate_up_exps (gate rows, then up rows)
// or of ffn_gate_exps and ffn_up_exps, times its ffn_down_exps.scale
// when the block has one.
func (r *refDecoder) gemma4Experts(p func(string) []float64, x []float64, eps float64) []float64 {
	c, pt := r.c, r.gemma4MoE
	E, F, k := c.Embd, c.ExpertFFN, c.ExpertsUsed
	dense := make([]float64, E)
	y := rmsNorm64(x, p("ffn_norm.weight"), eps)
	if !pt.NoDense {
		dense = r.ffn(linear(p("ffn_gate.weight"), nil, y), linear(p("ffn_up.weight"), nil, y), p("ffn_down.weight"), nil)
		if !pt.NoPostDense {
			dense = rmsNorm64(dense, p("post_ffw_norm_1.weight"), eps)
		}
	}
	in := rmsNorm64(x, p("pre_ffw_norm_2.weight"), eps)
	if pt.ExpFFNNorm {
		in = y
	}
	ones := make([]float64, E)
	for i := range ones {
		ones[i] = 1
	}
	rin := rmsNorm64(x, ones, eps)
	if pt.RouteInput {
		rin = slices.Clone(in)
	}
	scale := p("ffn_gate_inp.scale")
	for i := range rin {
		if !pt.NoRouteRoot {
			rin[i] /= math.Sqrt(float64(E))
		}
		if !pt.NoRouteScale {
			rin[i] *= scale[i]
		}
	}
	probs := linear(p("ffn_gate_inp.weight"), nil, rin)
	softmax64(probs)
	ids, sum := topKSum64(probs, k)
	gu, gate, up := p("ffn_gate_up_exps.weight"), p("ffn_gate_exps.weight"), p("ffn_up_exps.weight")
	down, outScale := p("ffn_down_exps.weight"), p("ffn_down_exps.scale")
	moe := make([]float64, E)
	for _, e := range ids {
		var g, u []float64
		if gu != nil {
			g, u = gu[(2*e)*F*E:(2*e+1)*F*E], gu[(2*e+1)*F*E:(2*e+2)*F*E]
		} else {
			g, u = gate[e*F*E:(e+1)*F*E], up[e*F*E:(e+1)*F*E]
		}
		if pt.SwapGateUp {
			g, u = u, g
		}
		out := r.ffn(linear(g, nil, in), linear(u, nil, in), down[e*E*F:(e+1)*E*F], nil)
		w := probs[e] / sum
		if outScale != nil && !pt.NoExpScale {
			w *= outScale[e]
		}
		for i := range moe {
			moe[i] += w * out[i]
		}
	}
	if !pt.NoPostExp {
		moe = rmsNorm64(moe, p("post_ffw_norm_2.weight"), eps)
	}
	for i := range moe {
		moe[i] += dense[i]
	}
	return moe
}

// Gemma 4's mixture of experts (26B-A4B's block, TinyGemma4MoE) against
// the float64 reference written from llama.cpp's gemma4 graph (F32
// weights): the prompt in one pass, in chunks of 4 and 3 and token by
// token, within 5e-3, for the converter's fused ffn_gate_up_exps and for
// separate gate and up tensors without per-expert scales (1.3e-5
// measured for both; 1.02e-3 under LLM_CPU=avx2, and with the spec's
// seeds 31 and 33, 2.0e-3 and 1.3e-3, where the reference's own F16
// rounding of the cached keys and values, which moves it by 4–6e-3 when
// left out, rounds a value the other way). Each step of the expert block
// moves the reference by more than 0.3 (60 times the tolerance); the
// renormalisation of the chosen experts' weights is not among them:
// post_ffw_norm_2 undoes it (2.6e-5).
func TestGemma4MoEMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyGemma4MoE())
	L := &m.Blocks[2]
	if m.Experts != 8 || m.ExpertsUsed != 2 || m.ExpertFFN != 32 || !m.ExpertNorm || m.ExpertGating != GatingSoftmax ||
		L.Router == nil || L.Gate == nil || len(L.RouterScale) != m.Embd || len(L.ExpOutScale) != 8 || L.PreExpNorm == nil ||
		L.PostDenseNorm == nil || L.PostExpNorm == nil || L.Experts[7].Gate.Rows != 32 || L.Experts[7].Up.Rows != 32 ||
		L.Experts[7].Ranges[1].Off != L.Experts[7].Ranges[0].Off+L.Experts[7].Ranges[0].Len {
		t.Fatalf("config: %d experts, %d used, width %d, norm %v, gating %v; block 2: router %v, scales %d/%d",
			m.Experts, m.ExpertsUsed, m.ExpertFFN, m.ExpertNorm, m.ExpertGating, L.Router != nil, len(L.RouterScale), len(L.ExpOutScale))
	}
	ref, want := refInChunks(t, m, pool, f, data, 5e-3)
	mustMoveEach(t, ref, want, 0.3, func(p gemma4MoEPerturb) refDecoder { return refDecoder{gemma4MoE: p} }, "NoRenorm")

	spec := testutil.TinyGemma4MoE()
	spec.Gemma4.SplitExperts, spec.Gemma4.NoExpertScale = true, true
	pool, m, f, data = loadF32(t, spec)
	if L := &m.Blocks[0]; L.ExpOutScale != nil || L.Experts[0].Up.T.Name != "blk.0.ffn_up_exps.weight" {
		t.Fatalf("split experts: scale %v, up from %s", L.ExpOutScale, L.Experts[0].Up.T.Name)
	}
	refInChunks(t, m, pool, f, data, 5e-3)
}
