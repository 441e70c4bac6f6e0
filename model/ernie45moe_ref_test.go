package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// ERNIE 4.5's mixture of experts (TinyErnie45MoE: a dense layer 0, then 8
// experts, 2 a token, beside a shared expert) against the float64
// reference written from llama.cpp's ernie4_5-moe graph — the router's
// softmax, the choice by it plus the selection bias, the chosen
// probabilities renormalised, the shared expert added — in one pass, in
// chunks of 4 and token by token, within 5e-3 of logits of order 50.
// Sigmoid gating, the bias left out of the choice, no renormalisation or
// no shared expert each move the reference by more than 2.8, so the
// comparison sees every step.
func TestErnie45MoEMatchesReference(t *testing.T) {
	// Within 4e-6 until an attention weight's float32 value lands on the
	// other side of an F16 midpoint from the float64 one; from there on up
	// to 5.7e-4 on the test's seed (seeds 42 to 47: 5.7e-4, 2.8e-3,
	// 1.9e-5, 6.9e-6, 7.5e-6, 1.4e-3).
	const tol = 5e-3
	pool, m, f, data := loadF32(t, testutil.TinyErnie45MoE())
	if m.DenseLead != 1 || m.Experts != 8 || m.ExpertsUsed != 2 || m.SharedFFN != 64 || m.ExpertGating != GatingSoftmax ||
		!m.ExpertNorm || !m.ExpertSelBias || m.RopeNeox || !m.Tied || m.Blocks[1].ExpProbsB == nil || m.Blocks[0].Router != nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
	mustMove(t, "no shared expert", ref(refDecoder{noShared: true}), want, 3*tol)
	mustMove(t, "without exp_probs_b.bias", ref(refDecoder{without: []string{"exp_probs_b.bias"}}), want, 3*tol)
	mustMoveAll(t, m, f, data, toks, want, 3*tol, "sigmoid gating", "no selection bias", "no renormalisation")
}
