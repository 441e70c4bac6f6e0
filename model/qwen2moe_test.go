package model

import "testing"

// Qwen1.5-MoE-A2.7B's metadata as llama.cpp reads it: expert_count,
// expert_used_count and the RMS epsilon required; the experts'
// width defaulting to feed_forward_length / expert_used_count and the
// shared expert's to feed_forward_length; softmax routing not
// renormalised, the shared expert gated, NEOX RoPE over whole heads of
// one size (the graph asserts both).
func TestConfigQwen2MoE(t *testing.T) {
	moe := baseHeaderOf("qwen2moe", map[string]uint32{
		"feed_forward_length": 5632, "expert_count": 60, "expert_used_count": 4,
		"expert_feed_forward_length": 1408, "expert_shared_feed_forward_length": 5632,
	})
	c := mustConfig(t, moe(nil))
	if c.Experts != 60 || c.ExpertsUsed != 4 || c.ExpertFFN != 1408 || c.SharedFFN != 5632 || !c.SharedGate || c.ExpertNorm ||
		c.ExpertGating != 0 || c.ExpertScale != 0 || !c.RopeNeox || c.QKVBias || c.RopeDim != c.HeadDimK || !c.ExpertLayer(0) {
		t.Errorf("config %+v", c)
	}
	c = mustConfig(t, moe(func(m map[string]any) {
		delete(m, "qwen2moe.expert_feed_forward_length")
		delete(m, "qwen2moe.expert_shared_feed_forward_length")
		m["qwen2moe.expert_weights_scale"] = float32(2)
		m["qwen2moe.expert_weights_norm"] = true
	}))
	if c.ExpertFFN != 5632/4 || c.SharedFFN != 5632 || c.ExpertScale != 0 || c.ExpertNorm {
		t.Errorf("without the widths, with a scale and norm llama.cpp does not read: experts of %d, shared %d, scale %g, norm %v",
			c.ExpertFFN, c.SharedFFN, c.ExpertScale, c.ExpertNorm)
	}
	checkRequired(t, moe, "qwen2moe", "expert_count", "expert_used_count", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, moe, append([]keyCase{
		{"no expert a token", "qwen2moe.expert_used_count", uint32(0), ErrBadModel},
		{"more used than there are", "qwen2moe.expert_used_count", uint32(61), ErrBadModel},
	}, wholeHeadCases("qwen2moe", 32)...))
}
