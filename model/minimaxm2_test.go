package model

import "testing"

// MiniMax-M2's header (its config.json's sizes: 62 layers of 3072, 48
// heads of 128 on 8 KV heads, 64 dims rotated, 256 experts of 1536, 8 a
// token, sigmoid scoring) as llama.cpp's minimax-m2 loader reads it: Q/K
// norms across all heads, NEOX RoPE over half of each head, the experts
// as wide as feed_forward_length whatever expert_feed_forward_length
// says, renormalised, unscaled (an expert_weights_scale in the file is
// not read), no shared expert. The RMS epsilon, the experts' counts,
// expert_feed_forward_length and the gating function are required; one
// head size serves keys and values.
func TestConfigMiniMaxM2(t *testing.T) {
	m2 := headerOf("minimax-m2", decoderKeys{
		Embd: 3072, Blocks: 62, FFN: 1536, Heads: 48, HeadsKV: 8, KeyLen: 128, ValueLen: 128,
		Context: 196608, RopeDim: 64, RMSEps: 1e-6, RopeBase: 5000000,
		Experts: 256, ExpertsUsed: 8, ExpertFFN: 1536, Gating: 2,
	}.with(nil))
	c := mustConfig(t, m2(nil))
	if c.Layers != 62 || c.Experts != 256 || c.ExpertsUsed != 8 || c.ExpertFFN != 1536 || c.SharedFFN != 0 || c.ExpertGating != GatingSigmoid ||
		!c.ExpertNorm || c.ExpertScale != 0 || !c.ExpertSelBias || !c.QKNorm || !c.QKNormFull || !c.RopeNeox || c.RopeDim != 64 || c.HeadDimK != 128 {
		t.Fatalf("MiniMax-M2: %+v", c)
	}
	c = mustConfig(t, m2(func(m map[string]any) {
		m["minimax-m2.expert_feed_forward_length"] = uint32(512)
		m["minimax-m2.expert_weights_scale"] = float32(2.5)
		m["minimax-m2.expert_gating_func"] = uint32(1)
	}))
	if c.ExpertFFN != 1536 || c.ExpertScale != 0 || c.ExpertGating != GatingSoftmax {
		t.Errorf("experts %d wide, scale %v, gating %v; want 1536, 0, softmax", c.ExpertFFN, c.ExpertScale, c.ExpertGating)
	}
	checkRequired(t, m2, "minimax-m2", "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "expert_gating_func",
		"expert_count", "expert_used_count", "feed_forward_length")
	checkKeyErrors(t, m2, []keyCase{
		{"gating none", "minimax-m2.expert_gating_func", uint32(0), ErrUnsupportedArch},
		{"values of another size", "minimax-m2.attention.value_length", uint32(64), ErrBadModel},
	})
}
