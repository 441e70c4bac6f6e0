package model

import "testing"

// K-EXAONE-236B-A23B's header (exaone-moe; 48 layers and the NextN block,
// widths as recalled from its config.json) as llama.cpp's exaone-moe
// loader reads it: three layers of four windowed (128) and rotated, the
// fourth global and unrotated, or as attention.sliding_window_pattern's
// period moves them (0: every layer windowed); a dense layer 0, then
// sigmoid routing renormalised and scaled beside a shared expert of the
// experts' width or of expert_shared_feed_forward_length; the NextN block
// off the layers that run. The RMS epsilon, the window, the experts'
// counts and width and the gating function are required; a window of 0,
// a period of 1 (no layer windowed: llama.cpp aborts) or a pattern of
// flags is refused, and so are half the head rotated or values of another
// size (the graph asserts both).
func TestConfigExaoneMoE(t *testing.T) {
	kx := headerOf("exaone-moe", decoderKeys{
		Embd: 6144, Blocks: 49, FFN: 18432, Heads: 64, HeadsKV: 8, KeyLen: 128, ValueLen: 128,
		Context: 262144, RopeDim: 128, RMSEps: 1e-5, RopeBase: 1000000,
		DenseLead: 1, Experts: 128, ExpertsUsed: 8, ExpertFFN: 2048, SharedCount: 1, ExpertScale: 2.5, ExpertNorm: true, Gating: 2,
	}.with(map[string]any{"attention.sliding_window": uint32(128), "nextn_predict_layers": uint32(1)}))
	c := mustConfig(t, kx(nil))
	if c.Layers != 48 || c.NextN != 1 || c.DenseLead != 1 || c.SharedFFN != 2048 || c.ExpertScale != 2.5 || !c.ExpertNorm ||
		c.ExpertGating != GatingSigmoid || !c.RopeNeox || c.RopeDim != 128 || !c.QKNorm || c.QKNormFull || !c.ExpertSelBias || c.Window != 128 {
		t.Fatalf("K-EXAONE: %+v", c)
	}
	layers := func(c Config, want ...[2]bool) {
		t.Helper()
		for il, w := range want {
			if c.WindowedLayer(il) != w[0] || c.RopeLayer(il) != w[1] {
				t.Errorf("layer %d: windowed %v, rotated %v; want %v, %v", il, c.WindowedLayer(il), c.RopeLayer(il), w[0], w[1])
			}
		}
	}
	on, off := [2]bool{true, true}, [2]bool{false, false}
	layers(c, on, on, on, off, on, on, on, off)
	if c.WindowedLayer(47) || c.RopeLayer(47) || !c.ExpertLayer(47) || c.ExpertLayer(48) || c.ExpertLayer(0) {
		t.Errorf("layer 47 windowed %v, rotated %v, experts %v; NextN block experts %v; layer 0 experts %v",
			c.WindowedLayer(47), c.RopeLayer(47), c.ExpertLayer(47), c.ExpertLayer(48), c.ExpertLayer(0))
	}
	layers(mustConfig(t, kx(func(m map[string]any) { m["exaone-moe.attention.sliding_window_pattern"] = uint32(2) })), on, off, on, off)
	layers(mustConfig(t, kx(func(m map[string]any) { m["exaone-moe.attention.sliding_window_pattern"] = uint32(0) })), on, on, on, on)
	c = mustConfig(t, kx(func(m map[string]any) {
		m["exaone-moe.expert_shared_feed_forward_length"] = uint32(4096)
		for _, k := range []string{"leading_dense_block_count", "expert_weights_norm", "expert_weights_scale", "nextn_predict_layers"} {
			delete(m, "exaone-moe."+k)
		}
	}))
	if c.SharedFFN != 4096 || c.DenseLead != 0 || c.ExpertNorm || c.ExpertScale != 0 || c.Layers != 49 || c.NextN != 0 || c.MoELayers != nil {
		t.Errorf("shared width %d, dense lead %d, norm %v, scale %v, layers %d, NextN %d; want 4096, 0, false, 0, 49, 0",
			c.SharedFFN, c.DenseLead, c.ExpertNorm, c.ExpertScale, c.Layers, c.NextN)
	}
	checkRequired(t, kx, "exaone-moe", "attention.layer_norm_rms_epsilon", "attention.sliding_window", "expert_feed_forward_length",
		"expert_gating_func", "expert_count", "expert_used_count")
	checkKeyErrors(t, kx, append([]keyCase{
		{"window 0", "exaone-moe.attention.sliding_window", uint32(0), ErrBadModel},
		{"no layer windowed", "exaone-moe.attention.sliding_window_pattern", uint32(1), ErrBadModel},
		{"pattern of flags", "exaone-moe.attention.sliding_window_pattern", []bool{true, true, true, false}, ErrBadModel},
		{"gating none", "exaone-moe.expert_gating_func", uint32(0), ErrUnsupportedArch},
		{"NextN blocks leaving no layer", "exaone-moe.nextn_predict_layers", uint32(49), ErrBadModel},
	}, wholeHeadCases("exaone-moe", 64)...))
}
