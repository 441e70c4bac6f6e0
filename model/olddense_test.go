package model

import (
	"slices"
	"testing"
)

// The older dense architectures' metadata as llama.cpp d32676d77 reads
// it: the norm's epsilon required, heads whole where the graph rotates
// (or asserts it), the query as wide as the embedding where the loader
// sizes attn_q [n_embd, n_embd].
var oldDenseDrop = []string{"attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window"}

// narrowQuery is the key case of a query narrower than the embedding:
// heads of 32 where the embedding's 256 wants 64.
func narrowQuery(arch string) keyCase {
	return keyCase{"a query narrower than the embedding", arch + ".attention.key_length", uint32(32), ErrBadModel}
}

// XVERSE: llama's blocks, NORM RoPE over whole heads, the RMS epsilon
// required, the query as wide as the embedding.
func TestConfigXverse(t *testing.T) {
	h := baseHeaderOf[any]("xverse", nil, oldDenseDrop...)
	c := mustConfig(t, h(nil))
	if c.LayerNorm || c.RopeNeox || c.RopeDim != c.HeadDimK || c.ALiBi != nil || c.RMSEps != 1e-6 || c.Window != 0 || !c.RopeLayer(0) {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, h, "xverse", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, h, append(wholeHeadCases("xverse", 32), narrowQuery("xverse")))
}

// Orion: xverse's with LayerNorms of epsilon attention.layer_norm_epsilon
// (required) and NEOX RoPE.
func TestConfigOrion(t *testing.T) {
	h := baseHeaderOf("orion", map[string]any{"attention.layer_norm_epsilon": float32(1e-5)},
		append(slices.Clone(oldDenseDrop), "attention.layer_norm_rms_epsilon")...)
	c := mustConfig(t, h(nil))
	if !c.LayerNorm || c.NormEps != 1e-5 || !c.RopeNeox || c.RopeDim != c.HeadDimK || c.ALiBi != nil || c.GELU || c.ReLU2 {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, h, "orion", "attention.layer_norm_epsilon")
	checkKeyErrors(t, h, append(wholeHeadCases("orion", 32), narrowQuery("orion")))
}

// Refact: ALiBi of maximum bias 8 whatever the file says (llama.cpp reads
// no key for it), no RoPE; the RMS epsilon required.
func TestConfigRefact(t *testing.T) {
	h := baseHeaderOf("refact", map[string]any{"attention.max_alibi_bias": float32(2)}, oldDenseDrop...)
	c := mustConfig(t, h(nil))
	if !slices.Equal(c.ALiBi, alibiSlopes(4, 8)) || c.RopeLayer(0) || c.LayerNorm {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, h, "refact", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, h, []keyCase{{"values of another size", "refact.attention.value_length", uint32(32), ErrBadModel}})
}

// Baichuan: what places the tokens is the depth's, as llama.cpp names the
// model by it: NORM RoPE at 32 blocks, ALiBi of maximum bias 8 at 40,
// neither at any other depth (every slope 0).
func TestConfigBaichuan(t *testing.T) {
	depth := func(n uint32) func(mut func(map[string]any)) map[string]any {
		return baseHeaderOf("baichuan", map[string]any{"block_count": n}, oldDenseDrop...)
	}
	if c := mustConfig(t, depth(32)(nil)); c.ALiBi != nil || !c.RopeLayer(0) || c.RopeNeox || c.RopeDim != c.HeadDimK {
		t.Errorf("32 blocks: config %+v", c)
	}
	if c := mustConfig(t, depth(40)(nil)); !slices.Equal(c.ALiBi, alibiSlopes(4, 8)) || c.RopeLayer(0) {
		t.Errorf("40 blocks: config %+v", c)
	}
	if c := mustConfig(t, depth(26)(nil)); !slices.Equal(c.ALiBi, make([]float32, 4)) || c.RopeLayer(0) {
		t.Errorf("26 blocks: config %+v", c)
	}
	for _, n := range []uint32{32, 40, 26} {
		checkRequired(t, depth(n), "baichuan", "attention.layer_norm_rms_epsilon")
		checkKeyErrors(t, depth(n), wholeHeadCases("baichuan", 32))
	}
}

// CodeShell: LayerNorms of epsilon attention.layer_norm_epsilon
// (required), GELU without a gate, NEOX RoPE over whole heads, the query
// as wide as the embedding.
func TestConfigCodeShell(t *testing.T) {
	h := baseHeaderOf("codeshell", map[string]any{"attention.layer_norm_epsilon": float32(1e-5)},
		append(slices.Clone(oldDenseDrop), "attention.layer_norm_rms_epsilon")...)
	c := mustConfig(t, h(nil))
	if !c.LayerNorm || c.NormEps != 1e-5 || !c.RopeNeox || c.RopeDim != c.HeadDimK || c.ALiBi != nil || c.ReLU2 {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, h, "codeshell", "attention.layer_norm_epsilon")
	checkKeyErrors(t, h, append(wholeHeadCases("codeshell", 32), narrowQuery("codeshell")))
}
