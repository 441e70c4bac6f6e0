package model

import "testing"

// RWKV-6 World 1.6B's header as llama.cpp's converter writes it from
// RWKV/v6-Finch-1B6-HF's config.json (24 layers of 2048 in heads of 64,
// intermediate_size null so a channel mix of 2048×3.5 = 7168,
// time_mix_extra_dim 32 and time_decay_extra_dim 64 as the converter
// picks them for a width other than 4096, rescale_every 6, layer norm
// epsilon 1e-5, head_count 0): every layer recurrent, no attending
// layer, and a state of two shifted rows and 2048×64 floats a layer,
// 12.98 MB in all.
func TestConfigRWKV6(t *testing.T) {
	fm := headerOf("rwkv6", map[string]any{
		"block_count": uint32(24), "embedding_length": uint32(2048), "feed_forward_length": uint32(7168),
		"attention.head_count": uint32(0), "context_length": uint32(1 << 20),
		"attention.layer_norm_epsilon": float32(1e-5), "wkv.head_size": uint32(64),
		"time_mix_extra_dim": uint32(32), "time_decay_extra_dim": uint32(64), "rescale_every_n_layers": uint32(6),
	})
	c := mustConfig(t, fm(nil))
	if !c.RWKV6 || c.RWKV7 || c.KVLayers() != 0 || !c.ConvLayer(23) || c.recurrentIndex(23) != 23 || c.FFN != 7168 || c.WKVHead != 64 ||
		c.LoRAMix != 32 || c.LoRADecay != 64 || c.RescaleEvery != 6 || c.NormEps != 1e-5 || c.RopeLayer(0) {
		t.Errorf("config %+v", c)
	}
	if got, want := ConvStateFloats(&c), 24*(2*2048+2048*64); got != want || 4*got != 12976128 {
		t.Errorf("state of %d floats, want %d (12.98 MB)", got, want)
	}
	if c := mustConfig(t, fm(func(m map[string]any) { delete(m, "rwkv6.rescale_every_n_layers") })); c.RescaleEvery != 0 {
		t.Errorf("without rescale_every_n_layers: %d, want 0 (never)", c.RescaleEvery)
	}
	checkRWKVKeys(t, fm, "rwkv6", []string{"time_mix_extra_dim", "time_decay_extra_dim"},
		keyCase{"mix dim 0", "rwkv6.time_mix_extra_dim", uint32(0), ErrBadModel},
		keyCase{"decay dim above the width", "rwkv6.time_decay_extra_dim", uint32(4096), ErrBadModel})
}
