package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// OLMoE against the reference written from llama.cpp's olmoe graph: in
// one pass, in chunks of 4 and token by token, within 1e-3. Its Q and K
// norms taken head by head, or the chosen experts' weights renormalised,
// moves the reference by more than 1e-2.
func TestOLMoEMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyOLMoE())
	if !m.QKNormFull || m.ExpertNorm || m.Experts != 8 || m.ExpertsUsed != 2 || m.ExpertFFN != 32 || !m.RopeNeox || m.HeadsKV != 4 {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(11)
	_, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "per-head Q/K norms", "renormalised")
}
