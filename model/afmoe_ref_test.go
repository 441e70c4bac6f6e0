package model

import (
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// afmoePerturb moves afmoe's output gate after attn_output (the graph
// multiplies the heads' outputs before it).
type afmoePerturb struct{ gateAfterO bool }

// gate multiplies v by the sigmoid (laguna: the softplus) of attn_gate's
// product with the attention's input h when the layer has the gate and v
// is where the graph (or the perturbation) applies it: the heads' outputs
// (after false) or attn_output's (after true). Each gate value scales
// len(v)/gates elements in turn: one each, or a head's (Laguna-XS.2's
// gate a head).
func (a afmoePerturb) gate(c *Config, p func(string) []float64, h, v []float64, after bool) {
	w := p("attn_gate.weight")
	if w == nil || !c.AttnOutGate || after != a.gateAfterO {
		return
	}
	gs := linear(w, nil, h)
	spread := len(v) / len(gs)
	for i := range v {
		g := gs[i/spread]
		if c.GateSoftplus {
			g = math.Log1p(math.Exp(g))
		} else {
			g = 1 / (1 + math.Exp(-g))
		}
		v[i] *= g
	}
}

// Trinity (afmoe: TinyAfmoe, windowed with Trinity's routing keys;
// TinyAfmoeGlobal, no window, no norm or scale, tied output) against the
// float64 reference written from llama.cpp's afmoe graph — embeddings ×
// √64, per-head Q/K norms before NEOX RoPE on layers 0–2 and none on
// layer 3, the heads' outputs times sigmoid(attn_gate·x) before
// attn_output, norms after attention and the feed-forward, a dense layer
// 0, sigmoid routing chosen with the selection bias, the shared expert
// added — in one pass, in chunks of 4 and token by token, within 5e-3.
// Each ingredient left out (the gate, the post norms, the embedding
// scale, the Q/K norms, the shared expert, the selection bias, the
// renormalisation, the scale, the window) or moved (the gate after
// attn_output, RoPE on the global layer, the unrotated layer first of
// four, softmax gating) moves the reference by more than 3 tolerances.
func TestAfmoeMatchesReference(t *testing.T) {
	gatedMoEMatchesReference(t, testutil.TinyAfmoe(), testutil.TinyAfmoeGlobal(), func(m *Model, windowed bool) bool {
		c := &m.Config
		return c.AttnOutGate && c.PostNorms && c.QKNorm && c.RopeNeox && c.EmbedScale == 8 && c.DenseLead == 1 && c.Experts == 8 &&
			c.ExpertGating == GatingSigmoid && c.ExpertSelBias && c.ExpertNorm == windowed && (c.ExpertScale == 2.826) == windowed &&
			c.SharedFFN == 32 && m.Blocks[0].Router == nil && m.Blocks[1].WOutGate != nil && m.Blocks[1].ExpProbsB != nil &&
			c.RopeLayer(2) && !c.RopeLayer(3) && c.WindowedLayer(2) == windowed && !c.WindowedLayer(3) && m.Tied != windowed
	}, []string{"no output gate", "no post norms", "no embedding scale", "every layer rotated", "unrotated layers first", "no selection bias", "softmax gating"},
		"no renormalisation", "no expert scale", "no window")
}

// gatedMoEMatchesReference is the reference test of an architecture of
// afmoe's make (an output gate, per-head Q/K norms, sigmoid routing with
// a selection bias beside a shared expert: afmoe, laguna), over its
// windowed spec and its global one (no window, no renormalisation or
// scale, tied output), each of whose models configOK accepts: the model
// within 5e-3 of the reference in one pass, in chunks of 4 and token by
// token; the gate moved after attn_output, the shared expert and the Q/K
// norms left out and each perturbation named (with the windowed spec
// also each of windowedOnly) moving the reference by more than 3
// tolerances.
func gatedMoEMatchesReference(t *testing.T, windowedSpec, globalSpec testutil.ModelSpec, configOK func(m *Model, windowed bool) bool, perturbs []string, windowedOnly ...string) {
	t.Helper()
	const tol = 5e-3
	for name, spec := range map[string]testutil.ModelSpec{"windowed": windowedSpec, "global": globalSpec} {
		matchReference(t, name, spec, 13, tol, 3*tol, func(t *testing.T, m *Model) ([]refMove, []string) {
			windowed := spec.Windowed
			if !configOK(m, windowed) {
				t.Fatalf("config: %+v", m.Config)
			}
			names := slices.Clone(perturbs)
			if windowed {
				names = append(names, windowedOnly...)
			}
			return []refMove{
				{"gate after attn_output", refDecoder{afmoe: afmoePerturb{gateAfterO: true}}},
				{"no shared expert", refDecoder{noShared: true}},
				{"no Q/K norms", refDecoder{without: []string{"attn_q_norm.weight", "attn_k_norm.weight"}}},
			}, names
		})
	}
}
