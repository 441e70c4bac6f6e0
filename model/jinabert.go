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
// maximum bias 8. A file saying attention.causal = true is refused: the
// ALiBi attention here runs over the whole pass.
func jinaBertV2Hparams(c *Config, m *meta) {
	encoderHparams(c, m)
	if m.err == nil && !c.NonCausal {
		m.fail("%s = true: jina-bert-v2 runs here over the whole text only", m.key("attention.causal"))
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

// alibiTask is a non-causal pass's ALiBi attention: unit u is query head
// u/n of token u%n, which attends over the keys and values of its text
// straight from the pass's projections (float32; llama.cpp's encoder
// keeps no cache either), each score scale·q·k lowered by the head's
// slope times |query position − key position| — llama.cpp's mask holds
// −|p0 − p1| for an ALiBi model, which soft_max multiplies by the slope,
// so the bias is symmetric, not the key position alone.
type alibiTask struct {
	s      *State
	n      int       // tokens of the pass
	qkv    []float32 // the pass's projections, stride floats a token
	stride int
	out    []float32 // Heads×HeadDimV floats a token
}

// alibiAttention computes every token's attention output of a non-causal
// pass of n tokens into out. The pass's keys and values never go to the
// KV cache: no later pass reads them.
func (s *State) alibiAttention(n int, qkv []float32, stride int, out []float32) {
	s.alibi = alibiTask{s: s, n: n, qkv: qkv, stride: stride, out: out}
	s.e.For(n*s.m.Heads, 1, &s.alibi)
	s.alibi = alibiTask{}
}

// Do attends units [lo,hi) with worker w's scratch for the weights.
func (k *alibiTask) Do(w, lo, hi int) {
	c := &k.s.m.Config
	dk, dv := c.HeadDimK, c.HeadDimV
	qDim, kDim, oDim := c.Heads*dk, c.HeadsKV*dk, c.Heads*dv
	group := c.Heads / c.HeadsKV
	scale := c.KQScale
	sc := k.s.scratch[w]
	for u := lo; u < hi; u++ {
		h, t := u/k.n, u%k.n
		from, last := k.s.seesWhole(0, k.n, t)
		slope := c.ALiBi[h]
		q := k.qkv[t*k.stride+h*dk : t*k.stride+(h+1)*dk]
		koff, voff := qDim+(h/group)*dk, qDim+kDim+(h/group)*dv
		wt := sc[:last+1-from]
		mx := float32(math.Inf(-1))
		for j := from; j <= last; j++ {
			d := t - j
			if d < 0 {
				d = -d
			}
			row := k.qkv[j*k.stride:]
			v := scale*dotF32(q, row[koff:koff+dk]) - slope*float32(d)
			wt[j-from] = v
			mx = max(mx, v)
		}
		var sum float64
		for i, v := range wt {
			e := math.Exp(float64(v - mx))
			wt[i] = float32(e)
			sum += e
		}
		o := k.out[t*oDim+h*dv : t*oDim+(h+1)*dv]
		clear(o)
		inv := float32(1 / sum)
		for j := from; j <= last; j++ {
			a := wt[j-from] * inv
			axpyF32(o, a, k.qkv[j*k.stride+voff:j*k.stride+voff+dv])
		}
	}
}

// dotF32 is Σ a·b in float32 (len(b) ≥ len(a)), in four independent sums
// so that the products do not wait on one another.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyF32 adds a·x to y (len(x) ≥ len(y)).
func axpyF32(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
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
