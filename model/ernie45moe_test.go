package model

import "testing"

// ERNIE 4.5 MoE's metadata as llama.cpp reads it: the experts' counts and
// width, leading_dense_block_count and interleave_moe_layer_step required
// (a step other than 1, which llama.cpp's loader and graph read two ways,
// refused as unsupported), the shared expert's width optional; softmax
// routing renormalised, NORM RoPE over whole heads of one size (the graph
// asserts both).
func TestConfigErnie45MoE(t *testing.T) {
	moe := func(mut func(map[string]any)) map[string]any {
		m := base("ernie4_5-moe")
		m["ernie4_5-moe.expert_count"] = uint32(64)
		m["ernie4_5-moe.expert_used_count"] = uint32(6)
		m["ernie4_5-moe.expert_feed_forward_length"] = uint32(1536)
		m["ernie4_5-moe.expert_shared_feed_forward_length"] = uint32(3072)
		m["ernie4_5-moe.leading_dense_block_count"] = uint32(1)
		m["ernie4_5-moe.interleave_moe_layer_step"] = uint32(1)
		if mut != nil {
			mut(m)
		}
		return m
	}
	c := mustConfig(t, moe(nil))
	if c.Experts != 64 || c.ExpertsUsed != 6 || c.ExpertFFN != 1536 || c.SharedFFN != 3072 || c.DenseLead != 1 ||
		c.ExpertGating != GatingSoftmax || !c.ExpertNorm || !c.ExpertSelBias || c.RopeNeox || c.ExpertLayer(0) || !c.ExpertLayer(1) {
		t.Errorf("config %+v", c)
	}
	if c := mustConfig(t, moe(func(m map[string]any) { delete(m, "ernie4_5-moe.expert_shared_feed_forward_length") })); c.SharedFFN != 0 {
		t.Errorf("shared width %d without the key", c.SharedFFN)
	}
	checkKeyErrors(t, moe, []keyCase{
		{"no step", "ernie4_5-moe.interleave_moe_layer_step", nil, ErrBadModel},
		{"every other layer", "ernie4_5-moe.interleave_moe_layer_step", uint32(2), ErrUnsupportedArch},
		{"no dense lead", "ernie4_5-moe.leading_dense_block_count", nil, ErrBadModel},
		{"no expert width", "ernie4_5-moe.expert_feed_forward_length", nil, ErrBadModel},
		{"more used than there are", "ernie4_5-moe.expert_used_count", uint32(65), ErrBadModel},
		{"half the head rotated", "ernie4_5-moe.rope.dimension_count", uint32(32), ErrBadModel},
		{"values of another size", "ernie4_5-moe.attention.value_length", uint32(32), ErrBadModel},
	})
}
