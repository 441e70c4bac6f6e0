package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// MiniCPM3 against the reference written from llama.cpp's minicpm3 graph
// (deepseek2's latent attention, decompressed per head in the reference,
// with MiniCPM's fixed multipliers): in one pass, in chunks of 4 and token
// by token, within 1e-3. Each multiplier left out, deepseek2's
// consecutive RoPE pairs in place of NEOX's, or the rotated part left
// unrotated moves the reference by more than 1e-2.
func TestMiniCPM3MatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyMiniCPM3())
	if !m.mla() || !m.MLAJoined || m.HeadsKV != 1 || m.HeadDimKMLA != 48 || m.HeadDimVMLA != 32 || m.QLoraRank != 32 || !m.RopeNeox ||
		m.EmbedScale != 12 || m.LogitScale != 0.25 || m.KQScale != invSqrt(48) {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(11)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	mustMove(t, "no rotated part", ref(refDecoder{mlaNoRope: true}), want, 1e-2)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "no embedding scale", "no residual scale", "no logit scale", "NORM pairs")
}
