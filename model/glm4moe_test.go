package model

import (
	"errors"
	"strings"
	"testing"
)

// glm45AirMeta is GLM-4.5-Air's header as llama.cpp's converter writes it
// (46 layers and the NextN block; NVIDIA Megatron Bridge's GLM 4.5 page
// and the model's config.json give the sizes), edited by edit.
func glm45AirMeta(edit func(m map[string]any)) map[string]any {
	return archMeta("glm4moe", decoderKeys{
		Embd: 4096, Blocks: 47, FFN: 10944, Heads: 96, HeadsKV: 8, KeyLen: 128, ValueLen: 128,
		Context: 131072, RopeDim: 64, RMSEps: 1e-5, RopeBase: 1000000,
		DenseLead: 1, Experts: 128, ExpertsUsed: 8, ExpertFFN: 1408, SharedCount: 1, ExpertScale: 1, ExpertNorm: true, Gating: 2,
	}.with(map[string]any{"nextn_predict_layers": uint32(1)}), edit)
}

// lingMiniMeta is Ling-mini-2.0's header (bailingmoe2; its config.json's
// sizes), edited by edit.
func lingMiniMeta(edit func(m map[string]any)) map[string]any {
	return archMeta("bailingmoe2", decoderKeys{
		Embd: 2048, Blocks: 20, FFN: 5120, Heads: 16, HeadsKV: 4, KeyLen: 128, ValueLen: 128,
		Context: 32768, RopeDim: 64, RMSEps: 1e-6, RopeBase: 600000,
		DenseLead: 1, Experts: 256, ExpertsUsed: 8, ExpertFFN: 512, SharedFFN: 512, SharedCount: 1,
		ExpertScale: 2.5, ExpertNorm: true, Gating: 2, Groups: 8, GroupsUsed: 4,
	}.with(nil), edit)
}

// GLM-4.5-Air's and Ling-mini-2.0's headers give llama.cpp's numbers:
// the NextN block off the layers that run, the shared expert's width, NEOX
// RoPE over half of each head, sigmoid routing renormalised and scaled,
// Ling's groups; a GLM file without expert_gating_func routes by sigmoid,
// and Ling's shared width falls back to the experts' when its key is 0.
func TestConfigGLM4MoE(t *testing.T) {
	c := mustConfig(t, glm45AirMeta(func(map[string]any) {}))
	if c.Layers != 46 || c.NextN != 1 || c.DenseLead != 1 || c.SharedFFN != 1408 || c.ExpertScale != 1 || !c.ExpertNorm ||
		c.ExpertGating != GatingSigmoid || !c.RopeNeox || c.RopeDim != 64 || c.ExpertGroups != 0 || !c.QKNorm || !c.QKVBias || !c.ExpertSelBias {
		t.Fatalf("GLM-4.5-Air: %+v", c)
	}
	if c := mustConfig(t, glm45AirMeta(func(m map[string]any) { delete(m, "glm4moe.expert_gating_func") })); c.ExpertGating != GatingSigmoid {
		t.Errorf("gating %d without the key, want sigmoid", c.ExpertGating)
	}
	if c := mustConfig(t, glm45AirMeta(func(m map[string]any) { delete(m, "glm4moe.nextn_predict_layers") })); c.Layers != 47 || c.NextN != 0 {
		t.Errorf("without NextN: %d layers, %d NextN", c.Layers, c.NextN)
	}
	l := mustConfig(t, lingMiniMeta(func(map[string]any) {}))
	if l.Layers != 20 || l.NextN != 0 || l.SharedFFN != 512 || l.ExpertGroups != 8 || l.ExpertGroupsUsed != 4 || l.ExpertScale != 2.5 ||
		!l.ExpertNorm || l.ExpertGating != GatingSigmoid || !l.RopeNeox || l.RopeDim != 64 || !l.QKNorm || l.DenseLead != 1 {
		t.Fatalf("Ling-mini-2.0: %+v", l)
	}
	if l := mustConfig(t, lingMiniMeta(func(m map[string]any) {
		m["bailingmoe2.expert_shared_feed_forward_length"] = uint32(0)
		m["bailingmoe2.expert_shared_count"] = uint32(2)
	})); l.SharedFFN != 1024 {
		t.Errorf("shared width %d from 2 shared experts of the experts' 512, want 1024", l.SharedFFN)
	}
	glm, ling := "glm4moe.", "bailingmoe2."
	for _, tc := range []struct {
		name string
		meta func(func(map[string]any)) map[string]any
		key  string
		mut  func(map[string]any)
		want error
	}{
		{"glm no shared count", glm45AirMeta, glm + "expert_shared_count", func(m map[string]any) { delete(m, glm+"expert_shared_count") }, ErrBadModel},
		{"glm no scale", glm45AirMeta, glm + "expert_weights_scale", func(m map[string]any) { delete(m, glm+"expert_weights_scale") }, ErrBadModel},
		{"glm no rms epsilon", glm45AirMeta, glm + "attention.layer_norm_rms_epsilon", func(m map[string]any) { delete(m, glm+"attention.layer_norm_rms_epsilon") }, ErrBadModel},
		{"glm no expert width", glm45AirMeta, glm + "expert_feed_forward_length", func(m map[string]any) { delete(m, glm+"expert_feed_forward_length") }, ErrBadModel},
		{"glm NextN leaving no layer", glm45AirMeta, glm + "nextn_predict_layers", func(m map[string]any) { m[glm+"nextn_predict_layers"] = uint32(47) }, ErrBadModel},
		{"glm NextN not a count", glm45AirMeta, glm + "nextn_predict_layers", func(m map[string]any) { m[glm+"nextn_predict_layers"] = "one" }, ErrBadModel},
		{"glm values wider than keys", glm45AirMeta, glm + "attention.value_length", func(m map[string]any) { m[glm+"attention.value_length"] = uint32(256) }, ErrBadModel},
		{"glm multimodal RoPE", glm45AirMeta, glm + "rope.dimension_sections", func(m map[string]any) { m[glm+"rope.dimension_sections"] = []int32{8, 12, 12, 0} }, ErrUnsupportedArch},
		{"glm gating unknown", glm45AirMeta, glm + "expert_gating_func", func(m map[string]any) { m[glm+"expert_gating_func"] = uint32(9) }, ErrUnsupportedArch},
		{"glm groups not dividing", glm45AirMeta, glm + "expert_group_count", func(m map[string]any) {
			m[glm+"expert_group_count"], m[glm+"expert_group_used_count"] = uint32(3), uint32(2)
		}, ErrBadModel},
		{"ling no shared width", lingMiniMeta, ling + "expert_shared_feed_forward_length", func(m map[string]any) { delete(m, ling+"expert_shared_feed_forward_length") }, ErrBadModel},
		{"ling no gating", lingMiniMeta, ling + "expert_gating_func", func(m map[string]any) { delete(m, ling+"expert_gating_func") }, ErrBadModel},
		{"ling no dense lead", lingMiniMeta, ling + "leading_dense_block_count", func(m map[string]any) { delete(m, ling+"leading_dense_block_count") }, ErrBadModel},
		{"ling no scale", lingMiniMeta, ling + "expert_weights_scale", func(m map[string]any) { delete(m, ling+"expert_weights_scale") }, ErrBadModel},
		{"ling query not the width", lingMiniMeta, ling + "attention.key_length", func(m map[string]any) {
			m[ling+"attention.key_length"], m[ling+"attention.value_length"] = uint32(64), uint32(64)
		}, ErrBadModel},
		{"ling groups used all", lingMiniMeta, ling + "expert_group_used_count", func(m map[string]any) { m[ling+"expert_group_used_count"] = uint32(8) }, ErrBadModel},
		{"ling groups too few for the used", lingMiniMeta, ling + "expert_used_count", func(m map[string]any) {
			m[ling+"expert_group_used_count"], m[ling+"expert_used_count"] = uint32(1), uint32(40)
		}, ErrBadModel},
		{"ling NextN leaving no layer", lingMiniMeta, ling + "nextn_predict_layers", func(m map[string]any) { m[ling+"nextn_predict_layers"] = uint32(20) }, ErrBadModel},
	} {
		_, err := ConfigFromGGUF(parse(t, tc.meta(tc.mut)))
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: %v, want %v naming %s", tc.name, err, tc.want, tc.key)
		}
	}
}
