package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// Mamba-2 alone (TinyMamba2: every block attn_norm, a Mamba-2 layer and
// the residual, the output tied to token_embd) against the float64
// reference written from llama.cpp's mamba graph and build_mamba2_layer
// (refDecoder.mamba2, nemotron_h's), in one pass, in chunks of 4 and
// token by token. The layer's steps are the same State.mamba2 that
// TestNemotronHMatchesReference perturbs; here too the reference must
// move with each of the layer's steps (mamba2Perturb) and with the state
// each pass hands the next.
func TestMamba2MatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyMamba2())
	if m.Mamba1 || !m.SingleOp || !m.Tied || m.KVLayers() != 0 || !m.ConvLayer(0) || !m.ConvLayer(2) || m.RopeLayer(0) ||
		m.SSMInner != 128 || m.SSMHeads != 8 || m.SSMGroups != 2 || m.Blocks[1].ConvB == nil || m.Blocks[1].SSMNorm == nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveEach(t, ref, want, 1e-2, asMamba2)
	mustMove(t, "no conv state", ref(refDecoder{convNoState: true}), want, 1e-2)
}
