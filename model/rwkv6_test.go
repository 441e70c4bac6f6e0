package model

import "testing"

// The headers of RWKV-6 World 1.6B and QRWKV6-32B as llama.cpp's
// converter writes them: every layer recurrent, no attending layer, a
// state of its shifted rows (two; QRWKV6's one) and width×head floats a
// layer; an optional key's default; the keys each requires and refuses.
//
// rwkv6: from RWKV/v6-Finch-1B6-HF's config.json as trainers size v6
// 1B5 (24 layers of 2048 in heads of 64, intermediate_size null so a
// channel mix of 2048×3.5 = 7168, time_mix_extra_dim 32 and
// time_decay_extra_dim 64 as the converter picks them for a width other
// than 4096, rescale_every 6, layer norm epsilon 1e-5, head_count 0):
// 12.98 MB of state.
//
// rwkv6qwen2: from a Qwen2.5 32B body (recalled, not read from
// recursal/QRWKV6-32B-Instruct-Preview's config.json: 64 layers of 5120
// in 40 heads of 128 on 8 key heads, FFN 27648, RMS epsilon 1e-5; the
// converter's extra dims 64 and 128 for a width of 4096 or more;
// token_shift_count 1, head_count 0): 169 MB of state.
func TestConfigRWKV6(t *testing.T) {
	for _, tc := range []struct {
		arch     string
		keys     map[string]any
		ok       func(c Config) bool
		layers   int
		floats   int // a layer's state
		bytes    int // the whole state's
		optional string
		dflt     func(c Config) bool // the config without optional
		shifts   int
		cases    []keyCase
	}{
		{"rwkv6", map[string]any{
			"block_count": uint32(24), "embedding_length": uint32(2048), "feed_forward_length": uint32(7168),
			"attention.head_count": uint32(0), "context_length": uint32(1 << 20),
			"attention.layer_norm_epsilon": float32(1e-5), "wkv.head_size": uint32(64),
			"time_mix_extra_dim": uint32(32), "time_decay_extra_dim": uint32(64), "rescale_every_n_layers": uint32(6),
		}, func(c Config) bool {
			return c.RWKV6 && !c.QRWKV && !c.RWKV7 && c.FFN == 7168 && c.WKVHead == 64 && c.LoRAMix == 32 && c.LoRADecay == 64 &&
				c.RescaleEvery == 6 && c.NormEps == 1e-5 && c.LayerNorm
		}, 24, 2*2048 + 2048*64, 12976128,
			"rescale_every_n_layers", func(c Config) bool { return c.RescaleEvery == 0 }, 2, []keyCase{
				{"mix dim 0", "rwkv6.time_mix_extra_dim", uint32(0), ErrBadModel},
				{"decay dim above the width", "rwkv6.time_decay_extra_dim", uint32(4096), ErrBadModel},
			}},
		{"rwkv6qwen2", map[string]any{
			"block_count": uint32(64), "embedding_length": uint32(5120), "feed_forward_length": uint32(27648),
			"attention.head_count": uint32(0), "attention.head_count_kv": uint32(8), "context_length": uint32(1 << 20),
			"attention.layer_norm_rms_epsilon": float32(1e-5), "wkv.head_size": uint32(128),
			"time_mix_extra_dim": uint32(64), "time_decay_extra_dim": uint32(128), "token_shift_count": uint32(1),
		}, func(c Config) bool {
			return c.RWKV6 && c.QRWKV && !c.LayerNorm && c.WKVHeadsKV == 8 && c.RMSEps == 1e-5 && c.LoRAMix == 64 && c.LoRADecay == 128 &&
				c.RescaleEvery == 0
		}, 64, 5120 + 5120*128, 169082880,
			"attention.head_count_kv", func(c Config) bool { return c.WKVHeadsKV == 40 }, 1, []keyCase{ // one a head
				{"key heads not dividing the heads", "rwkv6qwen2.attention.head_count_kv", uint32(3), ErrBadModel},
				{"RMS epsilon 1", "rwkv6qwen2.attention.layer_norm_rms_epsilon", float32(1), ErrBadModel},
			}},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			fm := headerOf(tc.arch, tc.keys)
			c := mustConfig(t, fm(nil))
			last := tc.layers - 1
			if !tc.ok(c) || c.KVLayers() != 0 || !c.ConvLayer(last) || c.recurrentIndex(last) != last || c.RopeLayer(0) {
				t.Errorf("config %+v", c)
			}
			if got, want := ConvStateFloats(&c), tc.layers*tc.floats; got != want || 4*got != tc.bytes {
				t.Errorf("state of %d floats, want %d (%d bytes)", got, want, tc.bytes)
			}
			if c := mustConfig(t, fm(func(m map[string]any) { delete(m, tc.arch+"."+tc.optional) })); !tc.dflt(c) {
				t.Errorf("without %s: %+v", tc.optional, c)
			}
			checkRWKVKeys(t, fm, tc.arch, tc.shifts, []string{"time_mix_extra_dim", "time_decay_extra_dim"}, tc.cases...)
		})
	}
}
