package model

import (
	"maps"
	"testing"
)

// PLaMo 3's metadata as llama.cpp reads it: the RMS epsilon required;
// NEOX RoPE, per-head Q/K norms and post-norms; with
// attention.sliding_window above 0, attention.sliding_window_pattern a
// period (default 8) or one flag a layer, some layer windowed, the
// windowed layers rotating with rope.freq_base_swa (default
// rope.freq_base) and the model's linear factor; without a window every
// layer global. YaRN with a windowed base of its own is refused.
func TestConfigPlamo3(t *testing.T) {
	// header is a 24-layer PLaMo 3's keys, those of keys set over them.
	header := func(keys map[string]any) func(mut func(map[string]any)) map[string]any {
		m := map[string]any{
			"block_count": uint32(24), "attention.sliding_window": uint32(2048), "attention.sliding_window_pattern": uint32(8),
			"rope.freq_base": float32(1000000), "rope.freq_base_swa": float32(10000),
		}
		maps.Copy(m, keys)
		return baseHeaderOf("plamo3", m, "attn_logit_softcapping", "final_logit_softcapping")
	}
	swa := header(nil)
	c := mustConfig(t, swa(nil))
	if !c.RopeNeox || !c.QKNorm || c.QKNormAfterRope || !c.PostNorms || c.GELU || c.Window != 2048 || !c.WindowedLayer(0) || !c.WindowedLayer(6) ||
		c.WindowedLayer(7) || c.WindowedLayer(23) || c.RopeBaseSWA != 10000 || c.RopeScaleSWA != c.RopeScale || c.AttnSoftcap != 0 || c.FinalSoftcap != 0 {
		t.Errorf("config %+v", c)
	}
	c = mustConfig(t, swa(func(m map[string]any) {
		delete(m, "plamo3.attention.sliding_window_pattern")
		delete(m, "plamo3.rope.freq_base_swa")
		m["plamo3.rope.scale_linear"] = float32(2)
	}))
	if !c.WindowedLayer(6) || c.WindowedLayer(15) || c.RopeBaseSWA != 1000000 || c.RopeScale != 2 || c.RopeScaleSWA != 2 {
		t.Errorf("without a pattern or a windowed base, scaled ×2: layers 6, 15 windowed %v %v, windowed base %g, scales %g %g",
			c.WindowedLayer(6), c.WindowedLayer(15), c.RopeBaseSWA, c.RopeScale, c.RopeScaleSWA)
	}
	c = mustConfig(t, header(map[string]any{"attention.sliding_window_pattern": uint32(0)})(nil))
	if !c.WindowedLayer(7) || !c.WindowedLayer(23) {
		t.Errorf("a period of 0: layers 7 and 23 windowed %v %v, want every layer", c.WindowedLayer(7), c.WindowedLayer(23))
	}
	flags := make([]bool, 24)
	flags[3] = true
	c = mustConfig(t, header(map[string]any{"attention.sliding_window_pattern": flags})(nil))
	if c.WindowedLayer(0) || !c.WindowedLayer(3) || c.WindowedLayer(7) {
		t.Errorf("one flag a layer, layer 3 windowed: layers 0, 3, 7 windowed %v %v %v", c.WindowedLayer(0), c.WindowedLayer(3), c.WindowedLayer(7))
	}
	for _, w := range []any{nil, uint32(0)} {
		c = mustConfig(t, swa(func(m map[string]any) { setKey(m, "plamo3.attention.sliding_window", w) }))
		if c.Window != 0 || c.WindowedLayer(0) || c.RopeBaseSWA != c.RopeBase {
			t.Errorf("window %v: window %d, layer 0 windowed %v, windowed base %g", w, c.Window, c.WindowedLayer(0), c.RopeBaseSWA)
		}
	}
	checkRequired(t, swa, "plamo3", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, swa, []keyCase{
		{"period 1, windowing no layer", "plamo3.attention.sliding_window_pattern", uint32(1), ErrBadModel},
		{"pattern windowing no layer", "plamo3.attention.sliding_window_pattern", make([]bool, 24), ErrBadModel},
		{"pattern of another count", "plamo3.attention.sliding_window_pattern", make([]bool, 23), ErrBadModel},
		{"windowed base of 0", "plamo3.rope.freq_base_swa", float32(0), ErrBadModel},
	})
	yarn := header(map[string]any{"rope.scaling.type": "yarn", "rope.scaling.factor": float32(4), "rope.scaling.original_context_length": uint32(512)})
	c = mustConfig(t, yarn(func(m map[string]any) { delete(m, "plamo3.rope.freq_base_swa") }))
	if c.YarnExt == 0 || c.RopeBaseSWA != c.RopeBase {
		t.Errorf("YaRN over one base: ext %g, windowed base %g", c.YarnExt, c.RopeBaseSWA)
	}
	checkKeyErrors(t, yarn, []keyCase{{"YaRN with a windowed base of its own", "plamo3.rope.freq_base_swa", float32(10000), ErrUnsupportedArch}})
}
