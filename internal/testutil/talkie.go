package testutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lowmem/llm/quant"
)

// TinyTalkie is a 2-layer talkie as Talkie 1930's converter writes it:
// llama's block without any norm weight (attn_norm, ffn_norm and
// output_norm absent), NEOX RoPE, then each head of Q and K
// RMS-normalised, the query's with a gain a head (attn_q_norm of [1,
// heads]); the normalised embeddings added back after every block,
// times its layer_output_scale; the logits ×logit_scale 1.5; an output
// matrix of its own, as llama.cpp requires; Q8_0 weights.
func TinyTalkie() ModelSpec {
	return tiny(ModelSpec{Arch: "talkie", Seed: 233, RopeBase: 1000000, RMSEps: 1e-5, LogitScale: 1.5})
}

// talkieTensors is llama's tensors without a norm weight, and each
// block's query gains and embedding-skip scale.
func (s ModelSpec) talkieTensors() []tensorSpec {
	l := s
	l.Arch = "llama"
	ts := slices.DeleteFunc(l.drawnTensors(), func(t tensorSpec) bool {
		return t.name == "output_norm.weight" || strings.HasSuffix(t.name, ".attn_norm.weight") || strings.HasSuffix(t.name, ".ffn_norm.weight")
	})
	for il := range s.Layers {
		p := fmt.Sprintf("blk.%d.", il)
		ts = append(ts,
			tensorSpec{p + "attn_q_norm.weight", quant.F32, []int64{1, int64(s.Heads)}, dist{1, 0.3}},
			tensorSpec{p + "layer_output_scale.weight", quant.F32, []int64{1}, dist{0.5, 0.2}})
	}
	return ts
}
