package main

import (
	"fmt"

	"github.com/lowmem/llm/internal/testutil"
)

// rwkvNormEps is the LayerNorm epsilon of the RWKV7-G1 and RWKV-6 World
// releases' converted files (recalled: their configs' norm_eps and
// layer_norm_epsilon, 1e-5).
const rwkvNormEps = 1e-5

// rwkv reports whether s is an RWKV shape (rwkv6, rwkv6qwen2, rwkv7,
// arwkv7).
func (s shape) rwkv() bool { return s.RWKV6 != nil || s.RWKV7 != nil }

// rwkvPlan lists an rwkv6's, rwkv6qwen2's, rwkv7's or arwkv7's tensors
// as llama.cpp's converter writes them: the embedding and (not in a
// Qwen2 body: rwkv6qwen2, arwkv7) its LayerNorm, each block's
// (testutil's RWKV6Block, RWKV6Qwen2Block, RWKV7Block or ARWKV7Block:
// the low-rank pairs, the fused mixes and
// RWKV-6's time_mix_first F32, as llama-quantize leaves them — it skips
// them by name —, the receptance, key, value, gate, output and channel
// mix or feed-forward matrices quantized), then the final norm (its bias
// but in a Qwen2 body) and the output.
func rwkvPlan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	e, v := int64(s.Embd), int64(s.Vocab)
	qwen2 := s.Arch == "rwkv6qwen2" || s.Arch == "arwkv7"
	add("token_embd.weight", kindWeight, e, v)
	if !qwen2 {
		add("token_embd_norm.weight", kindNorm, e)
		add("token_embd_norm.bias", kindBias, e)
	}
	for l := range s.Layers {
		block := func() []testutil.RWKVTensorSpec { return testutil.RWKV7Block(l, e, int64(s.FFN), *s.RWKV7) }
		switch {
		case s.Arch == "arwkv7":
			block = func() []testutil.RWKVTensorSpec { return testutil.ARWKV7Block(l, e, int64(s.FFN), *s.RWKV7) }
		case s.Arch == "rwkv6qwen2":
			block = func() []testutil.RWKVTensorSpec { return testutil.RWKV6Qwen2Block(e, int64(s.FFN), *s.RWKV6) }
		case s.RWKV6 != nil:
			block = func() []testutil.RWKVTensorSpec { return testutil.RWKV6Block(e, int64(s.FFN), *s.RWKV6) }
		}
		for _, b := range block() {
			kind := kindWeight
			switch {
			case rwkvLora(b.Name):
				kind = kindF32
			case len(b.Dims) > 2:
				kind = kindF32Norm // the mixes
			case len(b.Dims) == 2 && !b.Matrix:
				kind = kindF32
			case !b.Matrix && b.Mean == 0:
				kind = kindBias
			case !b.Matrix:
				kind = kindNorm
			}
			add(fmt.Sprintf("blk.%d.%s", l, b.Name), kind, b.Dims...)
		}
	}
	add("output_norm.weight", kindNorm, e)
	if !qwen2 {
		add("output_norm.bias", kindBias, e)
	}
	add("output.weight", kindWeight, e, v)
}

// rwkvLora reports whether name is one of a block's low-rank pairs'
// matrices, which llama-quantize leaves unquantized.
func rwkvLora(name string) bool {
	switch name {
	case "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_a1.weight", "time_mix_a2.weight",
		"time_mix_v1.weight", "time_mix_v2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
		"time_mix_decay_w1.weight", "time_mix_decay_w2.weight":
		return true
	}
	return false
}
