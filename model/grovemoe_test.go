package model

import (
	"math"
	"testing"
)

// GroveMoE-Inst's metadata as llama.cpp's grovemoe loader reads it:
// qwen3moe's experts, renormalised, beside expert_count /
// experts_per_group adjugate experts of expert_chunk_feed_forward_length
// (absent or 0: the head size) scaled by expert_group_scale; an experts'
// width of 0 sizes them feed_forward_length / expert_used_count.
func TestConfigGroveMoE(t *testing.T) {
	// header is GroveMoE-Inst's keys, those of keys set over them.
	header := keysOver("grovemoe", map[string]any{
		"block_count": uint32(48), "feed_forward_length": uint32(6144), "expert_count": uint32(128), "expert_used_count": uint32(8),
		"expert_feed_forward_length": uint32(768), "expert_chunk_feed_forward_length": uint32(128), "experts_per_group": uint32(2),
		"expert_group_scale": float32(0.05), "rope.freq_base": float32(1000000),
	})
	moe := header(nil)
	c := mustConfig(t, moe(nil))
	if c.Experts != 128 || c.ExpertsUsed != 8 || c.ExpertFFN != 768 || !c.ExpertNorm || c.ExpertGating != 0 || c.ChunkFFN != 128 ||
		c.GroupExperts != 2 || c.GroupScale != 0.05 || !c.RopeNeox || !c.QKNorm || c.QKNormAfterRope || !c.ExpertLayer(0) {
		t.Errorf("config %+v", c)
	}
	c = mustConfig(t, header(map[string]any{"expert_feed_forward_length": uint32(0), "expert_chunk_feed_forward_length": uint32(0)})(nil))
	if c.ExpertFFN != 6144/8 || c.ChunkFFN != c.HeadDimK {
		t.Errorf("widths of 0: experts of %d, adjugate experts of %d, want %d and the head size %d", c.ExpertFFN, c.ChunkFFN, 6144/8, c.HeadDimK)
	}
	c = mustConfig(t, moe(func(m map[string]any) { delete(m, "grovemoe.expert_chunk_feed_forward_length") }))
	if c.ChunkFFN != c.HeadDimK {
		t.Errorf("no adjugate width: %d, want the head size %d", c.ChunkFFN, c.HeadDimK)
	}
	checkRequired(t, moe, "grovemoe", "expert_count", "expert_used_count", "expert_feed_forward_length", "attention.layer_norm_rms_epsilon",
		"experts_per_group", "expert_group_scale")
	checkKeyErrors(t, moe, append([]keyCase{
		{"no expert a group", "grovemoe.experts_per_group", uint32(0), ErrBadModel},
		{"groups of uneven size", "grovemoe.experts_per_group", uint32(3), ErrBadModel},
		{"fewer groups than experts a token", "grovemoe.experts_per_group", uint32(32), ErrBadModel},
		{"group scale infinite", "grovemoe.expert_group_scale", float32(math.Inf(1)), ErrBadModel},
	}, wholeHeadCases("grovemoe", 32)...))
}
