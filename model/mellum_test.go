package model

import "testing"

// mellumPattern is Mellum2's attention.sliding_window_pattern as its
// converter writes layer_types: every fourth layer global.
func mellumPattern(layers int) []bool {
	flags := make([]bool, layers)
	for il := range flags {
		flags[il] = il%4 != 3
	}
	return flags
}

// Mellum2-12B-A2.5B's metadata as llama.cpp reads it: expert_count,
// expert_used_count, expert_feed_forward_length (0 meaning
// feed_forward_length / expert_used_count) and the RMS epsilon required;
// softmax routing renormalised whatever expert_weights_norm says,
// expert_weights_scale not read; NEOX RoPE over whole heads; with a
// window, the pattern required (a period or one flag a layer) and some
// layer windowed, the windowed layers rotating with rope.freq_base
// unscaled whatever rope.freq_base_swa says.
func TestConfigMellum(t *testing.T) {
	// header is Mellum2's keys, those of keys set over them.
	header := keysOver("mellum", map[string]any{
		"block_count": uint32(28), "feed_forward_length": uint32(7168), "expert_count": uint32(64), "expert_used_count": uint32(8),
		"expert_feed_forward_length": uint32(896), "attention.sliding_window": uint32(1024),
		"attention.sliding_window_pattern": mellumPattern(28), "rope.freq_base": float32(500000),
	})
	moe := header(nil)
	c := mustConfig(t, moe(nil))
	if c.Experts != 64 || c.ExpertsUsed != 8 || c.ExpertFFN != 896 || !c.ExpertNorm || c.ExpertGating != 0 || c.ExpertScale != 0 ||
		c.SharedFFN != 0 || !c.RopeNeox || !c.QKNorm || c.QKNormAfterRope || c.Window != 1024 || !c.WindowedLayer(0) || !c.WindowedLayer(26) ||
		c.WindowedLayer(3) || c.WindowedLayer(27) || c.RopeBaseSWA != 500000 || c.RopeScaleSWA != 1 || !c.ExpertLayer(0) {
		t.Errorf("config %+v", c)
	}
	c = mustConfig(t, header(map[string]any{
		"expert_feed_forward_length": uint32(0), "expert_weights_scale": float32(2), "expert_weights_norm": false,
		"rope.freq_base_swa": float32(10000), "attention.sliding_window_pattern": uint32(2),
	})(nil))
	if c.ExpertFFN != 7168/8 || c.ExpertScale != 0 || !c.ExpertNorm || c.RopeBaseSWA != 500000 || !c.WindowedLayer(0) || c.WindowedLayer(1) {
		t.Errorf("with a width of 0, a period of 2 and keys llama.cpp does not read: experts of %d, scale %g, norm %v, windowed base %g, windowed %v %v",
			c.ExpertFFN, c.ExpertScale, c.ExpertNorm, c.RopeBaseSWA, c.WindowedLayer(0), c.WindowedLayer(1))
	}
	c = mustConfig(t, header(map[string]any{"attention.sliding_window_pattern": uint32(0)})(nil))
	if !c.WindowedLayer(3) || !c.WindowedLayer(27) {
		t.Errorf("a period of 0: layers 3 and 27 windowed %v %v, want every layer", c.WindowedLayer(3), c.WindowedLayer(27))
	}
	c = mustConfig(t, moe(func(m map[string]any) {
		delete(m, "mellum.attention.sliding_window")
		delete(m, "mellum.attention.sliding_window_pattern")
	}))
	if c.Window != 0 || c.WindowedLayer(0) {
		t.Errorf("without a window: window %d, layer 0 windowed %v", c.Window, c.WindowedLayer(0))
	}
	checkRequired(t, moe, "mellum", "expert_count", "expert_used_count", "expert_feed_forward_length", "attention.layer_norm_rms_epsilon",
		"attention.sliding_window_pattern")
	checkKeyErrors(t, moe, append([]keyCase{
		{"more used than there are", "mellum.expert_used_count", uint32(65), ErrBadModel},
		{"no expert a token", "mellum.expert_used_count", uint32(0), ErrBadModel},
		{"pattern windowing no layer", "mellum.attention.sliding_window_pattern", make([]bool, 28), ErrBadModel},
		{"period 1, windowing no layer", "mellum.attention.sliding_window_pattern", uint32(1), ErrBadModel},
		{"pattern of another count", "mellum.attention.sliding_window_pattern", mellumPattern(27), ErrBadModel},
	}, wholeHeadCases("mellum", 32)...))
}

// Maincoder-1B's metadata as llama.cpp reads it: NORM RoPE over whole
// heads, the per-head Q/K norms after it, the RMS epsilon required, any
// sliding window ignored.
func TestConfigMaincoder(t *testing.T) {
	dense := baseHeaderOf("maincoder", map[string]any{"rope.freq_base": float32(1000000)})
	c := mustConfig(t, dense(nil))
	if c.RopeNeox || !c.QKNorm || !c.QKNormAfterRope || c.Window != 0 || c.Experts != 0 || c.RopeDim != c.HeadDimK {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, dense, "maincoder", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, dense, wholeHeadCases("maincoder", 32))
}

// Nanbeige's metadata as llama.cpp reads it: llama's keys, the RMS
// epsilon required; num_loops (default 1, at least 1, and block_count ×
// num_loops at most 512, which llama.cpp asserts) runs the stack that
// many times, each run's attention keeping cache layers of its own;
// skip_loop_final_norm (default false) leaves out output_norm between
// the runs.
func TestConfigNanbeige(t *testing.T) {
	h := baseHeaderOf("nanbeige", map[string]any{"num_loops": uint32(2)})
	c := mustConfig(t, h(nil))
	if c.RopeNeox || c.Loops != 2 || !c.LoopNorm || c.KVLayers() != 2*26 || c.Layers != 26 {
		t.Errorf("config %+v", c)
	}
	once := mustConfig(t, h(func(m map[string]any) { delete(m, "nanbeige.num_loops"); m["nanbeige.skip_loop_final_norm"] = true }))
	if once.Loops != 1 || once.LoopNorm || once.KVLayers() != 26 {
		t.Errorf("without num_loops, skipping the norm: %+v", once)
	}
	checkRequired(t, h, "nanbeige", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, h, []keyCase{
		{"no run", "nanbeige.num_loops", uint32(0), ErrBadModel},
		{"26 × 20 runs, above 512", "nanbeige.num_loops", uint32(20), ErrBadModel},
		{"loops a string", "nanbeige.num_loops", "two", ErrBadModel},
		{"skip a number", "nanbeige.skip_loop_final_norm", uint32(1), ErrBadModel},
		{"values of another size", "nanbeige.attention.value_length", uint32(32), ErrBadModel},
	})
}

// Talkie 1930's metadata as llama.cpp reads it: NEOX RoPE over whole
// heads, the RMS epsilon and logit_scale required (a logit_scale of 0
// refused: it would zero every logit).
func TestConfigTalkie(t *testing.T) {
	h := baseHeaderOf("talkie", map[string]any{"logit_scale": float32(2)})
	c := mustConfig(t, h(nil))
	if !c.RopeNeox || c.LogitMul != 2 || !c.EmbedSkip || !c.QHeadGain || !c.QKUnitNorm || c.QKNorm || c.RopeDim != c.HeadDimK {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, h, "talkie", "attention.layer_norm_rms_epsilon", "logit_scale")
	checkKeyErrors(t, h, append([]keyCase{
		{"logit_scale 0", "talkie.logit_scale", float32(0), ErrBadModel},
		{"logit_scale a string", "talkie.logit_scale", "two", ErrBadModel},
	}, wholeHeadCases("talkie", 32)...))
}
