package model

import (
	"errors"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// Phi-3.5-MoE's metadata as llama.cpp reads it: expert_count,
// expert_used_count, feed_forward_length (the experts' width, whatever
// expert_feed_forward_length says) and the RMS epsilon required; phi3's
// scaled query and unscaled product, NEOX RoPE, LongRoPE's original
// context; softmax routing renormalised, expert_weights_scale and
// expert_weights_norm not read; the sliding window ignored.
func TestConfigPhiMoE(t *testing.T) {
	moe := baseHeaderOf("phimoe", map[string]any{
		"feed_forward_length": uint32(6400), "expert_count": uint32(16), "expert_used_count": uint32(2),
		"attention.layer_norm_rms_epsilon": float32(1e-5), "rope.scaling.original_context_length": uint32(4096),
		"rope.scaling.attn_factor": float32(1.19),
	})
	c := mustConfig(t, moe(nil))
	if c.Experts != 16 || c.ExpertsUsed != 2 || c.ExpertFFN != 6400 || !c.ExpertNorm || c.ExpertGating != 0 || c.ExpertScale != 0 ||
		c.SharedFFN != 0 || !c.RopeNeox || c.QueryScale != invSqrt(c.HeadDimV) || c.KQScale != 1 || c.RopeOrigContext != 4096 ||
		c.RopeAttnFactor != 1.19 || c.LayerNorm || c.RMSEps != 1e-5 || !c.ExpertLayer(0) {
		t.Errorf("config %+v", c)
	}
	c = mustConfig(t, moe(func(m map[string]any) {
		m["phimoe.expert_feed_forward_length"] = uint32(100)
		m["phimoe.expert_weights_scale"] = float32(2)
		m["phimoe.expert_weights_norm"] = false
		m["phimoe.attention.sliding_window"] = uint32(131072)
	}))
	if c.ExpertFFN != 6400 || c.ExpertScale != 0 || !c.ExpertNorm || c.Window != 0 {
		t.Errorf("with keys llama.cpp does not read: experts of %d, scale %g, norm %v, window %d", c.ExpertFFN, c.ExpertScale, c.ExpertNorm, c.Window)
	}
	checkRequired(t, moe, "phimoe", "expert_count", "expert_used_count", "attention.layer_norm_rms_epsilon")
	// Without feed_forward_length the experts have no width: the meta
	// reader, which olmoe's and granitemoe's share, names the key it
	// looked for first.
	if _, err := ConfigFromGGUF(parse(t, moe(func(m map[string]any) { delete(m, "phimoe.feed_forward_length") }))); !errors.Is(err, ErrBadModel) {
		t.Errorf("without feed_forward_length: %v, want %v", err, ErrBadModel)
	}
	checkKeyErrors(t, moe, []keyCase{
		{"more used than there are", "phimoe.expert_used_count", uint32(17), ErrBadModel},
	})
}

// Phi-3.5-MoE's blocks (TinyPhiMoE) against the float64 reference
// written from llama.cpp's phi3 graph as phimoe runs it — RMSNorms plus
// their biases, Q, K and V with their biases, NEOX RoPE with LongRoPE's
// factors and attention factor, the query scaled before an unscaled
// product, attn_output's bias, the softmax's two best experts
// renormalised, the output's bias — in one pass, in chunks of 4 and token
// by token, within 1e-3. Each bias or the short factors left out, the
// weights not renormalised, sigmoid gating, NORM pairs, the query
// unscaled or the product scaled again each move the reference by more
// than 1e-2, so the comparison sees every step.
func TestPhiMoEMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyPhiMoE())
	L := &m.Blocks[1]
	if m.Experts != 8 || m.ExpertsUsed != 2 || m.ExpertFFN != 32 || !m.ExpertNorm || m.LayerNorm || !m.RopeNeox || m.Tied ||
		m.OutB == nil || m.OutNormB == nil || L.AttnNormB == nil || L.FFNNormB == nil || L.Bq == nil || L.Bo == nil ||
		m.RopeShort == nil || m.RopeLong == nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(11)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	for _, name := range []string{"attn_norm.bias", "ffn_norm.bias", "output_norm.bias", "output.bias", "attn_output.bias",
		"rope_factors_short.weight"} {
		mustMove(t, "without "+name, ref(refDecoder{without: []string{name}}), want, 1e-2)
	}
	mustMove(t, "without Q/K/V biases", ref(refDecoder{without: []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"}}), want, 1e-2)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "no renormalisation", "sigmoid gating", "NORM pairs", "no query scale", "default kq scale")
}
