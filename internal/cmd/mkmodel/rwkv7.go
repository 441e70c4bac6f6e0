package main

import (
	"fmt"

	"github.com/lowmem/llm/internal/testutil"
)

// rwkv7NormEps is the LayerNorm epsilon of the RWKV7-G1 releases'
// converted files (recalled: their config's norm_eps, 1e-5).
const rwkv7NormEps = 1e-5

// rwkv7Plan lists an rwkv7's tensors as llama.cpp's converter writes
// them: the embedding and its LayerNorm, each block's (testutil's
// RWKV7Block: the low-rank pairs and the fused mixes F32, as llama-quantize
// leaves them — it skips time_mix_w1/w2, a1/a2, v1/v2, g1/g2 and
// lerp_fused by name —, the receptance, key, value, output and channel
// mix matrices quantized), then the final LayerNorm and the output.
func rwkv7Plan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	e, v := int64(s.Embd), int64(s.Vocab)
	add("token_embd.weight", kindWeight, e, v)
	add("token_embd_norm.weight", kindNorm, e)
	add("token_embd_norm.bias", kindBias, e)
	for l := range s.Layers {
		for _, b := range testutil.RWKV7Block(l, e, int64(s.FFN), *s.RWKV7) {
			kind := kindWeight
			switch {
			case len(b.Dims) > 2:
				kind = kindF32Norm // the mixes
			case len(b.Dims) == 2 && !b.Matrix:
				kind = kindF32
			case !b.Matrix && b.Mean == 0:
				kind = kindBias
			case !b.Matrix:
				kind = kindNorm
			case rwkv7Lora(b.Name):
				kind = kindF32
			}
			add(fmt.Sprintf("blk.%d.%s", l, b.Name), kind, b.Dims...)
		}
	}
	add("output_norm.weight", kindNorm, e)
	add("output_norm.bias", kindBias, e)
	add("output.weight", kindWeight, e, v)
}

// rwkv7Lora reports whether name is one of a block's low-rank pairs'
// matrices, which llama-quantize leaves unquantized.
func rwkv7Lora(name string) bool {
	switch name {
	case "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_a1.weight", "time_mix_a2.weight",
		"time_mix_v1.weight", "time_mix_v2.weight", "time_mix_g1.weight", "time_mix_g2.weight":
		return true
	}
	return false
}
