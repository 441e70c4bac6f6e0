package model

import (
	"slices"
	"testing"
)

// deciHeader is a 5-layer deci's header with every kind of layer
// Llama-Nemotron files hold: attention (layers 0 and 4), none (1),
// attn_output alone (2), no feed-forward (3).
func deciHeader(mut func(map[string]any)) map[string]any {
	return baseHeaderOf("deci", map[string]any{
		"block_count":             uint32(5),
		"attention.head_count":    []int32{4, 0, 4, 4, 2},
		"attention.head_count_kv": []int32{2, 0, 0, 1, 2},
		"feed_forward_length":     []int32{768, 512, 256, 0, 1024},
		"rope.freq_base":          float32(500000),
	}, "attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window")(mut)
}

// deci's per-layer sizes as llama-bench d32676d77 reads them (probed):
// the arrays kept, their largest the common sizes, layer 0's heads the
// head size, a missing head_count_kv each layer's query heads;
// attention.layer_norm_rms_epsilon required, rope.dimension_count and
// value_length the head size ("invalid n_rot" otherwise).
func TestConfigDeci(t *testing.T) {
	c := mustConfig(t, deciHeader(nil))
	if !slices.Equal(c.LayerQHeads, []int{4, 0, 4, 4, 2}) || !slices.Equal(c.LayerKVHeads, []int{2, 0, 0, 1, 2}) ||
		!slices.Equal(c.LayerFFN, []int{768, 512, 256, 0, 1024}) || c.Heads != 4 || c.HeadsKV != 2 || c.FFN != 1024 ||
		c.HeadDimK != 64 || c.RopeDim != 64 || !c.DropFFNFree || c.RopeNeox {
		t.Fatalf("config %+v", c)
	}
	kinds := []string{}
	for il := range c.Layers {
		kinds = append(kinds, layerKind(&c, il))
	}
	if want := []string{"attention", "no attention", "attn_output", "dropped", "attention"}; !slices.Equal(kinds, want) {
		t.Errorf("layers %v, want %v", kinds, want)
	}
	if c.KVLayers() != 2 || c.KVLayer(4) != 1 || c.modelLayer(1) != 4 || c.maxGroup() != 2 {
		t.Errorf("KV layers %d, layer 4's %d, cache layer 1's %d, group %d; want 2, 1, 4, 2", c.KVLayers(), c.KVLayer(4), c.modelLayer(1), c.maxGroup())
	}
	if g := c.KVConfig(0, 16).Geometry; len(g) != 2 || g[0].KVHeads != 2 || g[1].KVHeads != 2 {
		t.Errorf("cache geometry %+v", g)
	}
	c = mustConfig(t, deciHeader(func(m map[string]any) { delete(m, "deci.attention.head_count_kv") }))
	if !slices.Equal(c.LayerKVHeads, c.LayerQHeads) {
		t.Errorf("without head_count_kv: KV heads %v, want the query heads %v", c.LayerKVHeads, c.LayerQHeads)
	}
	c = mustConfig(t, deciHeader(func(m map[string]any) { m["deci.attention.head_count"] = []int32{2, 0, 4, 4, 2} }))
	if c.HeadDimK != 128 || c.HeadDimV != 128 || c.RopeDim != 128 {
		t.Errorf("layer 0 of 2 heads: head size %d/%d, rotated %d, want 128 (256 over layer 0's heads)", c.HeadDimK, c.HeadDimV, c.RopeDim)
	}
	checkRequired(t, deciHeader, "deci", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, deciHeader, append(wholeHeadCases("deci", 32),
		keyCase{"KV heads without query heads", "deci.attention.head_count_kv", []int32{2, 1, 0, 1, 2}, ErrBadModel},
		keyCase{"query heads not a multiple of the KV heads", "deci.attention.head_count_kv", []int32{2, 0, 0, 3, 2}, ErrBadModel},
	))
	checkKeyErrors(t, deciHeader, []keyCase{
		{"no layer attends", "deci.attention.head_count_kv", []int32{0, 0, 0, 1, 0}, ErrUnsupportedArch},
	})
	_, err := ConfigFromGGUF(parse(t, deciHeader(func(m map[string]any) { m["deci.attention.head_count"] = []int32{0, 0, 4, 4, 2} })))
	if err == nil {
		t.Error("layer 0 without heads nor key_length loads (llama.cpp's head size is then 0)")
	}
}

// layerKind names what layer il of a deci runs.
func layerKind(c *Config, il int) string {
	switch {
	case c.droppedLayer(il):
		return "dropped"
	case c.attnFree(il):
		return "no attention"
	case c.outputOnly(il):
		return "attn_output"
	}
	return "attention"
}

// openELMHeader is a 3-layer openelm's header: heads, KV heads and widths
// growing with depth, the head size stated (layer 0's 2 heads would make
// it 128).
func openELMHeader(mut func(map[string]any)) map[string]any {
	return baseHeaderOf("openelm", map[string]any{
		"block_count":             uint32(3),
		"attention.head_count":    []int32{2, 4, 6},
		"attention.head_count_kv": []int32{1, 2, 2},
		"feed_forward_length":     []int32{512, 768, 1024},
		"attention.key_length":    uint32(32),
		"attention.value_length":  uint32(32),
	}, "attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window")(mut)
}

// openelm's per-layer sizes, none of them 0, and its fixed layout: fused
// attn_qkv, per-head Q/K norms, NEOX RoPE; attention.layer_norm_rms_epsilon
// required (probed).
func TestConfigOpenELM(t *testing.T) {
	c := mustConfig(t, openELMHeader(nil))
	if !slices.Equal(c.LayerQHeads, []int{2, 4, 6}) || !slices.Equal(c.LayerKVHeads, []int{1, 2, 2}) || !slices.Equal(c.LayerFFN, []int{512, 768, 1024}) ||
		c.Heads != 6 || c.HeadsKV != 2 || c.HeadDimK != 32 || !c.QKNorm || !c.RopeNeox || c.DropFFNFree || c.KVLayers() != 3 || c.maxGroup() != 3 {
		t.Fatalf("config %+v", c)
	}
	checkRequired(t, openELMHeader, "openelm", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, openELMHeader, []keyCase{
		{"a layer without KV heads", "openelm.attention.head_count_kv", []int32{0, 2, 2}, ErrBadModel},
		{"a layer without a feed-forward", "openelm.feed_forward_length", []int32{512, 0, 1024}, ErrBadModel},
		{"values of another head size", "openelm.attention.value_length", uint32(16), ErrBadModel},
	})
}
