package main

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// modernBertShape is the part of a ModernBERT config.json only it has:
// norm_eps, local_rope_theta (its global_rope_theta is RopeBase, its
// local_attention the shape's Window) and global_attn_every_n_layers.
type modernBertShape struct {
	NormEps     float32
	RopeBaseSWA float32
	Every       int
}

// addModernBertKV writes the keys the converter writes for a ModernBERT
// besides the common ones: its LayerNorm epsilon, attention over the
// whole text, the window, its pattern and the windowed layers' RoPE base.
func (s shape) addModernBertKV(g *gguf.Writer) {
	a := s.Arch + "."
	mb := s.ModernBert
	g.AddKV(a+"attention.layer_norm_epsilon", mb.NormEps)
	g.AddKV(a+"attention.causal", false)
	g.AddKV(a+"attention.sliding_window", uint32(s.Window))
	g.AddKV(a+"attention.sliding_window_pattern", uint32(mb.Every))
	g.AddKV(a+"rope.freq_base_swa", mb.RopeBaseSWA)
}

// modernBertPlan lists a ModernBERT's tensors in the converter's order:
// the embedding and its norm, per block attn_norm (not in block 0),
// attn_qkv, attn_output, ffn_norm, ffn_up (gate rows, then up rows) and
// ffn_down, then output_norm; no biases, no output matrix.
func modernBertPlan(s shape, add func(name string, kind tensorKind, dims ...int64)) {
	e, v, f := int64(s.Embd), int64(s.Vocab), int64(s.FFN)
	q, kv := int64(s.Heads*s.headDim()), int64(s.HeadsKV*s.headDim())
	add("token_embd.weight", kindWeight, e, v)
	add("token_embd_norm.weight", kindNorm, e)
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		if l > 0 {
			add(p+"attn_norm.weight", kindNorm, e)
		}
		add(p+"attn_qkv.weight", kindWeight, e, q+2*kv)
		add(p+"attn_output.weight", kindWeight, q, e)
		add(p+"ffn_norm.weight", kindNorm, e)
		add(p+"ffn_up.weight", kindWeight, e, 2*f)
		add(p+"ffn_down.weight", kindWeight, f, e)
	}
	add("output_norm.weight", kindNorm, e)
}
