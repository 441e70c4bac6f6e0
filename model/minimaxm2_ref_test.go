package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// MiniMax-M2 against the reference written from llama.cpp's minimax-m2
// graph: in one pass, in chunks of 4 and token by token, within 1e-3
// (2.7e-4 measured on this seed by default, with -tags purego and with
// LLM_CPU=avx2 alike; seeds 171 and 175 cross 1e-3 by an F16 rounding of
// an attention weight, as for the other architectures). Its
// Q and K norms taken head by head, softmax gating, the selection bias
// left out, the chosen weights not renormalised, NORM pairs or every dim
// of each head rotated each moves the reference by more than 1e-2.
func TestMiniMaxM2MatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyMiniMaxM2())
	c := &m.Config
	if !c.QKNormFull || !c.ExpertNorm || c.ExpertScale != 0 || c.ExpertGating != GatingSigmoid || c.Experts != 8 || c.ExpertsUsed != 2 ||
		c.ExpertFFN != 32 || c.SharedFFN != 0 || !c.RopeNeox || c.RopeDim != c.HeadDimK/2 || m.Blocks[0].ExpProbsB == nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(11)
	_, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveAll(t, m, f, data, toks, want, 1e-2,
		"per-head Q/K norms", "softmax gating", "no selection bias", "no renormalisation", "NORM pairs", "every dim rotated")
}
