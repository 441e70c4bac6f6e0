package model

import (
	"errors"
	"testing"
)

// cohere2moeMeta is a cohere2moe header (North Code's 49 blocks as
// llama.cpp names its type, 48 and a NextN block; the widths are
// illustrative, no released config.json was at hand), edited by edit.
func cohere2moeMeta(edit func(m map[string]any)) map[string]any {
	return archMeta("cohere2moe", decoderKeys{
		Embd: 2048, Blocks: 49, FFN: 8192, Heads: 16, HeadsKV: 4, KeyLen: 128, ValueLen: 128,
		Context: 131072, RopeBase: 50000,
		DenseLead: 1, Experts: 64, ExpertsUsed: 8, ExpertFFN: 1024, SharedCount: 1, ExpertScale: 1, ExpertNorm: true,
	}.with(map[string]any{
		"nextn_predict_layers": uint32(1), "attention.sliding_window": uint32(4096), "attention.sliding_window_pattern": uint32(4),
		"logit_scale": float32(0.25), "attention.layer_norm_epsilon": float32(1e-5),
	}), edit)
}

// The header's keys as llama.cpp d32676d77 reads them: LayerNorm without
// an RMS epsilon, RMSNorm with one; the window pattern dense first;
// sigmoid routing without the gating key; the shared experts' width the
// count × the experts' unless stated, their sum with the experts' halved;
// the keys llama-bench refuses a file without (probed) required here too.
func TestConfigCohere2MoE(t *testing.T) {
	c := mustConfig(t, cohere2moeMeta(func(map[string]any) {}))
	if c.Layers != 48 || c.NextN != 1 || !c.LayerNorm || c.NormEps != 1e-5 || c.Window != 4096 || c.SWALayers == nil ||
		c.SWALayers[0] || !c.SWALayers[1] || c.SWALayers[4] || c.RopeLayer(4) || !c.RopeLayer(0) || !c.RopeLayer(5) ||
		c.ExpertGating != GatingSigmoid || c.SharedFFN != 1024 || c.SharedSumScale != 0.5 || c.LogitMul != 0.25 || c.RopeNeox {
		t.Fatalf("config: %+v", c)
	}
	if c := mustConfig(t, cohere2moeMeta(func(m map[string]any) { m["cohere2moe.attention.layer_norm_rms_epsilon"] = float32(1e-6) })); c.LayerNorm || c.RMSEps != 1e-6 {
		t.Errorf("an RMS epsilon beside the LayerNorm's: LayerNorm, want RMSNorm as llama.cpp's graph picks it")
	}
	if c := mustConfig(t, cohere2moeMeta(func(m map[string]any) {
		m["cohere2moe.expert_shared_count"] = uint32(2)
		m["cohere2moe.expert_shared_feed_forward_length"] = uint32(3000)
	})); c.SharedFFN != 3000 {
		t.Errorf("shared width %d, want the stated 3000 (llama.cpp's n_ff_shexp, the whole width)", c.SharedFFN)
	}
	if c := mustConfig(t, cohere2moeMeta(func(m map[string]any) { delete(m, "cohere2moe.expert_shared_count") })); c.SharedFFN != 0 || c.SharedSumScale != 0 {
		t.Errorf("no shared experts: width %d, scale %v", c.SharedFFN, c.SharedSumScale)
	}
	if c := mustConfig(t, cohere2moeMeta(func(m map[string]any) {
		m["cohere2moe.attention.sliding_window_pattern"] = []int32{0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	})); !c.SWALayers[1] || c.SWALayers[3] || c.RopeLayer(3) {
		t.Errorf("pattern array: %v", c.SWALayers[:8])
	}
	for _, k := range []string{"attention.sliding_window", "attention.sliding_window_pattern", "logit_scale", "leading_dense_block_count",
		"expert_feed_forward_length", "expert_count", "expert_used_count"} {
		_, err := ConfigFromGGUF(parse(t, cohere2moeMeta(func(m map[string]any) { delete(m, "cohere2moe."+k) })))
		if !errors.Is(err, ErrBadModel) {
			t.Errorf("without %s: %v, want ErrBadModel", k, err)
		}
	}
	_, err := ConfigFromGGUF(parse(t, cohere2moeMeta(func(m map[string]any) {
		delete(m, "cohere2moe.attention.layer_norm_rms_epsilon")
		delete(m, "cohere2moe.attention.layer_norm_epsilon")
	})))
	if !errors.Is(err, ErrBadModel) {
		t.Errorf("without either epsilon: %v, want ErrBadModel (llama.cpp: missing Cohere2 MoE norm epsilon)", err)
	}
}
