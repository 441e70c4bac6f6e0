package model

import "testing"

// SmallThinker's metadata as llama.cpp's loader reads it: the header of
// the 21B-A3B (52 layers of 2560, heads of 128, 64 experts of 768, 6 a
// token) with attention.sliding_window set, which turns on the windowed
// layers at llama.cpp's 4096 whatever the key says, layers 1–3 of each
// four windowed and rotated and the first global and unrotated; without
// the key every layer is global and rotated. expert_gating_func is
// required (llama.cpp's graph aborts without one), and so are the
// experts' counts and width; one head size for keys and values, rotated
// whole.
func TestConfigSmallThinker(t *testing.T) {
	st := baseHeaderOf("smallthinker", map[string]uint32{
		"block_count": 52, "embedding_length": 2560, "attention.head_count": 28, "attention.head_count_kv": 4,
		"attention.key_length": 128, "attention.value_length": 128, "rope.dimension_count": 128,
		"attention.sliding_window": 1234, "expert_count": 64, "expert_used_count": 6,
		"expert_feed_forward_length": 768, "expert_gating_func": 1,
	}, "attn_logit_softcapping", "final_logit_softcapping")
	c := mustConfig(t, st(nil))
	if c.Experts != 64 || c.ExpertsUsed != 6 || c.ExpertFFN != 768 || c.SharedFFN != 0 || c.ExpertGating != GatingSoftmax ||
		!c.ExpertNorm || !c.ReGLU || !c.RouterPreAttn || !c.RopeNeox || c.HeadDimK != 128 || c.Window != 4096 {
		t.Errorf("config %+v", c)
	}
	for il, want := range []struct{ windowed, rope bool }{{false, false}, {true, true}, {true, true}, {true, true}, {false, false}, {true, true}} {
		if c.WindowedLayer(il) != want.windowed || c.RopeLayer(il) != want.rope {
			t.Errorf("layer %d: windowed %v, rotated %v; want %v, %v", il, c.WindowedLayer(il), c.RopeLayer(il), want.windowed, want.rope)
		}
	}
	if !c.WindowedLayer(51) || !c.RopeLayer(51) || c.WindowedLayer(48) || c.RopeLayer(48) {
		t.Errorf("layers 48 and 51: windowed %v, %v; rotated %v, %v", c.WindowedLayer(48), c.WindowedLayer(51), c.RopeLayer(48), c.RopeLayer(51))
	}
	for _, w := range []any{nil, uint32(0)} {
		c := mustConfig(t, st(func(m map[string]any) {
			setKey(m, "smallthinker.attention.sliding_window", w)
			m["smallthinker.expert_gating_func"] = uint32(2)
		}))
		if c.Window != 0 || !c.RopeLayer(0) || !c.RopeLayer(3) || c.ExpertGating != GatingSigmoid {
			t.Errorf("window %v: window %d, layer 0 rotated %v, layer 3 %v, gating %v", w, c.Window, c.RopeLayer(0), c.RopeLayer(3), c.ExpertGating)
		}
	}
	checkRequired(t, st, "smallthinker", "expert_gating_func", "expert_feed_forward_length", "expert_count")
	checkKeyErrors(t, st, append([]keyCase{
		{"gating none", "smallthinker.expert_gating_func", uint32(0), ErrUnsupportedArch},
		{"window not a number", "smallthinker.attention.sliding_window", "wide", ErrBadModel},
	}, wholeHeadCases("smallthinker", 64)...))
}
