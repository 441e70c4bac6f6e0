package model

import "testing"

// Trinity's metadata as llama.cpp's loader reads it: the header Arcee's
// converter writes for Trinity Mini (32 layers of 2048, 32 heads of 128
// on 4, dense layers of 6144, 2 of them, then 128 experts of 1024, 8 a
// token, one shared, route_norm and route_scale 2.826, window 2048, no
// expert_gating_func). Layers 3, 7 … are global and unrotated, the others
// windowed and rotated; without a window every layer is global and the
// fourth ones still unrotated. The RMS epsilon, the dense lead and the
// shared count are required (0 shared: none); the gating function is
// sigmoid when absent or 0 (none).
func TestConfigAfmoe(t *testing.T) {
	trinity := headerOf("afmoe", map[string]any{
		"block_count": uint32(32), "embedding_length": uint32(2048), "feed_forward_length": uint32(6144),
		"attention.head_count": uint32(32), "attention.head_count_kv": uint32(4),
		"attention.key_length": uint32(128), "attention.value_length": uint32(128), "rope.dimension_count": uint32(128),
		"context_length": uint32(131072), "attention.layer_norm_rms_epsilon": float32(1e-5), "rope.freq_base": float32(10000),
		"attention.sliding_window": uint32(2048), "expert_count": uint32(128), "expert_used_count": uint32(8),
		"expert_feed_forward_length": uint32(1024), "expert_shared_count": uint32(1), "leading_dense_block_count": uint32(2),
		"expert_weights_norm": true, "expert_weights_scale": float32(2.826),
	})
	c := mustConfig(t, trinity(nil))
	if !c.AttnOutGate || !c.PostNorms || !c.QKNorm || !c.RopeNeox || c.EmbedScale != float32(45.254833995939045) || c.Window != 2048 ||
		c.DenseLead != 2 || c.Experts != 128 || c.ExpertsUsed != 8 || c.ExpertFFN != 1024 || c.SharedFFN != 1024 ||
		c.ExpertGating != GatingSigmoid || !c.ExpertSelBias || !c.ExpertNorm || c.ExpertScale != 2.826 || c.ExpertLayer(1) || !c.ExpertLayer(2) {
		t.Errorf("config %+v", c)
	}
	for _, il := range []int{0, 1, 2, 4, 30} {
		if !c.WindowedLayer(il) || !c.RopeLayer(il) {
			t.Errorf("layer %d: windowed %v, rotated %v; want both", il, c.WindowedLayer(il), c.RopeLayer(il))
		}
	}
	for _, il := range []int{3, 7, 31} {
		if c.WindowedLayer(il) || c.RopeLayer(il) {
			t.Errorf("layer %d: windowed %v, rotated %v; want neither", il, c.WindowedLayer(il), c.RopeLayer(il))
		}
	}
	for _, w := range []any{nil, uint32(0)} {
		c := mustConfig(t, trinity(func(m map[string]any) {
			setKey(m, "afmoe.attention.sliding_window", w)
			m["afmoe.expert_gating_func"] = uint32(0)
			m["afmoe.expert_shared_count"] = uint32(0)
		}))
		if c.Window != 0 || c.WindowedLayer(0) || !c.RopeLayer(0) || c.RopeLayer(3) || c.ExpertGating != GatingSigmoid || c.SharedFFN != 0 {
			t.Errorf("window %v: window %d, layer 3 rotated %v, gating %v, shared %d", w, c.Window, c.RopeLayer(3), c.ExpertGating, c.SharedFFN)
		}
	}
	if c := mustConfig(t, trinity(func(m map[string]any) { m["afmoe.expert_gating_func"] = uint32(1) })); c.ExpertGating != GatingSoftmax {
		t.Errorf("gating 1: %v, want softmax", c.ExpertGating)
	}
	checkRequired(t, trinity, "afmoe", "attention.layer_norm_rms_epsilon", "leading_dense_block_count", "expert_shared_count", "expert_feed_forward_length")
	checkKeyErrors(t, trinity, []keyCase{
		{"dense lead past the layers", "afmoe.leading_dense_block_count", uint32(33), ErrBadModel},
		{"unknown gating", "afmoe.expert_gating_func", uint32(9), ErrUnsupportedArch},
		{"negative scale", "afmoe.expert_weights_scale", float32(-1), ErrBadModel},
		{"values of another size", "afmoe.attention.value_length", uint32(64), ErrBadModel},
		{"window not a number", "afmoe.attention.sliding_window", "wide", ErrBadModel},
	})
}
