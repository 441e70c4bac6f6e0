package model

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// mistralSmall4Meta is a header of Mistral Small 4's sizes as llama.cpp's
// converter writes its checkpoint (deepseek2's keys under mistral4; the
// widths as recalled from the model's config.json, not checked against a
// released GGUF), edited by edit.
func mistralSmall4Meta(edit func(m map[string]any)) map[string]any {
	return archMeta("mistral4", decoderKeys{
		Embd: 4096, Blocks: 36, FFN: 12288, Heads: 32, HeadsKV: 1, KeyLen: 256 + 64, ValueLen: 256,
		Context: 1048576, RopeDim: 64, RMSEps: 1e-6, RopeBase: 10000,
		Experts: 128, ExpertsUsed: 4, ExpertFFN: 2048, SharedCount: 1, ExpertScale: 1, ExpertNorm: true,
		Vocab: 131072, QLoraRank: 1024, KVLoraRank: 256, KeyLenMLA: 128, ValueLenMLA: 128,
		YarnFactor: 128, YarnContext: 8192, YarnLogMul: 0.1,
	}.with(nil), edit)
}

// mistral4 reads as deepseek2 reads (the latent cache's sizes, the query's
// rank, softmax routing renormalised, one shared expert, kq_scale
// mscale²/√key_length_mla with DeepSeek's mscale), with
// attention.q_lora_rank required as llama.cpp d32676d77 requires it
// unless the block count is a "lite" one, whose attn_q then serves
// whatever the key says; attention.temperature_scale is refused as
// deepseek2 refuses it.
func TestConfigMistral4(t *testing.T) {
	c := mustConfig(t, mistralSmall4Meta(func(map[string]any) {}))
	ms := 1 + 0.1*math.Log(128)
	if !c.mla() || c.MLAJoined || c.HeadsKV != 1 || c.HeadDimK != 320 || c.HeadDimV != 256 || c.HeadDimKMLA != 128 || c.HeadDimVMLA != 128 ||
		c.QLoraRank != 1024 || c.DenseLead != 0 || c.SharedFFN != 2048 || c.ExpertScale != 1 || !c.ExpertNorm || c.ExpertGating != GatingSoftmax ||
		c.ExpertGroups != 0 || math.Abs(float64(c.YarnLogMul)-1) > 1e-6 || c.attnOutCols(0) != 4096 {
		t.Fatalf("config %+v", c)
	}
	if want := ms * ms / math.Sqrt(128); math.Abs(float64(c.KQScale)-want) > 1e-6 {
		t.Errorf("KQScale %v, want %v", c.KQScale, want)
	}
	checkRequired(t, mistralSmall4Meta, "mistral4", "attention.q_lora_rank", "attention.kv_lora_rank", "expert_feed_forward_length",
		"expert_shared_count", "attention.layer_norm_rms_epsilon")
	for _, tc := range []struct {
		blocks uint32
		vocab  uint32
		qLora  any // attention.q_lora_rank, nil for none
	}{{27, 131072, nil}, {26, 131072, uint32(1024)}, {48, 128256, nil}} {
		lite, err := ConfigFromGGUF(parse(t, mistralSmall4Meta(func(m map[string]any) {
			m["mistral4.block_count"], m["mistral4.vocab_size"] = tc.blocks, tc.vocab
			setKey(m, "mistral4.attention.q_lora_rank", tc.qLora)
		})))
		if err != nil || lite.QLoraRank != 0 {
			t.Errorf("%d blocks, vocabulary %d, q_lora_rank %v: rank %d (%v), want 0", tc.blocks, tc.vocab, tc.qLora, lite.QLoraRank, err)
		}
	}
	if _, err := ConfigFromGGUF(parse(t, mistralSmall4Meta(func(m map[string]any) {
		m["mistral4.block_count"] = uint32(48)
		delete(m, "mistral4.attention.q_lora_rank")
	}))); !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), "q_lora_rank") {
		t.Errorf("48 blocks of another vocabulary without q_lora_rank: %v, want it refused", err)
	}
	checkKeyErrors(t, mistralSmall4Meta, []keyCase{
		{"attention temperature", "mistral4.attention.temperature_scale", float32(0.1), ErrUnsupportedArch},
	})
}
