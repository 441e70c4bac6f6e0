package testutil

import "github.com/lowmem/llm/internal/gguf"

// RWKV6 is an RWKV-6 model's own sizes: wkv.head_size,
// time_mix_extra_dim (Mix), time_decay_extra_dim (Decay) and
// rescale_every_n_layers (0: not written).
type RWKV6 struct {
	Head, Mix, Decay, Rescale int
	// HeadsKV is an rwkv6qwen2's attention.head_count_kv (its keys' and
	// values' heads).
	HeadsKV int
	// SplitLerps writes the five lerps time_mix_lerp_w, _k, _v, _r and _g
	// ([width, 1, 1] each) in place of time_mix_lerp_fused, as files
	// converted before llama.cpp fused them hold them.
	SplitLerps bool
}

// TinyRWKV6Qwen2 is a 3-layer rwkv6qwen2 as llama.cpp's converter writes
// QRWKV6: width 128 in 4 heads of 32 whose keys and values are 2 heads
// (repeated in blocks), the receptance's, key's and value's biases,
// extra dims 32 and 64, Qwen2's SwiGLU feed-forward of 448, RMS epsilon
// 1e-6, token_shift_count 1, head_count 0; Q8_0 weights and an output
// matrix of its own. Seeds 73 and 74 made weights where the last-bit
// differences of Q8_0 products between batch sizes flip the rounding of
// a quantized activation: a packed pass's hidden states then differ from
// a lone text's by up to 1e-2 (TestHiddenPackedMatchesAlone) and a
// rewound session's logits from a fresh one's (seq's
// TestConvRewindMatchesFresh); the other tiny models' stay within 3e-6.
func TinyRWKV6Qwen2() ModelSpec {
	return tiny(ModelSpec{
		Arch: "rwkv6qwen2", Seed: 75, Layers: 3, Embd: 128, FFN: 448, RMSEps: 1e-6,
		RWKV6: &RWKV6{Head: 32, Mix: 32, Decay: 64, HeadsKV: 2},
	})
}

// TinyRWKV6 is a 3-layer rwkv6 as llama.cpp's converter writes RWKV-6
// World: width 128 in heads of 32, time_mix_extra_dim 32 and
// time_decay_extra_dim 64 (so that one read for the other fails; each a
// multiple of Q8_0's block, as the second matrices' rows must be), a
// channel mix of 3.5× the width, rescale_every_n_layers 2 (so that the
// stream halves once, after layer 1), LayerNorm epsilon 1e-5,
// attention.head_count 0; Q8_0 weights and an output matrix of its own.
func TinyRWKV6() ModelSpec {
	return tiny(ModelSpec{
		Arch: "rwkv6", Seed: 71, Layers: 3, Embd: 128, FFN: 448, NormEps: 1e-5,
		RWKV6: &RWKV6{Head: 32, Mix: 32, Decay: 64, Rescale: 2},
	})
}

// TinyRWKV6SplitLerps is TinyRWKV6 as a file converted before llama.cpp
// fused the token shift's lerps holds them: five apart (RWKV6.SplitLerps).
func TinyRWKV6SplitLerps() ModelSpec {
	s := TinyRWKV6()
	s.RWKV6.SplitLerps = true
	return s
}

// AddRWKV6KV writes an rwkv6's own keys as llama.cpp's converter writes
// them: the LayerNorm epsilon, wkv.head_size, the two extra dims,
// rescale_every_n_layers (when not 0) and token_shift_count 2.
func AddRWKV6KV(g *gguf.Writer, arch string, r RWKV6, normEps float32) {
	own := []rwkvKey{{"time_mix_extra_dim", r.Mix}, {"time_decay_extra_dim", r.Decay}}
	if r.Rescale > 0 {
		own = append(own, rwkvKey{"rescale_every_n_layers", r.Rescale})
	}
	addRWKVKV(g, arch, normEps, r.Head, 2, own...)
}

// AddRWKV6Qwen2KV writes an rwkv6qwen2's own keys as llama.cpp's
// converter writes them: wkv.head_size, the two extra dims,
// attention.head_count_kv and token_shift_count 1 (its RMS epsilon is
// AddHparams').
func AddRWKV6Qwen2KV(g *gguf.Writer, arch string, r RWKV6) {
	addRWKVKV(g, arch, 0, r.Head, 1, rwkvKey{"time_mix_extra_dim", r.Mix}, rwkvKey{"time_decay_extra_dim", r.Decay},
		rwkvKey{"attention.head_count_kv", r.HeadsKV})
}

// RWKV6Block lists a block's tensors of an rwkv6 of width e and channel
// mix ffn: rwkvBlock's, the data-dependent mix's pair (time_mix_w2 five
// matrices), lerp_x and the fused mixes about 0.5, time_mix_first about
// 0, the decay spread so that exp(-exp(.)) spans most of (0, 1), its
// pair, the gate, and the channel mix's receptance and its lerp.
func RWKV6Block(e, ffn int64, r RWKV6) []RWKVTensorSpec {
	h := int64(r.Head)
	return append(append(rwkvBlock(e, ffn), rwkv6MixBlock(e, r)...),
		RWKVTensorSpec{"time_mix_first.weight", []int64{h, e / h}, false, 0, 0.5},
		RWKVTensorSpec{"channel_mix_lerp_r.weight", []int64{e, 1, 1}, false, 0.5, 0.25},
		rwkvMatrix("channel_mix_receptance.weight", e, e),
	)
}

// rwkv6MixBlock lists the time mix's tensors rwkv6 and rwkv6qwen2 have
// beyond the receptance, key, value and output: the data-dependent mix's
// pair (time_mix_w2 five matrices), lerp_x and the fused mixes (or
// SplitLerps' five) about 0.5, the decay spread so that exp(-exp(.)) spans most of (0, 1), its
// pair, and the gate.
func rwkv6MixBlock(e int64, r RWKV6) []RWKVTensorSpec {
	dm, dd := int64(r.Mix), int64(r.Decay)
	m, v := rwkvMatrix, rwkvVector(e)
	lerps := []RWKVTensorSpec{{"time_mix_lerp_fused.weight", []int64{e, 1, 1, 5}, false, 0.5, 0.25}}
	if r.SplitLerps {
		lerps = nil
		for _, b := range "wkvrg" {
			lerps = append(lerps, RWKVTensorSpec{"time_mix_lerp_" + string(b) + ".weight", []int64{e, 1, 1}, false, 0.5, 0.25})
		}
	}
	return append(append([]RWKVTensorSpec{
		m("time_mix_w1.weight", e, 5*dm),
		{"time_mix_w2.weight", []int64{dm, e, 5}, true, 0, 0.2},
		{"time_mix_lerp_x.weight", []int64{e, 1, 1}, false, 0.5, 0.25},
	}, lerps...),
		v("time_mix_decay.weight", -1, 1),
		m("time_mix_decay_w1.weight", e, dd), m("time_mix_decay_w2.weight", dd, e),
		m("time_mix_gate.weight", e, e),
	)
}

// RWKV6Qwen2Block lists a block's tensors of an rwkv6qwen2 of width e
// and feed-forward ffn: attn_norm, the key and value (HeadsKV heads
// wide), receptance and output, rwkv6MixBlock's, the receptance's, key's
// and value's biases, and Qwen2's ffn_norm, gate, up and down.
func RWKV6Qwen2Block(e, ffn int64, r RWKV6) []RWKVTensorSpec {
	kv := int64(r.HeadsKV * r.Head)
	bias := func(name string, n int64) RWKVTensorSpec { return RWKVTensorSpec{name, []int64{n}, false, 0, 0.1} }
	return qrwkvBlock(e, ffn, kv, append(rwkv6MixBlock(e, r),
		bias("time_mix_receptance.bias", e), bias("time_mix_key.bias", kv), bias("time_mix_value.bias", kv))...)
}
