package model

import "testing"

// hunyuanA13BMeta is Hunyuan-A13B's header as llama.cpp's converter
// writes it (its config.json's sizes; the alpha-scaled base), edited by
// edit.
func hunyuanA13BMeta(edit func(m map[string]any)) map[string]any {
	return archMeta("hunyuan-moe", decoderKeys{
		Embd: 4096, Blocks: 32, FFN: 3072, Heads: 32, HeadsKV: 8, KeyLen: 128, ValueLen: 128,
		Context: 262144, RopeDim: 128, RMSEps: 1e-5, RopeBase: 11158840,
		Experts: 64, ExpertsUsed: 8, ExpertFFN: 3072, SharedFFN: 3072, SharedCount: 1,
	}.with(nil), edit)
}

// Hunyuan-A13B's metadata as llama.cpp d32676d77 reads it: expert_count,
// expert_used_count, expert_feed_forward_length (required, though the
// experts are as wide as feed_forward_length whatever it says) and the
// RMS epsilon required; the shared expert's width read, feed_forward_length
// when absent or 0 (llama-bench d32676d77 loads a file without the key);
// softmax routing renormalised, expert_weights_scale and _norm not read;
// the shared expert ungated; Q/K norms after NEOX RoPE over whole heads
// of one size (the graph asserts both).
func TestConfigHunyuanMoE(t *testing.T) {
	c := mustConfig(t, hunyuanA13BMeta(func(map[string]any) {}))
	if c.Experts != 64 || c.ExpertsUsed != 8 || c.ExpertFFN != 3072 || c.SharedFFN != 3072 || c.SharedGate || !c.ExpertNorm ||
		c.ExpertGating != 0 || c.ExpertScale != 0 || c.ExpertSelBias || !c.RopeNeox || !c.QKNorm || !c.QKNormAfterRope ||
		c.DenseLead != 0 || !c.ExpertLayer(0) {
		t.Fatalf("config %+v", c)
	}
	const p = "hunyuan-moe."
	for _, tc := range []struct {
		name             string
		edit             func(m map[string]any)
		expertFFN, share int
	}{
		{"keys llama.cpp does not read", func(m map[string]any) {
			m[p+"expert_feed_forward_length"] = uint32(100)
			m[p+"expert_weights_scale"] = float32(2)
			m[p+"expert_weights_norm"] = false
		}, 3072, 3072},
		{"no shared width", func(m map[string]any) { delete(m, p+"expert_shared_feed_forward_length") }, 3072, 3072},
		{"shared width 0", func(m map[string]any) { m[p+"expert_shared_feed_forward_length"] = uint32(0) }, 3072, 3072},
		{"shared width of its own", func(m map[string]any) { m[p+"expert_shared_feed_forward_length"] = uint32(1024) }, 3072, 1024},
	} {
		c := mustConfig(t, hunyuanA13BMeta(tc.edit))
		if c.ExpertFFN != tc.expertFFN || c.SharedFFN != tc.share || c.ExpertScale != 0 || !c.ExpertNorm {
			t.Errorf("%s: experts of %d, shared %d, scale %g, norm %v; want %d, %d, 0, true",
				tc.name, c.ExpertFFN, c.SharedFFN, c.ExpertScale, c.ExpertNorm, tc.expertFFN, tc.share)
		}
	}
	checkRequired(t, hunyuanA13BMeta, "hunyuan-moe", "expert_count", "expert_used_count", "expert_feed_forward_length",
		"attention.layer_norm_rms_epsilon", "feed_forward_length")
	checkKeyErrors(t, hunyuanA13BMeta, append([]keyCase{
		{"more used than there are", p + "expert_used_count", uint32(65), ErrBadModel},
	}, wholeHeadCases("hunyuan-moe", 64)...))
}

// dotsLLM1Meta is dots.llm1's header as llama.cpp's converter writes it
// (its config.json's sizes), edited by edit.
func dotsLLM1Meta(edit func(m map[string]any)) map[string]any {
	return archMeta("dots1", decoderKeys{
		Embd: 4096, Blocks: 62, FFN: 10944, Heads: 32, HeadsKV: 32, KeyLen: 128, ValueLen: 128,
		Context: 32768, RopeDim: 128, RMSEps: 1e-5, RopeBase: 10000000,
		DenseLead: 1, Experts: 128, ExpertsUsed: 6, ExpertFFN: 1408, SharedCount: 2, ExpertScale: 2.5, ExpertNorm: true, Gating: 2,
	}.with(nil), edit)
}

// dots.llm1's metadata as llama.cpp d32676d77 reads it: the two shared
// experts run as one of twice the experts' width, the leading dense
// layer, sigmoid routing with the selection bias, renormalised and scaled
// by 2.5, Q/K norms before NEOX RoPE over whole heads; the RMS epsilon,
// leading_dense_block_count, the experts' counts and width,
// expert_shared_count, expert_weights_scale and expert_gating_func
// required (llama-bench d32676d77 aborts on a file without the last);
// expert_weights_norm optional (false); as many KV heads as query heads
// (llama-bench d32676d77 refuses a file with 8 of 32).
func TestConfigDots1(t *testing.T) {
	c := mustConfig(t, dotsLLM1Meta(func(map[string]any) {}))
	if c.Layers != 62 || c.DenseLead != 1 || c.Experts != 128 || c.ExpertsUsed != 6 || c.ExpertFFN != 1408 || c.SharedFFN != 2816 ||
		c.SharedGate || c.ExpertScale != 2.5 || !c.ExpertNorm || c.ExpertGating != GatingSigmoid || c.ExpertGroups != 0 ||
		!c.ExpertSelBias || !c.RopeNeox || !c.QKNorm || c.QKNormAfterRope || c.ExpertLayer(0) || !c.ExpertLayer(1) {
		t.Fatalf("config %+v", c)
	}
	if c := mustConfig(t, dotsLLM1Meta(func(m map[string]any) { delete(m, "dots1.expert_weights_norm") })); c.ExpertNorm {
		t.Errorf("renormalised without expert_weights_norm")
	}
	checkRequired(t, dotsLLM1Meta, "dots1", "attention.layer_norm_rms_epsilon", "leading_dense_block_count", "expert_count",
		"expert_used_count", "expert_feed_forward_length", "expert_shared_count", "expert_weights_scale", "expert_gating_func")
	checkKeyErrors(t, dotsLLM1Meta, append([]keyCase{
		{"gating unknown", "dots1.expert_gating_func", uint32(9), ErrUnsupportedArch},
		{"more used than there are", "dots1.expert_used_count", uint32(129), ErrBadModel},
		{"lead past the layers", "dots1.leading_dense_block_count", uint32(63), ErrBadModel},
		{"grouped KV heads", "dots1.attention.head_count_kv", uint32(8), ErrBadModel},
	}, wholeHeadCases("dots1", 64)...))
}
