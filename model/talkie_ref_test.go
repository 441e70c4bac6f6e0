package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// Talkie's blocks (TinyTalkie) against the float64 reference written
// from llama.cpp's talkie graph — norms without weights, NEOX RoPE, then
// each head of Q and K RMS-normalised and the query's heads scaled by
// their gains, the normalised embeddings added after every block times
// its layer_output_scale, the logits ×logit_scale — in one pass, in
// chunks of 4 and token by token, within 1e-3. The embedding skip, the
// query gains, the Q/K norms, the logit multiplier or NORM pairs each
// left out move the reference by more than 1e-2.
func TestTalkieMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyTalkie())
	if !m.RopeNeox || !m.EmbedSkip || !m.QHeadGain || !m.QKUnitNorm || m.QKNorm || m.LogitMul != 1.5 || m.Tied {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(11)
	_, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "no embedding skip", "no query gains", "no Q/K unit norms", "no logit multiplier", "NORM pairs")
}
