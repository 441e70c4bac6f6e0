package model

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// Falcon-H1 (TinyFalconH1: attention and a Mamba-2 mixer in every layer)
// against the float64 reference written from llama.cpp's falcon-h1 graph
// and build_mamba2_layer, in one pass, in chunks of 4 (the conv and scan
// state carried through chunk boundaries beside the KV cache) and token
// by token. Leaving out the mixer, its D skip, SiLU(z) gate, gated norm
// or conv state, the time step's softplus, swapping B and C, one norm
// group for all channels, or rotating NORM pairs (which only the
// attention sees), each moves the reference by more than 3 tolerances.
func TestFalconH1MatchesReference(t *testing.T) {
	const tol = 1e-3
	pool, m, f, data := loadF32(t, testutil.TinyFalconH1())
	if !m.ParallelSSM || !m.ConvLayer(0) || !m.ConvLayer(2) || m.KVLayers() != 3 || m.KVLayer(2) != 2 || m.SSMInner != 96 ||
		m.SSMHeads != 6 || m.SSMGroups != 2 || !m.RopeNeox || m.Tied || m.Blocks[1].SSMNorm == nil || m.Blocks[1].Wq == nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
	for name, r := range map[string]refDecoder{
		"no mixer":      {without: []string{"ssm_out.weight"}},
		"no conv state": {convNoState: true},
		"no gated norm": {without: []string{"ssm_norm.weight"}},
	} {
		mustMove(t, name, ref(r), want, 3*tol)
	}
	mustMoveEach(t, ref, want, 3*tol, asMamba2)
	mustMoveAll(t, m, f, data, toks, want, 3*tol, "NORM pairs")
}
