package model

import (
	"maps"
	"testing"
)

// The headers of RWKV7-G1 2.9B, RWKV-6 World 1.6B, QRWKV6-32B and
// ARWKV-7B as llama.cpp's converter writes them: every layer recurrent,
// no attending layer (the KV cache mamba's one placeholder layer), a
// state of its shifted rows (two; QRWKV6's and ARWKV-7's one) and
// width×head floats a layer; an optional key's default; the keys each
// requires and refuses.
//
// rwkv7: 32 layers of 2560 in heads of 64, a channel mix of 10240,
// ranks 96, 96, 64 and 320, head_count 0 (widths recalled, as mkmodel's
// shape): 21.6 MB of state.
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
//
// arwkv7: from a Qwen2.5 7B body (recalled, not read from
// RWKV-Red-Team's ARWKV-7B config.json: 28 layers of 3584, FFN 18944,
// RMS epsilon 1e-6) in heads of 64 with the converter's ranks 64, 64,
// 32 and the gate's 128 (wkv_has_gate; 0 without), token_shift_count 1,
// head_count 0: 26.1 MB of state.
func TestConfigRWKV(t *testing.T) {
	rwkv6Own := []string{"time_mix_extra_dim", "time_decay_extra_dim"}
	rwkv7Own := []string{"attention.decay_lora_rank", "attention.iclr_lora_rank", "attention.value_residual_mix_lora_rank"}
	for _, tc := range []struct {
		arch     string
		keys     map[string]any
		ok       func(c Config) bool
		layers   int
		floats   int                 // a layer's state
		bytes    int                 // the whole state's
		optional string              // "": none
		dflt     func(c Config) bool // the config without optional
		shifts   int
		own      []string // required keys beyond every RWKV model's
		cases    []keyCase
	}{
		{"rwkv7", rwkvHeader(32, 2560, 10240, 64, rwkv7Ranks(96, 96, 64, 320), map[string]any{
			"attention.layer_norm_epsilon": float32(1e-5), "token_shift_count": uint32(2),
		}), func(c Config) bool {
			return c.RWKV7 && c.FFN == 10240 && c.WKVHead == 64 && c.LoRADecay == 96 && c.LoRAICLR == 96 && c.LoRAValue == 64 &&
				c.LoRAGate == 320 && c.NormEps == 1e-5
		}, 32, 2*2560 + 2560*64, 21626880, "", nil, 2, []string{"attention.decay_lora_rank", "attention.gate_lora_rank"}, []keyCase{
			{"value rank 0", "rwkv7.attention.value_residual_mix_lora_rank", uint32(0), ErrBadModel},
		}},
		{"rwkv6", rwkvHeader(24, 2048, 7168, 64, map[string]any{
			"attention.layer_norm_epsilon": float32(1e-5), "rescale_every_n_layers": uint32(6),
			"time_mix_extra_dim": uint32(32), "time_decay_extra_dim": uint32(64),
		}), func(c Config) bool {
			return c.RWKV6 && !c.QRWKV && !c.RWKV7 && c.FFN == 7168 && c.WKVHead == 64 && c.LoRAMix == 32 && c.LoRADecay == 64 &&
				c.RescaleEvery == 6 && c.NormEps == 1e-5 && c.LayerNorm
		}, 24, 2*2048 + 2048*64, 12976128,
			"rescale_every_n_layers", func(c Config) bool { return c.RescaleEvery == 0 }, 2, rwkv6Own, []keyCase{
				{"mix dim 0", "rwkv6.time_mix_extra_dim", uint32(0), ErrBadModel},
				{"decay dim above the width", "rwkv6.time_decay_extra_dim", uint32(4096), ErrBadModel},
			}},
		{"rwkv6qwen2", rwkvHeader(64, 5120, 27648, 128, map[string]any{
			"attention.head_count_kv": uint32(8), "attention.layer_norm_rms_epsilon": float32(1e-5),
			"time_mix_extra_dim": uint32(64), "time_decay_extra_dim": uint32(128), "token_shift_count": uint32(1),
		}), func(c Config) bool {
			return c.RWKV6 && c.QRWKV && !c.LayerNorm && c.WKVHeadsKV == 8 && c.RMSEps == 1e-5 && c.LoRAMix == 64 && c.LoRADecay == 128 &&
				c.RescaleEvery == 0
		}, 64, 5120 + 5120*128, 169082880,
			"attention.head_count_kv", func(c Config) bool { return c.WKVHeadsKV == 40 }, 1, rwkv6Own, []keyCase{ // one a head
				{"key heads not dividing the heads", "rwkv6qwen2.attention.head_count_kv", uint32(3), ErrBadModel},
				{"RMS epsilon 1", "rwkv6qwen2.attention.layer_norm_rms_epsilon", float32(1), ErrBadModel},
			}},
		{"arwkv7", rwkvHeader(28, 3584, 18944, 64, rwkv7Ranks(64, 64, 32, 128), map[string]any{
			"attention.layer_norm_rms_epsilon": float32(1e-6), "token_shift_count": uint32(1),
		}), func(c Config) bool {
			return c.RWKV7 && c.QRWKV && !c.RWKV6 && !c.LayerNorm && c.RMSEps == 1e-6 && c.FFN == 18944 && c.WKVHead == 64 &&
				c.LoRADecay == 64 && c.LoRAICLR == 64 && c.LoRAValue == 32 && c.LoRAGate == 128
		}, 28, 3584 + 3584*64, 26091520,
			"attention.gate_lora_rank", func(c Config) bool { return c.LoRAGate == 0 }, 1, rwkv7Own, []keyCase{
				{"gate rank wider than the model", "arwkv7.attention.gate_lora_rank", uint32(4096), ErrBadModel},
				{"value rank 0", "arwkv7.attention.value_residual_mix_lora_rank", uint32(0), ErrBadModel},
				{"RMS epsilon 1", "arwkv7.attention.layer_norm_rms_epsilon", float32(1), ErrBadModel},
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
			if k := c.KVConfig(0, 16); k.Layers != 1 || k.KVHeads != 1 || k.HeadDimK != placeholderHeadDim {
				t.Errorf("KV config %+v, want one placeholder layer", k)
			}
			if tc.optional != "" {
				if c := mustConfig(t, fm(func(m map[string]any) { delete(m, tc.arch+"."+tc.optional) })); !tc.dflt(c) {
					t.Errorf("without %s: %+v", tc.optional, c)
				}
			}
			checkRWKVKeys(t, fm, tc.arch, tc.shifts, tc.own, tc.cases...)
		})
	}
}

// rwkvHeader is an RWKV header's keys as llama.cpp's converters write
// them: layers blocks of width embd, a channel mix or feed-forward of ffn,
// heads of head, head_count 0, a context of 2^20, and own's keys.
func rwkvHeader(layers, embd, ffn, head int, own ...map[string]any) map[string]any {
	keys := map[string]any{"block_count": uint32(layers), "embedding_length": uint32(embd), "feed_forward_length": uint32(ffn),
		"attention.head_count": uint32(0), "context_length": uint32(1 << 20), "wkv.head_size": uint32(head)}
	for _, o := range own {
		maps.Copy(keys, o)
	}
	return keys
}

// rwkv7Ranks is an RWKV-7 time mix's four ranks' keys.
func rwkv7Ranks(decay, iclr, value, gate int) map[string]any {
	return map[string]any{"attention.decay_lora_rank": uint32(decay), "attention.iclr_lora_rank": uint32(iclr),
		"attention.value_residual_mix_lora_rank": uint32(value), "attention.gate_lora_rank": uint32(gate)}
}
