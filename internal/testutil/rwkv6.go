package testutil

import "github.com/lowmem/llm/internal/gguf"

// RWKV6 is an RWKV-6 model's own sizes: wkv.head_size,
// time_mix_extra_dim (Mix), time_decay_extra_dim (Decay) and
// rescale_every_n_layers (0: not written).
type RWKV6 struct {
	Head, Mix, Decay, Rescale int
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

// AddRWKV6KV writes an rwkv6's own keys as llama.cpp's converter writes
// them: the LayerNorm epsilon, wkv.head_size, the two extra dims,
// rescale_every_n_layers (when not 0) and token_shift_count 2.
func AddRWKV6KV(g *gguf.Writer, arch string, r RWKV6, normEps float32) {
	own := []rwkvKey{{"time_mix_extra_dim", r.Mix}, {"time_decay_extra_dim", r.Decay}}
	if r.Rescale > 0 {
		own = append(own, rwkvKey{"rescale_every_n_layers", r.Rescale})
	}
	addRWKVKV(g, arch, normEps, r.Head, own...)
}

// RWKV6Block lists a block's tensors of an rwkv6 of width e and channel
// mix ffn: rwkvBlock's, the data-dependent mix's pair (time_mix_w2 five
// matrices), lerp_x and the fused mixes about 0.5, time_mix_first about
// 0, the decay spread so that exp(-exp(.)) spans most of (0, 1), its
// pair, the gate, and the channel mix's receptance and its lerp.
func RWKV6Block(e, ffn int64, r RWKV6) []RWKVTensorSpec {
	dm, dd, h := int64(r.Mix), int64(r.Decay), int64(r.Head)
	m, v := rwkvMatrix, rwkvVector(e)
	return append(rwkvBlock(e, ffn),
		m("time_mix_w1.weight", e, 5*dm),
		RWKVTensorSpec{"time_mix_w2.weight", []int64{dm, e, 5}, true, 0, 0.2},
		RWKVTensorSpec{"time_mix_lerp_x.weight", []int64{e, 1, 1}, false, 0.5, 0.25},
		RWKVTensorSpec{"time_mix_lerp_fused.weight", []int64{e, 1, 1, 5}, false, 0.5, 0.25},
		RWKVTensorSpec{"time_mix_first.weight", []int64{h, e / h}, false, 0, 0.5},
		v("time_mix_decay.weight", -1, 1),
		m("time_mix_decay_w1.weight", e, dd), m("time_mix_decay_w2.weight", dd, e),
		m("time_mix_gate.weight", e, e),
		RWKVTensorSpec{"channel_mix_lerp_r.weight", []int64{e, 1, 1}, false, 0.5, 0.25},
		m("channel_mix_receptance.weight", e, e),
	)
}
