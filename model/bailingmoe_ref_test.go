package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// Ling-lite (bailingmoe: TinyBailingMoE) against the float64 reference
// written from llama.cpp's bailingmoe graph — llama's attention with NORM
// RoPE, every feed-forward experts chosen and weighted by their softmax,
// renormalised and scaled, the shared expert added — in one pass, in
// chunks of 4 and token by token, within 1e-3: 8.6e-6 measured with the
// AVX-512 kernels, 7.2e-6 with LLM_CPU=avx2, 8.6e-4 with -tags purego (an
// F16 rounding landing the other way; seeds 269 and 271 flip elsewhere,
// up to 2.2e-3 with LLM_CPU=avx2).
// Each ingredient left out moves the reference by more than 1e-2.
func TestBailingMoEMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyBailingMoE())
	c := &m.Config
	if c.Layers != 3 || c.DenseLead != 0 || c.Experts != 8 || c.ExpertsUsed != 2 || c.ExpertGating != GatingSoftmax || !c.ExpertNorm ||
		c.ExpertScale != 1.5 || c.SharedFFN != 32 || c.SharedSumScale != 0 || c.RopeNeox || c.RopeDim != c.HeadDimK ||
		m.Blocks[0].Router == nil || m.Blocks[0].ShDown == nil || m.Blocks[1].ExpProbsB != nil || m.Tied {
		t.Fatalf("config: %+v; router %v, shared %v, selection bias %v, tied %v", m.Config, m.Blocks[0].Router != nil, m.Blocks[0].ShDown != nil, m.Blocks[1].ExpProbsB != nil, m.Tied)
	}
	toks := prompt(13)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	mustMove(t, "no shared expert", ref(refDecoder{noShared: true}), want, 1e-2)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "sigmoid gating", "no renormalisation", "no expert scale", "NEOX pairs")
}
