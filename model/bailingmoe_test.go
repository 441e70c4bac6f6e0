package model

import (
	"errors"
	"testing"
)

// lingLiteMeta is a Ling-lite header (bailingmoe; 28 layers as llama.cpp
// names the 16B, the other widths recalled from its config.json, not
// read here), edited by edit.
func lingLiteMeta(edit func(m map[string]any)) map[string]any {
	return archMeta("bailingmoe", decoderKeys{
		Embd: 2048, Blocks: 28, FFN: 5632, Heads: 16, HeadsKV: 4, KeyLen: 128, ValueLen: 128,
		Context: 16384, RopeDim: 128, RMSEps: 1e-6, RopeBase: 600000,
		Experts: 64, ExpertsUsed: 6, ExpertFFN: 1408, SharedCount: 2, ExpertNorm: true,
	}.with(map[string]any{"leading_dense_block_count": uint32(0)}), edit)
}

// Ling-lite's header as llama.cpp d32676d77 reads it: softmax routing
// whatever the file says, two shared experts of the experts' width run as
// one, every layer experts (leading_dense_block_count unused), NORM
// pairs; the keys llama-bench refuses a file without (probed) required,
// a rotation narrower than the head refused.
func TestConfigBailingMoE(t *testing.T) {
	c := mustConfig(t, lingLiteMeta(func(map[string]any) {}))
	if c.Layers != 28 || c.ExpertGating != GatingSoftmax || c.SharedFFN != 2816 || !c.ExpertNorm || c.ExpertScale != 0 || c.DenseLead != 0 ||
		c.RopeNeox || c.RopeDim != 128 || c.RMSEps != 1e-6 {
		t.Fatalf("config: %+v", c)
	}
	if c := mustConfig(t, lingLiteMeta(func(m map[string]any) {
		m["bailingmoe.leading_dense_block_count"] = uint32(3)
		m["bailingmoe.expert_gating_func"] = uint32(2)
	})); c.DenseLead != 0 || c.ExpertGating != GatingSoftmax {
		t.Errorf("dense lead %d, gating %d: want 0 and softmax, as llama.cpp's graph runs them", c.DenseLead, c.ExpertGating)
	}
	for _, k := range []string{"attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "expert_shared_count", "expert_count", "expert_used_count"} {
		if _, err := ConfigFromGGUF(parse(t, lingLiteMeta(func(m map[string]any) { delete(m, "bailingmoe."+k) }))); !errors.Is(err, ErrBadModel) {
			t.Errorf("without %s: %v, want ErrBadModel", k, err)
		}
	}
	if _, err := ConfigFromGGUF(parse(t, lingLiteMeta(func(m map[string]any) { m["bailingmoe.rope.dimension_count"] = uint32(64) }))); !errors.Is(err, ErrBadModel) {
		t.Errorf("half of each head rotated: %v, want ErrBadModel (llama.cpp sizes the query by the rotation)", err)
	}
}
