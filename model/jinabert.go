package model

import (
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// This file is jina-bert-v2's (jina-embeddings-v2-*): bert's post-norm
// blocks without position embeddings, whose attention scores are biased
// by ALiBi instead, as llama.cpp's bert graph runs it.

// jinaMaxALiBiBias is the ALiBi maximum bias llama.cpp gives every
// jina-bert-v2 file: its loader sets 8 and reads no key for it, so a
// file's attention.max_alibi_bias, present or not, changes nothing.
const jinaMaxALiBiBias = 8

// jinaBertV2Hparams: an encoder (attention.layer_norm_epsilon required,
// attention over the whole text) whose heads' ALiBi slopes come from the
// maximum bias 8. A file saying attention.causal = true, or without the
// key (which llama.cpp takes as causal), is refused: the ALiBi attention
// here runs over the whole pass.
func jinaBertV2Hparams(c *Config, m *meta) {
	encoderHparams(c, m)
	if m.err == nil && !c.NonCausal {
		m.fail("%s true or absent (llama.cpp then attends causally): jina-bert-v2 runs here over the whole text only", m.key("attention.causal"))
	}
	if m.err == nil {
		c.ALiBi = alibiSlopes(c.Heads, jinaMaxALiBiBias)
	}
}

// alibiSlopes returns the ALiBi slope of each of heads query heads for
// maximum bias maxBias, as ggml's soft_max computes them: with n the
// largest power of 2 not above heads, head h < n gets m0^(h+1) with
// m0 = 2^(-maxBias/n), and the heads past n the odd powers
// m1^(2(h-n)+1) of m1 = 2^(-maxBias/2/n).
func alibiSlopes(heads int, maxBias float64) []float32 {
	n := 1
	for n*2 <= heads {
		n *= 2
	}
	m0 := math.Pow(2, -maxBias/float64(n))
	m1 := math.Pow(2, -maxBias/2/float64(n))
	out := make([]float32, heads)
	for h := range out {
		if h < n {
			out[h] = float32(math.Pow(m0, float64(h+1)))
		} else {
			out[h] = float32(math.Pow(m1, float64(2*(h-n)+1)))
		}
	}
	return out
}

// jinaTensors lists a jina-bert-v2 block's tensors after attn_output_norm,
// with those before the feed-forward llama.cpp takes as optional: the
// LayerNorms of the whole query and key rows (attn_q_norm, attn_k_norm,
// weight and bias, jina-embeddings-v2-base-code's) and attn_norm_2; a pair
// with one of them must have all (no released file has half). The
// feed-forward is GELU-gated: ffn_gate and ffn_up, or ffn_up alone
// holding the gate rows then the up rows (GEGLU), and ffn_down with its
// bias.
func jinaTensors(c *Config, has func(name string) bool) []blockTensor {
	e, F := c.Embd, c.FFN
	q, kv := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK
	var ts []blockTensor
	if has("attn_q_norm.weight") || has("attn_k_norm.weight") {
		ts = append(ts,
			vecTensor("attn_q_norm.weight", q, func(L *Layer) *[]float32 { return &L.QNorm }),
			vecTensor("attn_q_norm.bias", q, func(L *Layer) *[]float32 { return &L.QNormB }),
			vecTensor("attn_k_norm.weight", kv, func(L *Layer) *[]float32 { return &L.KNorm }),
			vecTensor("attn_k_norm.bias", kv, func(L *Layer) *[]float32 { return &L.KNormB }))
	}
	if has("attn_norm_2.weight") || has("attn_norm_2.bias") {
		ts = append(ts,
			vecTensor("attn_norm_2.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm2 }),
			vecTensor("attn_norm_2.bias", e, func(L *Layer) *[]float32 { return &L.AttnNorm2B }))
	}
	if has("ffn_gate.weight") {
		ts = append(ts,
			matTensor("ffn_gate.weight", e, F, func(L *Layer) **ops.Matrix { return &L.Gate }),
			matTensor("ffn_up.weight", e, F, func(L *Layer) **ops.Matrix { return &L.Up }))
	} else {
		ts = append(ts, matTensor("ffn_up.weight", e, 2*F, func(L *Layer) **ops.Matrix { return &L.GateUp }))
	}
	return append(ts,
		matTensor("ffn_down.weight", F, e, func(L *Layer) **ops.Matrix { return &L.Down }),
		vecTensor("ffn_down.bias", e, func(L *Layer) *[]float32 { return &L.BDown }),
		vecTensor("layer_output_norm.weight", e, func(L *Layer) *[]float32 { return &L.LayerOutNorm }),
		vecTensor("layer_output_norm.bias", e, func(L *Layer) *[]float32 { return &L.LayerOutNormB }))
}
