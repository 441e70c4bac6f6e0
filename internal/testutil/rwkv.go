package testutil

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// RWKV7 is an RWKV-7 model's own sizes: wkv.head_size and the time mix's
// low-rank pairs' ranks (attention.decay_lora_rank, iclr_lora_rank,
// value_residual_mix_lora_rank, gate_lora_rank).
type RWKV7 struct {
	Head, Decay, ICLR, Value, Gate int
	// NoGroupNorm leaves an arwkv7's blocks without the group norm
	// (time_mix_ln); an arwkv7 of Gate 0 has no gate (its pair and sixth
	// mix) either.
	NoGroupNorm bool
}

// TinyRWKV7 is a 3-layer rwkv7 as llama.cpp's converter writes RWKV7-G1:
// width 128 in heads of 32, ranks 32 (decay), 64 (in-context rate), 96
// (value mix) and 128 (gate), so that a rank read for another fails (each
// a multiple of Q8_0's block, as the pairs' second matrices' rows must
// be); a channel mix of 4× the width; LayerNorm epsilon 1e-5; attention.head_count
// 0; Q8_0 weights and an output matrix of its own.
func TinyRWKV7() ModelSpec {
	return tiny(ModelSpec{
		Arch: "rwkv7", Seed: 67, Layers: 3, Embd: 128, FFN: 512, NormEps: 1e-5,
		RWKV7: &RWKV7{Head: 32, Decay: 32, ICLR: 64, Value: 96, Gate: 128},
	})
}

// TinyARWKV7 is a 3-layer arwkv7 as llama.cpp's converter writes
// ARWKV-7 with the gate (wkv_has_gate) and group norm: TinyRWKV7's time
// mix (heads of 32, ranks 32, 64, 96 and 128) in a Qwen2 body of width
// 128 (RMS epsilon 1e-6, SwiGLU of 448), token_shift_count 1,
// attention.head_count 0; Q8_0 weights and an output matrix of its own.
func TinyARWKV7() ModelSpec {
	return tiny(ModelSpec{
		Arch: "arwkv7", Seed: 77, Layers: 3, Embd: 128, FFN: 448, RMSEps: 1e-6,
		RWKV7: &RWKV7{Head: 32, Decay: 32, ICLR: 64, Value: 96, Gate: 128},
	})
}

// TinyARWKV7Plain is TinyARWKV7 without its options, as an ARWKV-7
// without wkv_has_gate converts (attention.gate_lora_rank 0, five mixes)
// and without the group norm.
func TinyARWKV7Plain() ModelSpec {
	s := TinyARWKV7()
	s.Seed, s.Label = 79, "plain"
	s.RWKV7.Gate, s.RWKV7.NoGroupNorm = 0, true
	return s
}

// AddARWKV7KV writes an arwkv7's own keys as llama.cpp's converter writes
// them: wkv.head_size, the four ranks (the gate's 0 without a gate) and
// token_shift_count 1 (its RMS epsilon is AddHparams').
func AddARWKV7KV(g *gguf.Writer, arch string, r RWKV7) {
	addRWKVKV(g, arch, 0, r.Head, 1, append(r.ranks(), rwkvKey{"attention.gate_lora_rank", r.Gate})...)
}

// ranks is the keys of the decay's, the in-context rate's and the value
// mix's ranks.
func (r RWKV7) ranks() []rwkvKey {
	return []rwkvKey{{"attention.decay_lora_rank", r.Decay}, {"attention.iclr_lora_rank", r.ICLR},
		{"attention.value_residual_mix_lora_rank", r.Value}}
}

// AddRWKV7KV writes an rwkv7's own keys as llama.cpp's converter writes
// them: the LayerNorm epsilon, wkv.head_size, the four ranks and
// token_shift_count 2.
func AddRWKV7KV(g *gguf.Writer, arch string, r RWKV7, normEps float32) {
	addRWKVKV(g, arch, normEps, r.Head, 2, append(r.ranks(), rwkvKey{"attention.gate_lora_rank", r.Gate})...)
}

// An rwkvKey is one of an RWKV model's own sizes and its key.
type rwkvKey struct {
	key string
	n   int
}

// addRWKVKV writes the keys of an RWKV model as llama.cpp's converters
// write them: the LayerNorm epsilon (unless 0: rwkv6qwen2's RMSNorms),
// wkv.head_size, the model's own sizes in order and token_shift_count
// (shifts).
func addRWKVKV(g *gguf.Writer, arch string, normEps float32, head, shifts int, own ...rwkvKey) {
	a := arch + "."
	if normEps != 0 {
		g.AddKV(a+"attention.layer_norm_epsilon", normEps)
	}
	g.AddKV(a+"wkv.head_size", uint32(head))
	for _, k := range own {
		g.AddKV(a+k.key, uint32(k.n))
	}
	g.AddKV(a+"token_shift_count", uint32(shifts))
}

// RWKVTensorSpec is one RWKV tensor as the converter writes it: its
// name (without the block prefix), dims, whether it is a matrix (of the
// model's weight type; else F32) and its values' mean and spread.
type RWKVTensorSpec struct {
	Name      string
	Dims      []int64
	Matrix    bool
	Mean, Std float64
}

// RWKV7Block lists block il's tensors of an rwkv7 of width e and channel
// mix ffn: rwkvBlock's, the decay's bias spread so that w spans (0.55,
// 1), the other low-rank pairs' biases about 0, the mixes about 0.5,
// matrices scaled by their inputs (layer 0's value pair at the
// in-context rate's rank, as llama.cpp asks it).
func RWKV7Block(il int, e, ffn int64, r RWKV7) []RWKVTensorSpec {
	return append(rwkvBlock(e, ffn), rwkv7Mix(il, e, r)...)
}

// ARWKV7Block lists block il's tensors of an arwkv7 of width e and
// feed-forward ffn: qrwkvBlock's (key and value as wide as the model)
// around rwkv7Mix's and, unless NoGroupNorm, the group norm's.
func ARWKV7Block(il int, e, ffn int64, r RWKV7) []RWKVTensorSpec {
	mix := rwkv7Mix(il, e, r)
	if !r.NoGroupNorm {
		v := rwkvVector(e)
		mix = append(mix, v("time_mix_ln.weight", 1, 0.1), v("time_mix_ln.bias", 0, 0.1))
	}
	return qrwkvBlock(e, ffn, e, mix...)
}

// rwkv7Mix lists RWKV-7's time mix's own tensors: the low-rank pairs and
// their biases (the gate's unless Gate is 0), the fused mixes (six, or
// five without the gate), k_k, k_a and r_k.
func rwkv7Mix(il int, e int64, r RWKV7) []RWKVTensorSpec {
	dw, da, dv, dg := int64(r.Decay), int64(r.ICLR), int64(r.Value), int64(r.Gate)
	if il == 0 {
		dv = da
	}
	m, v := rwkvMatrix, rwkvVector(e)
	mix := []RWKVTensorSpec{
		v("time_mix_w0.weight", 0, 1), m("time_mix_w1.weight", e, dw), m("time_mix_w2.weight", dw, e),
		v("time_mix_a0.weight", 0, 1), m("time_mix_a1.weight", e, da), m("time_mix_a2.weight", da, e),
		v("time_mix_v0.weight", 0, 1), m("time_mix_v1.weight", e, dv), m("time_mix_v2.weight", dv, e),
	}
	lerps := int64(5)
	if dg > 0 {
		mix, lerps = append(mix, m("time_mix_g1.weight", e, dg), m("time_mix_g2.weight", dg, e)), 6
	}
	return append(mix,
		RWKVTensorSpec{"time_mix_lerp_fused.weight", []int64{e, 1, 1, lerps}, false, 0.5, 0.25},
		v("time_mix_k_k.weight", 0.8, 0.2), v("time_mix_k_a.weight", 1, 0.3), v("time_mix_r_k.weight", 0, 0.5),
	)
}

// qrwkvBlock lists a QRWKV block's tensors (rwkv6qwen2's, arwkv7's) of
// width e, feed-forward ffn and keys and values kv wide around its time
// mix's own (mix): attn_norm, the key, value, receptance and output, and
// Qwen2's ffn_norm, gate, up and down.
func qrwkvBlock(e, ffn, kv int64, mix ...RWKVTensorSpec) []RWKVTensorSpec {
	m, v := rwkvMatrix, rwkvVector(e)
	return append(append([]RWKVTensorSpec{
		v("attn_norm.weight", 1, 0.1),
		m("time_mix_key.weight", e, kv), m("time_mix_value.weight", e, kv), m("time_mix_receptance.weight", e, e),
		m("time_mix_output.weight", e, e),
	}, mix...),
		v("ffn_norm.weight", 1, 0.1),
		m("ffn_gate.weight", e, ffn), m("ffn_up.weight", e, ffn), m("ffn_down.weight", ffn, e),
	)
}

// rwkvMatrix is a matrix of in inputs and out outputs, its values spread
// by its inputs.
func rwkvMatrix(name string, in, out int64) RWKVTensorSpec {
	return RWKVTensorSpec{name, []int64{in, out}, true, 0, 1 / math.Sqrt(float64(in))}
}

// rwkvVector returns the constructor of a model of width e's vectors.
func rwkvVector(e int64) func(name string, mean, std float64) RWKVTensorSpec {
	return func(name string, mean, std float64) RWKVTensorSpec {
		return RWKVTensorSpec{name, []int64{e}, false, mean, std}
	}
}

// rwkvBlock lists the tensors every RWKV block has (llama.cpp's rwkv6
// and rwkv7 loaders): the norms about 1 (biases about 0), the
// receptance, key, value and output, the group norm, and the channel
// mix's lerp (about 0.5), key and value.
func rwkvBlock(e, ffn int64) []RWKVTensorSpec {
	m, v := rwkvMatrix, rwkvVector(e)
	return []RWKVTensorSpec{
		v("attn_norm.weight", 1, 0.1), v("attn_norm.bias", 0, 0.1),
		v("attn_norm_2.weight", 1, 0.1), v("attn_norm_2.bias", 0, 0.1),
		m("time_mix_key.weight", e, e), m("time_mix_value.weight", e, e), m("time_mix_receptance.weight", e, e),
		v("time_mix_ln.weight", 1, 0.1), v("time_mix_ln.bias", 0, 0.1),
		m("time_mix_output.weight", e, e),
		{"channel_mix_lerp_k.weight", []int64{e, 1, 1}, false, 0.5, 0.25},
		m("channel_mix_key.weight", e, ffn), m("channel_mix_value.weight", ffn, e),
	}
}

// rwkv reports whether s is an RWKV model (rwkv6, rwkv6qwen2, rwkv7,
// arwkv7).
func (s ModelSpec) rwkv() bool {
	return s.Arch == "rwkv6" || s.Arch == "rwkv7" || s.qrwkv()
}

// qrwkv reports whether s is an RWKV time mix in a Qwen2 body
// (rwkv6qwen2, arwkv7): RMSNorms, no embeddings' norm, no final norm's
// bias.
func (s ModelSpec) qrwkv() bool { return s.Arch == "rwkv6qwen2" || s.Arch == "arwkv7" }

// rwkvTensors lists an RWKV spec's tensors: the ends (but in a QRWKV
// model with the embeddings' norm and the final norm's bias), then each
// block's.
func (s ModelSpec) rwkvTensors() []tensorSpec {
	e := int64(s.Embd)
	ts := s.ends("output_norm.weight")
	if !s.qrwkv() {
		ts = append(ts,
			tensorSpec{"output_norm.bias", quant.F32, []int64{e}, dist{0, 0.1}},
			tensorSpec{"token_embd_norm.weight", quant.F32, []int64{e}, dist{1, 0.1}},
			tensorSpec{"token_embd_norm.bias", quant.F32, []int64{e}, dist{0, 0.1}})
	}
	for l := range s.Layers {
		var block []RWKVTensorSpec
		switch {
		case s.Arch == "arwkv7":
			block = ARWKV7Block(l, e, int64(s.FFN), *s.RWKV7)
		case s.Arch == "rwkv6qwen2":
			block = RWKV6Qwen2Block(e, int64(s.FFN), *s.RWKV6)
		case s.RWKV6 != nil:
			block = RWKV6Block(e, int64(s.FFN), *s.RWKV6)
		default:
			block = RWKV7Block(l, e, int64(s.FFN), *s.RWKV7)
		}
		for _, b := range block {
			typ := quant.F32
			if b.Matrix {
				typ = s.WeightType
			}
			ts = append(ts, tensorSpec{fmt.Sprintf("blk.%d.%s", l, b.Name), typ, b.Dims, dist{b.Mean, b.Std}})
		}
	}
	return ts
}
