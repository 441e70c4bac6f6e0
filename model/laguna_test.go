package model

import (
	"slices"
	"testing"
)

// Laguna-XS.2's metadata as llama.cpp's loader reads it: the header
// poolside's converter writes (40 layers of 2048, 48 query heads on the
// global layers 0, 4, … and 64 on the windowed ones, 8 KV heads of 128,
// window 512; the global layers rotating 64 dims with YaRN ×64 over 4096
// positions from base 500000, the windowed ones all 128 from 10000; one
// dense layer of 4096, then 256 experts of 512, 8 a token, one shared of
// 512, renormalised and scaled by 2.5). Without a window (Laguna-M.1)
// every layer is global and rotates alike; the window's pattern may be a
// period other than 4 or one flag a layer; the shared count is optional
// and unused; the gating function is sigmoid when absent or 0.
func TestConfigLaguna(t *testing.T) {
	heads := make([]int32, 40)
	for il := range heads {
		heads[il] = 64
		if il%4 == 0 {
			heads[il] = 48
		}
	}
	xs2 := headerOf("laguna", map[string]any{
		"block_count": uint32(40), "embedding_length": uint32(2048), "feed_forward_length": uint32(4096),
		"attention.head_count": heads, "attention.head_count_kv": uint32(8),
		"attention.key_length": uint32(128), "attention.value_length": uint32(128),
		"rope.dimension_count": uint32(64), "rope.dimension_count_swa": uint32(128),
		"rope.freq_base": float32(500000), "rope.freq_base_swa": float32(10000),
		"rope.scaling.type": "yarn", "rope.scaling.factor": float32(64), "rope.scaling.original_context_length": uint32(4096),
		"rope.scaling.yarn_beta_fast": float32(64), "rope.scaling.yarn_beta_slow": float32(1),
		"context_length": uint32(262144), "attention.layer_norm_rms_epsilon": float32(1e-6), "attention.sliding_window": uint32(512),
		"expert_count": uint32(256), "expert_used_count": uint32(8), "expert_feed_forward_length": uint32(512),
		"expert_shared_feed_forward_length": uint32(512), "leading_dense_block_count": uint32(1),
		"expert_weights_norm": true, "expert_weights_scale": float32(2.5), "expert_gating_func": uint32(2),
	})
	c := mustConfig(t, xs2(nil))
	if !c.AttnOutGate || !c.GateSoftplus || c.PostNorms || !c.QKNorm || !c.RopeNeox || c.EmbedScale != 0 || c.Heads != 64 || c.HeadsKV != 8 ||
		c.Window != 512 || c.RopeDim != 64 || c.RopeDimSWA != 128 || c.RopeBaseSWA != 10000 || c.RopeScale != 64 || c.RopeScaleSWA != 1 ||
		c.DenseLead != 1 || c.Experts != 256 || c.ExpertsUsed != 8 || c.ExpertFFN != 512 || c.SharedFFN != 512 ||
		c.ExpertGating != GatingSigmoid || !c.ExpertSelBias || !c.ExpertNorm || c.ExpertScale != 2.5 || c.ExpertLayer(0) || !c.ExpertLayer(1) {
		t.Errorf("config %+v", c)
	}
	for il := range 40 {
		if c.WindowedLayer(il) != (il%4 != 0) || c.LayerHeads(il) != int(heads[il]) || c.attnOutCols(il) != int(heads[il])*128 {
			t.Errorf("layer %d: windowed %v, %d heads, %d output columns", il, c.WindowedLayer(il), c.LayerHeads(il), c.attnOutCols(il))
		}
	}
	// Laguna-M.1: no window, one head count, no shared count or gating.
	m1 := mustConfig(t, xs2(func(m map[string]any) {
		setKey(m, "laguna.attention.sliding_window", uint32(0))
		m["laguna.attention.head_count"] = slices.Repeat([]int32{64}, 40)
		m["laguna.expert_gating_func"] = uint32(0)
		m["laguna.expert_shared_count"] = uint32(0)
	}))
	if m1.Window != 0 || m1.WindowedLayer(1) || m1.LayerQHeads != nil || m1.LayerHeads(0) != 64 || m1.RopeDimSWA != 0 || m1.ExpertGating != GatingSigmoid || m1.SharedFFN != 512 {
		t.Errorf("M.1: %+v", m1)
	}
	for _, tc := range []struct {
		pattern  any
		windowed []int // of layers 0–3
	}{
		{uint32(2), []int{1, 3}},
		{uint32(0), []int{0, 1, 2, 3}},
	} {
		c := mustConfig(t, xs2(func(m map[string]any) { m["laguna.attention.sliding_window_pattern"] = tc.pattern }))
		for il := range 4 {
			if c.WindowedLayer(il) != slices.Contains(tc.windowed, il) {
				t.Errorf("pattern %v: layer %d windowed %v", tc.pattern, il, c.WindowedLayer(il))
			}
		}
	}
	if c := mustConfig(t, xs2(func(m map[string]any) { delete(m, "laguna.rope.dimension_count_swa") })); c.RopeDimSWA != 64 {
		t.Errorf("no rope.dimension_count_swa: %d, want rope.dimension_count's 64", c.RopeDimSWA)
	}
	// As llama-bench d32676d77 loads them: without expert_weights_norm
	// or expert_weights_scale the weights are neither renormalised nor
	// scaled; without expert_shared_feed_forward_length the shared expert
	// is expert_shared_count (default 1) experts wide.
	c = mustConfig(t, xs2(func(m map[string]any) {
		delete(m, "laguna.expert_weights_norm")
		delete(m, "laguna.expert_weights_scale")
		delete(m, "laguna.expert_shared_feed_forward_length")
		m["laguna.expert_shared_count"] = uint32(2)
	}))
	if c.ExpertNorm || c.ExpertScale != 0 || c.SharedFFN != 1024 {
		t.Errorf("optional keys absent: norm %v, scale %v, shared %d", c.ExpertNorm, c.ExpertScale, c.SharedFFN)
	}
	if c := mustConfig(t, xs2(func(m map[string]any) { m["laguna.expert_shared_count"] = uint32(2) })); c.SharedFFN != 512 {
		t.Errorf("2 shared of width 512: %d, want the width alone", c.SharedFFN)
	}
	checkRequired(t, xs2, "laguna", "attention.layer_norm_rms_epsilon", "leading_dense_block_count", "expert_feed_forward_length")
	checkKeyErrors(t, xs2, []keyCase{
		{"heads not of the KV heads", "laguna.attention.head_count", slices.Repeat([]int32{48, 60}, 20), ErrBadModel},
		{"per-layer KV heads", "laguna.attention.head_count_kv", slices.Repeat([]int32{8, 4}, 20), ErrUnsupportedArch},
		{"per-layer feed-forward", "laguna.feed_forward_length", slices.Repeat([]int32{4096, 2048}, 20), ErrUnsupportedArch},
		{"odd windowed rotation", "laguna.rope.dimension_count_swa", uint32(63), ErrBadModel},
		{"windowed rotation past the head", "laguna.rope.dimension_count_swa", uint32(256), ErrBadModel},
		{"no shared width", "laguna.expert_shared_feed_forward_length", uint32(0), ErrBadModel},
		{"window flags a layer", "laguna.attention.sliding_window_pattern", slices.Repeat([]bool{false, true}, 20), ErrUnsupportedArch},
		{"unknown gating", "laguna.expert_gating_func", uint32(9), ErrUnsupportedArch},
		{"values of another size", "laguna.attention.value_length", uint32(64), ErrBadModel},
		{"window not a number", "laguna.attention.sliding_window", "wide", ErrBadModel},
	})
}
