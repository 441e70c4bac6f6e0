package model

import "testing"

// Jais 2's metadata as llama.cpp reads it: LayerNorms of epsilon
// attention.layer_norm_epsilon (required), ReLU² without a gate, every
// projection's bias, NEOX RoPE over whole heads (half a head rotated, or
// values of another head size, refused), no window.
func TestConfigJais2(t *testing.T) {
	dense := baseHeaderOf("jais2", map[string]any{"attention.layer_norm_epsilon": float32(1e-5), "rope.freq_base": float32(500000)},
		"attention.layer_norm_rms_epsilon", "attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window")
	c := mustConfig(t, dense(nil))
	if !c.LayerNorm || c.NormEps != 1e-5 || !c.ReLU2 || c.GELU || !c.QKVBias || !c.RopeNeox || c.RopeDim != c.HeadDimK || c.Window != 0 {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, dense, "jais2", "attention.layer_norm_epsilon")
	checkKeyErrors(t, dense, wholeHeadCases("jais2", 32))
}
