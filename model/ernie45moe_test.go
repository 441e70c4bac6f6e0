package model

import "testing"

// ERNIE 4.5 MoE's metadata as llama.cpp reads it: the experts' counts and
// width, leading_dense_block_count and interleave_moe_layer_step required
// (a step other than 1, which llama.cpp's loader and graph read two ways,
// refused as unsupported), the shared expert's width optional; softmax
// routing renormalised, NORM RoPE over whole heads of one size (the graph
// asserts both).
func TestConfigErnie45MoE(t *testing.T) {
	moe := baseHeaderOf("ernie4_5-moe", map[string]uint32{
		"expert_count": 64, "expert_used_count": 6, "expert_feed_forward_length": 1536,
		"expert_shared_feed_forward_length": 3072, "leading_dense_block_count": 1, "interleave_moe_layer_step": 1,
	})
	c := mustConfig(t, moe(nil))
	if c.Experts != 64 || c.ExpertsUsed != 6 || c.ExpertFFN != 1536 || c.SharedFFN != 3072 || c.DenseLead != 1 ||
		c.ExpertGating != GatingSoftmax || !c.ExpertNorm || !c.ExpertSelBias || c.RopeNeox || c.ExpertLayer(0) || !c.ExpertLayer(1) {
		t.Errorf("config %+v", c)
	}
	if c := mustConfig(t, moe(func(m map[string]any) { delete(m, "ernie4_5-moe.expert_shared_feed_forward_length") })); c.SharedFFN != 0 {
		t.Errorf("shared width %d without the key", c.SharedFFN)
	}
	checkRequired(t, moe, "ernie4_5-moe", "interleave_moe_layer_step", "leading_dense_block_count", "expert_feed_forward_length")
	checkKeyErrors(t, moe, append([]keyCase{
		{"every other layer", "ernie4_5-moe.interleave_moe_layer_step", uint32(2), ErrUnsupportedArch},
		{"more used than there are", "ernie4_5-moe.expert_used_count", uint32(65), ErrBadModel},
	}, wholeHeadCases("ernie4_5-moe", 32)...))
}

// wholeHeadCases are the key cases of an architecture whose graph asserts
// whole heads of one size (meta.wholeHeads), on a header whose heads are
// twice half wide: half of each head rotated, and values half as wide,
// each ErrBadModel.
func wholeHeadCases(arch string, half uint32) []keyCase {
	return []keyCase{
		{"half the head rotated", arch + ".rope.dimension_count", half, ErrBadModel},
		{"values of another size", arch + ".attention.value_length", half, ErrBadModel},
	}
}
