package model

import "testing"

// RWKV7-G1 2.9B's header as llama.cpp's converter writes it (32 layers
// of 2560 in heads of 64, a channel mix of 10240, ranks 96, 96, 64 and
// 320, head_count 0; widths recalled, as mkmodel's shape): every layer
// recurrent, no attending layer, and a state of two shifted rows and
// 2560×64 floats a layer, 21.6 MB in all.
func TestConfigRWKV7(t *testing.T) {
	fm := headerOf("rwkv7", map[string]any{
		"block_count": uint32(32), "embedding_length": uint32(2560), "feed_forward_length": uint32(10240),
		"attention.head_count": uint32(0), "context_length": uint32(1 << 20),
		"attention.layer_norm_epsilon": float32(1e-5), "wkv.head_size": uint32(64),
		"attention.decay_lora_rank": uint32(96), "attention.iclr_lora_rank": uint32(96),
		"attention.value_residual_mix_lora_rank": uint32(64), "attention.gate_lora_rank": uint32(320),
		"token_shift_count": uint32(2),
	})
	c := mustConfig(t, fm(nil))
	if !c.RWKV7 || c.KVLayers() != 0 || !c.ConvLayer(31) || c.recurrentIndex(31) != 31 || c.FFN != 10240 || c.WKVHead != 64 ||
		c.LoRADecay != 96 || c.LoRAICLR != 96 || c.LoRAValue != 64 || c.LoRAGate != 320 || c.NormEps != 1e-5 || c.RopeLayer(0) {
		t.Errorf("config %+v", c)
	}
	if got, want := ConvStateFloats(&c), 32*(2*2560+2560*64); got != want || 4*got != 21626880 {
		t.Errorf("state of %d floats, want %d (21.6 MB)", got, want)
	}
	if k := c.KVConfig(0, 16); k.Layers != 1 || k.KVHeads != 1 || k.HeadDimK != placeholderHeadDim {
		t.Errorf("KV config %+v, want one placeholder layer", k)
	}
	checkRWKVKeys(t, fm, "rwkv7", 2, []string{"attention.decay_lora_rank", "attention.gate_lora_rank"},
		keyCase{"value rank 0", "rwkv7.attention.value_residual_mix_lora_rank", uint32(0), ErrBadModel})
}

// checkRWKVKeys checks what an RWKV header of arch (fm) must have: the
// keys every RWKV model requires and its own, a head size dividing the
// width (96 does not), token_shift_count shifts (2, or QRWKV's 1: the
// other is refused) and an epsilon below 1; and its own cases.
func checkRWKVKeys(t *testing.T, fm func(mut func(map[string]any)) map[string]any, arch string, shifts int, own []string, cases ...keyCase) {
	t.Helper()
	checkRequired(t, fm, arch, append(append([]string{"wkv.head_size"}, own...), "feed_forward_length")...)
	checkKeyErrors(t, fm, append([]keyCase{
		{"head size not dividing", arch + ".wkv.head_size", uint32(96), ErrBadModel},
		{"the other token shift count", arch + ".token_shift_count", uint32(3 - shifts), ErrBadModel},
		{"epsilon 1", arch + ".attention.layer_norm_epsilon", float32(1), ErrBadModel},
	}, cases...))
}
