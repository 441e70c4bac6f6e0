package model

import (
	"math"
	"testing"
)

// deepseekV2LiteMeta is DeepSeek-V2-Lite's header as llama.cpp's
// converter writes it (the split form), edited by edit.
func deepseekV2LiteMeta(edit func(m map[string]any)) map[string]any {
	return archMeta("deepseek2", decoderKeys{
		Embd: 2048, Blocks: 27, FFN: 10944, Heads: 16, HeadsKV: 1, KeyLen: 576, ValueLen: 512,
		Context: 163840, RopeDim: 64, RMSEps: 1e-6, RopeBase: 10000,
		DenseLead: 1, Experts: 64, ExpertsUsed: 6, ExpertFFN: 1408, SharedCount: 2, ExpertScale: 1,
		Vocab: 102400, KVLoraRank: 512, KeyLenMLA: 192, ValueLenMLA: 128,
		YarnFactor: 40, YarnContext: 4096, YarnLogMul: 0.0707,
	}.with(nil), edit)
}

// V2-Lite's header gives llama.cpp's numbers: the latent cache's head
// sizes, kq_scale = (1 + 0.1·0.707·ln 40)²/√192 (DeepSeek's mscale, the
// file's tenth of it undone), a RoPE magnitude of 1 once ggml's YaRN
// factor multiplies it, softmax routing; GLM-4.7-Flash's block count and
// vocabulary make it sigmoid; the older form (no _mla keys, per-head
// sizes) gives the same cache; the RMS epsilon and kv_lora_rank are
// required, as llama.cpp requires them.
func TestConfigDeepSeek2(t *testing.T) {
	c := mustConfig(t, deepseekV2LiteMeta(func(map[string]any) {}))
	ms := 1 + 0.1*0.707*math.Log(40)
	if !c.mla() || c.MLAJoined || c.HeadsKV != 1 || c.HeadDimK != 576 || c.HeadDimV != 512 || c.HeadDimKMLA != 192 || c.HeadDimVMLA != 128 ||
		c.QLoraRank != 0 || c.DenseLead != 1 || c.SharedFFN != 2816 || c.ExpertScale != 1 || c.ExpertNorm || c.ExpertGating != GatingSoftmax ||
		c.ExpertGroups != 0 || math.Abs(float64(c.YarnLogMul)-0.707) > 1e-6 || c.attnOutCols(0) != 2048 {
		t.Fatalf("config %+v", c)
	}
	if want := ms * ms / math.Sqrt(192); math.Abs(float64(c.KQScale)-want) > 1e-6 {
		t.Errorf("KQScale %v, want %v", c.KQScale, want)
	}
	if mag := float64(c.RopeMScale()) * (1 + 0.1*math.Log(40)); math.Abs(mag-1) > 1e-6 {
		t.Errorf("RoPE magnitude %v, want 1", mag)
	}
	glm, err := ConfigFromGGUF(parse(t, deepseekV2LiteMeta(func(m map[string]any) {
		m["deepseek2.block_count"] = uint32(47)
		m["deepseek2.vocab_size"] = uint32(154880)
	})))
	if err != nil || glm.ExpertGating != GatingSigmoid {
		t.Fatalf("GLM-4.7-Flash's gating %v (%v), want sigmoid", glm.ExpertGating, err)
	}
	old, err := ConfigFromGGUF(parse(t, deepseekV2LiteMeta(func(m map[string]any) {
		delete(m, "deepseek2.attention.key_length_mla")
		delete(m, "deepseek2.attention.value_length_mla")
		m["deepseek2.attention.head_count_kv"] = uint32(16)
		m["deepseek2.attention.key_length"] = uint32(192)
		m["deepseek2.attention.value_length"] = uint32(128)
	})))
	if err != nil || !old.MLAJoined || old.HeadsKV != 1 || old.HeadDimK != 576 || old.HeadDimV != 512 || old.HeadDimKMLA != 192 || old.HeadDimVMLA != 128 || old.KQScale != c.KQScale {
		t.Fatalf("older form: %+v (%v)", old, err)
	}
	checkRequired(t, deepseekV2LiteMeta, "deepseek2", "attention.layer_norm_rms_epsilon", "attention.kv_lora_rank")
}
