package model

import "testing"

// TestConfigLlama4: Llama 4 Scout's header as llama.cpp's converter writes
// it (no window, no pattern key: llama.cpp fixes the chunk at 8192 and
// the period at 4) reads as llama.cpp's loader takes it; Maverick's 128
// experts turn the Q/K norms off and its interleave_moe_layer_step 2
// makes the even layers dense; a pattern key moves the chunked layers but
// not the unrotated ones (n_no_rope_layer_step stays 4).
func TestConfigLlama4(t *testing.T) {
	scout := headerOf("llama4", decoderKeys{
		Embd: 5120, Blocks: 48, FFN: 16384, Heads: 40, HeadsKV: 8, KeyLen: 128, ValueLen: 128, Context: 10485760, RopeDim: 128,
		RMSEps: 1e-5, RopeBase: 500000, Experts: 16, ExpertsUsed: 1, ExpertFFN: 8192,
	}.with(map[string]any{"interleave_moe_layer_step": uint32(1)}))
	c := mustConfig(t, scout(nil))
	if !c.Chunked || c.Window != 8192 || c.AttnTempScale != 0.1 || c.AttnTempOffset != 1 || c.AttnTempFloor != 8192 || !c.AttnTempNoPE ||
		!c.QKUnitNorm || c.RopeNeox || !c.ExpertInputWeighted || c.ExpertGating != GatingSigmoid || c.ExpertNorm || c.ExpertScale != 0 ||
		c.Experts != 16 || c.ExpertsUsed != 1 || c.ExpertFFN != 8192 || c.SharedFFN != 8192 || c.RopeBaseSWA != 500000 {
		t.Errorf("config %+v", c)
	}
	for il := range 48 {
		rotated := il%4 != 3
		if c.WindowedLayer(il) != rotated || c.RopeLayer(il) != rotated || c.AttnTempLayer(il) == rotated || !c.ExpertLayer(il) {
			t.Errorf("layer %d: chunked %v, rotated %v, temperature %v, experts %v", il, c.WindowedLayer(il), c.RopeLayer(il), c.AttnTempLayer(il), c.ExpertLayer(il))
		}
	}
	// The temperature: 1 below position 8191, then log(2)·0.1 + 1.
	if c.AttnTemp(8190) != 1 || c.AttnTemp(8191) != float32(1+0.1*0.6931471805599453) {
		t.Errorf("temperature %v at 8190, %v at 8191", c.AttnTemp(8190), c.AttnTemp(8191))
	}
	maverick := mustConfig(t, scout(func(m map[string]any) {
		m["llama4.expert_count"], m["llama4.interleave_moe_layer_step"] = uint32(128), uint32(2)
		m["llama4.attention.sliding_window"] = uint32(8192)
		m["llama4.rope.freq_base_swa"] = float32(10000)
	}))
	if maverick.QKUnitNorm || maverick.ExpertLayer(0) || !maverick.ExpertLayer(1) || maverick.ExpertLayer(2) || !maverick.ExpertLayer(47) ||
		maverick.Window != 8192 || maverick.RopeBaseSWA != 10000 {
		t.Errorf("maverick %+v", maverick)
	}
	if c := mustConfig(t, scout(func(m map[string]any) { m["llama4.interleave_moe_layer_step"] = uint32(0) })); c.ExpertLayer(3) {
		t.Error("interleave_moe_layer_step 0: layer 3 has experts")
	}
	if c := mustConfig(t, scout(func(m map[string]any) { m["llama4.attention.sliding_window_pattern"] = uint32(2) })); c.WindowedLayer(1) ||
		!c.WindowedLayer(2) || !c.RopeLayer(1) || c.RopeLayer(3) {
		t.Errorf("pattern 2: layer 1 chunked %v, layer 2 chunked %v, layer 1 rotated %v, layer 3 rotated %v",
			c.WindowedLayer(1), c.WindowedLayer(2), c.RopeLayer(1), c.RopeLayer(3))
	}
	checkRequired(t, scout, "llama4", "attention.layer_norm_rms_epsilon", "interleave_moe_layer_step", "expert_feed_forward_length",
		"expert_count", "expert_used_count")
	checkKeyErrors(t, scout, []keyCase{
		{"no chunks", "llama4.attention.sliding_window", uint32(0), ErrUnsupportedArch},
		{"two experts a token", "llama4.expert_used_count", uint32(2), ErrUnsupportedArch},
		{"values of another size", "llama4.attention.value_length", uint32(64), ErrBadModel},
		{"half the head rotated", "llama4.rope.dimension_count", uint32(64), ErrBadModel},
		{"window not a number", "llama4.attention.sliding_window", "wide", ErrBadModel},
	})
}
