package model

import (
	"math"
	"slices"
	"testing"
)

// TestConfigMimo2 reads MiMo-V2-Flash's header as its converter writes it
// (config.json's widths: 48 layers of 4096, 64 query heads of keys of 192
// and values of 128, 4 KV heads on the global layers and 8 on the
// windowed ones, 64 rotated dimensions, 256 experts of 2048, 8 a token;
// which layers are global is a guess, unverified: 9 of the 48, as
// config.json's count says).
func TestConfigMimo2(t *testing.T) {
	kvs, windowed := make([]int32, 48), make([]bool, 48)
	for il := range kvs {
		windowed[il] = il != 0 && il%6 != 5
		kvs[il] = 4
		if windowed[il] {
			kvs[il] = 8
		}
	}
	hdr := headerOf("mimo2", map[string]any{
		"block_count": uint32(48), "embedding_length": uint32(4096), "feed_forward_length": uint32(16384),
		"attention.head_count": uint32(64), "attention.head_count_kv": kvs,
		"attention.key_length": uint32(192), "attention.value_length": uint32(128),
		"rope.dimension_count": uint32(64), "rope.freq_base": float32(5e6), "rope.freq_base_swa": float32(10000),
		"context_length": uint32(262144), "attention.layer_norm_rms_epsilon": float32(1e-5),
		"attention.sliding_window": uint32(128), "attention.sliding_window_pattern": windowed,
		"attention.value_scale": float32(0.707),
		"expert_count":          uint32(256), "expert_used_count": uint32(8), "expert_feed_forward_length": uint32(2048),
	})
	c := mustConfig(t, hdr(nil))
	if !c.RopeNeox || !c.Sinks || c.Heads != 64 || c.HeadsKV != 8 || c.HeadDimK != 192 || c.HeadDimV != 128 || c.RopeDim != 64 ||
		c.Window != 128 || c.RopeBase != 5e6 || c.RopeBaseSWA != 10000 || c.RopeScaleSWA != 1 || c.AttnOutScale != 0.707 ||
		c.Experts != 256 || c.ExpertsUsed != 8 || c.ExpertFFN != 2048 || c.FFN != 16384 || c.ExpertGating != GatingSigmoid ||
		!c.ExpertNorm || c.ExpertScale != 0 || !c.ExpertSelBias || c.SharedFFN != 0 || c.NextN != 0 || c.KQScale != invSqrt(192) {
		t.Errorf("config %+v", c)
	}
	for il := range 48 {
		if c.WindowedLayer(il) != windowed[il] || c.LayerHeadsKV(il) != int(kvs[il]) || c.LayerHeads(il) != 64 || c.attnOutCols(il) != 64*128 {
			t.Errorf("layer %d: windowed %v, %d KV heads, %d heads", il, c.WindowedLayer(il), c.LayerHeadsKV(il), c.LayerHeads(il))
		}
	}
	// The value scale: absent or 1, none (llama.cpp skips the scale).
	for _, v := range []any{nil, float32(1)} {
		if c := mustConfig(t, hdr(func(m map[string]any) { setKey(m, "mimo2.attention.value_scale", v) })); c.AttnOutScale != 0 {
			t.Errorf("value_scale %v: AttnOutScale %v, want 0", v, c.AttnOutScale)
		}
	}
	// One integer is every layer's flag (llama-bench d32676d77 loads a
	// file whose pattern is the u32 4), not a period.
	for _, tc := range []struct {
		v    uint32
		want bool
	}{{4, true}, {0, false}} {
		c := mustConfig(t, hdr(func(m map[string]any) { m["mimo2.attention.sliding_window_pattern"] = tc.v }))
		for il := range 48 {
			if c.WindowedLayer(il) != tc.want {
				t.Fatalf("pattern %d: layer %d windowed %v", tc.v, il, c.WindowedLayer(il))
			}
		}
	}
	// nextn_predict_layers takes the last blocks off; the flags are still
	// block_count's.
	if c := mustConfig(t, hdr(func(m map[string]any) { m["mimo2.nextn_predict_layers"] = uint32(1) })); c.Layers != 47 || c.NextN != 1 || !c.WindowedLayer(46) {
		t.Errorf("one NextN block: %d layers, %d NextN", c.Layers, c.NextN)
	}
	// Without rope.freq_base_swa the windowed layers rotate with the base.
	if c := mustConfig(t, hdr(func(m map[string]any) { delete(m, "mimo2.rope.freq_base_swa") })); c.RopeBaseSWA != 5e6 {
		t.Errorf("no freq_base_swa: %v, want 5e6", c.RopeBaseSWA)
	}
	// The key length is the width over layer 0's heads when not stated.
	if c := mustConfig(t, hdr(func(m map[string]any) {
		delete(m, "mimo2.attention.key_length")
		delete(m, "mimo2.attention.value_length")
		delete(m, "mimo2.rope.dimension_count")
	})); c.HeadDimK != 64 || c.HeadDimV != 64 || c.RopeDim != 64 {
		t.Errorf("no head sizes: %d, %d, %d", c.HeadDimK, c.HeadDimV, c.RopeDim)
	}
	checkRequired(t, hdr, "mimo2", "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "attention.sliding_window",
		"attention.sliding_window_pattern", "expert_count", "expert_used_count")
	checkKeyErrors(t, hdr, []keyCase{
		{"pattern one flag short", "mimo2.attention.sliding_window_pattern", windowed[:47], ErrBadModel},
		{"pattern a bool", "mimo2.attention.sliding_window_pattern", true, ErrBadModel},
		{"window 0", "mimo2.attention.sliding_window", uint32(0), ErrBadModel},
		{"KV heads 0 on a layer", "mimo2.attention.head_count_kv", append(slices.Clone(kvs[:47]), 0), ErrBadModel},
		{"heads not of a layer's KV heads", "mimo2.attention.head_count_kv", append(slices.Clone(kvs[:47]), 3), ErrBadModel},
		{"per-layer feed-forward", "mimo2.feed_forward_length", slices.Repeat([]int32{16384, 8192}, 24), ErrUnsupportedArch},
		{"value scale not finite", "mimo2.attention.value_scale", float32(math.NaN()), ErrBadModel},
		{"no layer left", "mimo2.nextn_predict_layers", uint32(48), ErrBadModel},
		{"freq_base_swa 0", "mimo2.rope.freq_base_swa", float32(0), ErrBadModel},
	})
}
