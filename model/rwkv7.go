package model

import (
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// This file is RWKV-7 ("Goose") as llama.cpp's rwkv7 graph
// (build_rwkv7_time_mix, build_rwkv7_channel_mix) and ggml's rwkv_wkv7
// run it. The embeddings go through token_embd_norm (a LayerNorm with
// bias). Each block then runs a time mix and a channel mix, each after a
// LayerNorm with bias (attn_norm, attn_norm_2) and each added to the
// residual stream. Both mix a token's normalised row with the previous
// token's (the token shift): x + (prev - x)·lerp, the previous row of the
// pass's first token carried in the recurrent state.
//
// The time mix makes six such mixes (time_mix_lerp_fused: r, w, k, v, a,
// g) and from them the receptance r, key k and value v (full matrices),
// and through low-rank pairs: the decay w = exp(-0.606531·σ(w0 +
// w2·tanh(w1·x))), the in-context learning rate a = σ(a0 + a2·(a1·x)),
// the output gate g = g2·σ(g1·x) and, after the first layer, the value's
// mix with the first layer's value, v += (v_first - v)·σ(v0 + v2·(v1·x)).
// kk = L2-normalised (k·k_k) per head; k becomes k·(1 + (a-1)·k_a). The
// state S of each head (WKVHead² floats, S[i][j]: value i, key j) then
// takes each token as ggml's rwkv_wkv7 does:
//
//	sa[i]   = Σ_j -kk[j]·S[i][j]
//	S[i][j] = S[i][j]·w[j] + v[i]·k[j] + sa[i]·kk[j]·a[j]
//	y[i]    = Σ_j S[i][j]·r[j]
//
// y goes through a group norm per head (time_mix_ln, eps 64e-5), gains
// v·Σ_j(k·r·r_k)[j] per head, is multiplied by g and goes through
// time_mix_output. The channel mix is value(ReLU(key(x))²) of its one
// mix (channel_mix_lerp_k).
//
// A layer's recurrent state is its two shifted rows (the time mix's,
// then the channel mix's) and its heads' states.

// rwkv7Slots is the rows of Embd floats a token takes in the qkv scratch
// of an RWKV-7 pass: r, w, k, v, a (then kk·a), g, kk, and the first
// layer's value, which lives there through every layer of the pass.
const rwkv7Slots = 8

// The slots' order in a token's row.
const (
	rwR = iota
	rwW
	rwK
	rwV
	rwA
	rwG
	rwKK
	rwVFirst
)

// rwkv7Floats is one RWKV-7 layer's recurrent state: the two shifted rows,
// then Embd/WKVHead heads of WKVHead² floats.
func rwkv7Floats(c *Config) int { return 2*c.Embd + c.Embd*c.WKVHead }

// rwkv7Lerp is the token shift's mix into dst: each token's row of cur
// moved toward the previous token's by lerp; the pass's first token
// (and a packed pass's first token of each text) takes prev0.
func (s *State) rwkv7Lerp(dst, cur, prev0, lerp []float32, n int) {
	E := s.m.Embd
	texts := s.texts
	for t := range n {
		prev := prev0
		switch {
		case texts != nil && int(texts[t].from) == t:
			prev = nil // a text's first token: the empty state's zeros
		case t > 0:
			prev = cur[(t-1)*E : t*E]
		}
		x, d := cur[t*E:(t+1)*E], dst[t*E:(t+1)*E]
		for i := range E {
			var p float32
			if prev != nil {
				p = prev[i]
			}
			d[i] = x[i] + (p-x[i])*lerp[i]
		}
	}
}

// rwkv7Lora is up·act(down·x) of the pass's n rows in a (act nil: none),
// written into slot slot of each token's row of p.qkv; p.att holds the
// rank's rows between the two products.
func (s *State) rwkv7Lora(down, up *ops.Matrix, rank int, a acts, act func(float32) float32, p *pass, slot int) error {
	c := &s.m.Config
	n := a.n
	if err := s.mul(down, a, p.att, rank); err != nil {
		return err
	}
	if act != nil {
		for i, v := range p.att[:n*rank] {
			p.att[i] = act(v)
		}
	}
	return s.mul(up, s.acts(p.att, rank, n), p.qkv[slot*c.Embd:], rwkv7Slots*c.Embd)
}

func sigmoid32(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
func tanh32(x float32) float32    { return float32(math.Tanh(float64(x))) }

// rwkv7Layer runs block il of an RWKV-7 model over the pass's residual
// stream in place, carrying the layer's shifted rows and wkv state on.
func (s *State) rwkv7Layer(il int, L *Layer, p *pass) error {
	m := s.m
	c := &m.Config
	E, n := c.Embd, p.n
	W := rwkv7Slots * E
	x := p.x[:n*E]
	src, dst := s.conv.layer(c.recurrentIndex(il), rwkv7Floats(c))
	s.e.Phase(phNorm)
	cur := p.tmp[:n*E]
	s.layerNorm(cur, x, L.AttnNorm, L.AttnNormB, n)
	var mixed acts
	lerp := func(b int) acts {
		s.rwkv7Lerp(p.xn, cur, src[:E], L.TMLerp[b*E:(b+1)*E], n)
		return s.acts(p.xn, E, n)
	}
	s.e.Phase(phQKV)
	if err := s.mul(L.Wq, lerp(rwR), p.qkv[rwR*E:], W); err != nil {
		return err
	}
	if err := s.rwkv7Lora(L.TMW1, L.TMW2, c.LoRADecay, lerp(rwW), tanh32, p, rwW); err != nil {
		return err
	}
	if err := s.mul(L.Wk, lerp(rwK), p.qkv[rwK*E:], W); err != nil {
		return err
	}
	mixed = lerp(rwV)
	if err := s.mul(L.Wv, mixed, p.qkv[rwV*E:], W); err != nil {
		return err
	}
	if il > 0 {
		// The value's mix with the first layer's, its gate made in the
		// g slot, which g overwrites after.
		if err := s.rwkv7Lora(L.TMV1, L.TMV2, c.LoRAValue, mixed, nil, p, rwG); err != nil {
			return err
		}
	}
	if err := s.rwkv7Lora(L.TMA1, L.TMA2, c.LoRAICLR, lerp(rwA), nil, p, rwA); err != nil {
		return err
	}
	for t := range n {
		row := p.qkv[t*W : (t+1)*W]
		v, vf := row[rwV*E:(rwV+1)*E], row[rwVFirst*E:(rwVFirst+1)*E]
		if il == 0 {
			copy(vf, v)
		} else {
			gate := row[rwG*E : (rwG+1)*E]
			for i := range v {
				v[i] += (vf[i] - v[i]) * sigmoid32(gate[i]+L.TMV0[i])
			}
		}
	}
	if err := s.rwkv7Lora(L.TMG1, L.TMG2, c.LoRAGate, lerp(rwG), sigmoid32, p, rwG); err != nil {
		return err
	}
	s.e.Phase(phScan)
	N := c.WKVHead
	for t := range n {
		row := p.qkv[t*W : (t+1)*W]
		w, k, a, kk := row[rwW*E:(rwW+1)*E], row[rwK*E:(rwK+1)*E], row[rwA*E:(rwA+1)*E], row[rwKK*E:(rwKK+1)*E]
		for i := range E {
			w[i] = float32(math.Exp(-0.606531 * float64(sigmoid32(w[i]+L.TMW0[i]))))
			a[i] = sigmoid32(a[i] + L.TMA0[i])
			kk[i] = k[i] * L.TMKK[i]
			k[i] += (a[i]*k[i] - k[i]) * L.TMKA[i]
		}
		for h := 0; h < E; h += N {
			l2Norm(kk[h:h+N], 1e-12)
		}
		for i := range E {
			a[i] *= kk[i] // the update's b = kk·a
		}
	}
	y := p.att[:n*E]
	s.wkv = wkv7Task{s: s, n: n, rows: p.qkv, y: y, src: src[2*E:], dst: dst[2*E:]}
	s.e.For(E/N, 1, &s.wkv)
	s.wkv = wkv7Task{}
	for t := range n {
		row := p.qkv[t*W : (t+1)*W]
		r, k, v, g := row[rwR*E:(rwR+1)*E], row[rwK*E:(rwK+1)*E], row[rwV*E:(rwV+1)*E], row[rwG*E:(rwG+1)*E]
		yt := y[t*E : (t+1)*E]
		for h := 0; h < E; h += N {
			ops.LayerNorm(yt[h:h+N], yt[h:h+N], L.TMLn[h:h+N], L.TMLnB[h:h+N], 64e-5)
			var rk float32
			for j := h; j < h+N; j++ {
				rk += k[j] * r[j] * L.TMRK[j]
			}
			for i := h; i < h+N; i++ {
				yt[i] = (yt[i] + v[i]*rk) * g[i]
			}
		}
	}
	s.e.Phase(phO)
	if err := s.mul(L.Wo, s.acts(y, E, n), p.xn, E); err != nil {
		return err
	}
	ops.Add(x, p.xn[:n*E])
	copy(dst[:E], cur[(n-1)*E:])

	// The channel mix.
	s.e.Phase(phNorm)
	s.layerNorm(cur, x, L.FFNNorm, L.FFNNormB, n)
	s.rwkv7Lerp(p.xn, cur, src[E:2*E], L.CMLerpK, n)
	s.e.Phase(phGateUp)
	F := c.FFN
	if err := s.mul(L.Up, s.acts(p.xn, E, n), p.gu, F); err != nil {
		return err
	}
	for i, v := range p.gu[:n*F] {
		v = max(v, 0)
		p.gu[i] = v * v
	}
	s.e.Phase(phDown)
	if err := s.mul(L.Down, s.acts(p.gu, F, n), p.att, E); err != nil {
		return err
	}
	ops.Add(x, p.att[:n*E])
	copy(dst[E:2*E], cur[(n-1)*E:])
	return nil
}

// wkv7Task runs one RWKV-7 layer's state update over a pass, a range of
// heads per work item, each head's state through the tokens in order.
type wkv7Task struct {
	s    *State
	n    int
	rows []float32 // n rows of rwkv7Slots×Embd: r, w, k, v, kk·a, g, kk, …
	y    []float32 // n rows of Embd: the heads' outputs
	src  []float32 // the layer's heads' states before the pass
	dst  []float32 // where the pass leaves them (src itself or a free slot)
}

// Do updates heads [lo,hi): the first token from src into dst, the rest
// in place; a new text of the pass starts from the empty state.
func (k *wkv7Task) Do(_, lo, hi int) {
	c := &k.s.m.Config
	E, N := c.Embd, c.WKVHead
	W := rwkv7Slots * E
	texts := k.s.texts
	for h := lo; h < hi; h++ {
		in, st := k.src[h*N*N:(h+1)*N*N], k.dst[h*N*N:(h+1)*N*N]
		o := h * N
		for t := range k.n {
			if texts != nil && int(texts[t].from) == t {
				clear(st)
				in = st
			}
			row := k.rows[t*W : (t+1)*W]
			r, w, kv := row[rwR*E+o:rwR*E+o+N], row[rwW*E+o:rwW*E+o+N], row[rwK*E+o:rwK*E+o+N]
			v, b, kk := row[rwV*E+o:rwV*E+o+N], row[rwA*E+o:rwA*E+o+N], row[rwKK*E+o:rwKK*E+o+N]
			wkv7Head(st, in, r, w, kv, v, kk, b, k.y[t*E+o:t*E+o+N])
			in = st
		}
	}
}

// wkv7Head takes one token into one head's state (in, written to st,
// which may be in itself) and writes the head's output y: rwkv_wkv7's
// update with a = -kk.
func wkv7Head(st, in, r, w, k, v, kk, b, y []float32) {
	N := len(r)
	for i := range N {
		si, so := in[i*N:(i+1)*N], st[i*N:(i+1)*N]
		var sa float32
		for j := range N {
			sa -= kk[j] * si[j]
		}
		var out float32
		for j := range N {
			nv := si[j]*w[j] + v[i]*k[j] + sa*b[j]
			so[j] = nv
			out += nv * r[j]
		}
		y[i] = out
	}
}

// rwkv7Hparams: RWKV-7 as llama.cpp loads it. wkv.head_size (required)
// must divide embedding_length; the low-rank pairs' ranks
// attention.decay_lora_rank, attention.iclr_lora_rank,
// attention.value_residual_mix_lora_rank and attention.gate_lora_rank are
// required (llama.cpp reads the gate's as optional, but then asks for
// its tensors at a rank of 0, which no file has) and at most the width,
// which the pass's scratch holds them in; feed_forward_length is the
// channel mix's width; token_shift_count must be 2 (the default), as
// llama.cpp's graph asserts; attention.layer_norm_epsilon defaults to 0.
// No layer attends: every layer is recurrent, and the KV cache keeps
// mamba's placeholder layer (mambaHparams).
func rwkv7Hparams(c *Config, m *meta) {
	// Every norm is a LayerNorm with a bias, as Config.LayerNorm's path
	// runs them (State.normB), the final one too.
	c.RWKV7, c.NoRopeEvery, c.LayerNorm = true, 1, true
	c.HeadDimK, c.HeadDimV, c.RopeDim = placeholderHeadDim, placeholderHeadDim, placeholderHeadDim
	c.FFN = m.num("feed_forward_length", maxCount, -1, false)
	c.NormEps = m.real("attention.layer_norm_epsilon", 0)
	c.WKVHead = m.num("wkv.head_size", maxHeadDim, -1, false)
	c.LoRADecay = m.num("attention.decay_lora_rank", maxCount, -1, false)
	c.LoRAICLR = m.num("attention.iclr_lora_rank", maxCount, -1, false)
	c.LoRAValue = m.num("attention.value_residual_mix_lora_rank", maxCount, -1, false)
	c.LoRAGate = m.num("attention.gate_lora_rank", maxCount, -1, false)
	shift := m.num("token_shift_count", maxCount, 2, false)
	k := m.key
	if m.err != nil {
		return
	}
	switch {
	case !(c.NormEps >= 0 && c.NormEps < 1):
		m.fail("%s = %v, want a number in [0, 1)", k("attention.layer_norm_epsilon"), c.NormEps)
	case c.WKVHead < 1 || c.Embd%c.WKVHead != 0:
		m.fail("%s = %d does not divide %s = %d", k("wkv.head_size"), c.WKVHead, k("embedding_length"), c.Embd)
	case int64(c.Embd)*int64(c.WKVHead) > maxSSMLayerFloats:
		m.fail("%s = %d × %s = %d is a state of more than %d floats a layer", k("embedding_length"), c.Embd, k("wkv.head_size"), c.WKVHead, maxSSMLayerFloats)
	case shift != 2:
		m.fail("%s = %d, want 2 (the time mix's and the channel mix's)", k("token_shift_count"), shift)
	case c.FFN < 1:
		m.fail("%s = %d, want at least 1", k("feed_forward_length"), c.FFN)
	}
	for _, r := range []struct {
		key  string
		rank int
	}{{"attention.decay_lora_rank", c.LoRADecay}, {"attention.iclr_lora_rank", c.LoRAICLR},
		{"attention.value_residual_mix_lora_rank", c.LoRAValue}, {"attention.gate_lora_rank", c.LoRAGate}} {
		if m.err == nil && (r.rank < 1 || r.rank > c.Embd) {
			m.fail("%s = %d, want 1 to %s = %d", k(r.key), r.rank, k("embedding_length"), c.Embd)
		}
	}
	c.ConvLayers = make([]bool, c.Layers)
	for il := range c.ConvLayers {
		c.ConvLayers[il] = true
	}
}

// rwkv7Tensors lists an RWKV-7 block's tensors as llama.cpp's loader
// takes them, all required: the two LayerNorms with biases, the low-rank
// pairs and their biases (layer 0's value pair, which its graph never
// runs, at the in-context rate's rank), the fused mixes ([Embd, 1, 1, 6]),
// k_k, k_a and r_k, the receptance, key, value and output matrices, the
// group norm, and the channel mix's lerp, key and value.
func rwkv7Tensors(c *Config, il int) []blockTensor {
	e, f := c.Embd, c.FFN
	vr := c.LoRAValue
	if il == 0 {
		vr = c.LoRAICLR
	}
	vec := func(name string, get func(L *Layer) *[]float32) blockTensor { return vecTensor(name, e, get) }
	return []blockTensor{
		vec("attn_norm.weight", func(L *Layer) *[]float32 { return &L.AttnNorm }),
		vec("attn_norm.bias", func(L *Layer) *[]float32 { return &L.AttnNormB }),
		vec("attn_norm_2.weight", func(L *Layer) *[]float32 { return &L.FFNNorm }),
		vec("attn_norm_2.bias", func(L *Layer) *[]float32 { return &L.FFNNormB }),
		vec("time_mix_w0.weight", func(L *Layer) *[]float32 { return &L.TMW0 }),
		matTensor("time_mix_w1.weight", e, c.LoRADecay, func(L *Layer) **ops.Matrix { return &L.TMW1 }),
		matTensor("time_mix_w2.weight", c.LoRADecay, e, func(L *Layer) **ops.Matrix { return &L.TMW2 }),
		vec("time_mix_a0.weight", func(L *Layer) *[]float32 { return &L.TMA0 }),
		matTensor("time_mix_a1.weight", e, c.LoRAICLR, func(L *Layer) **ops.Matrix { return &L.TMA1 }),
		matTensor("time_mix_a2.weight", c.LoRAICLR, e, func(L *Layer) **ops.Matrix { return &L.TMA2 }),
		vec("time_mix_v0.weight", func(L *Layer) *[]float32 { return &L.TMV0 }),
		matTensor("time_mix_v1.weight", e, vr, func(L *Layer) **ops.Matrix { return &L.TMV1 }),
		matTensor("time_mix_v2.weight", vr, e, func(L *Layer) **ops.Matrix { return &L.TMV2 }),
		matTensor("time_mix_g1.weight", e, c.LoRAGate, func(L *Layer) **ops.Matrix { return &L.TMG1 }),
		matTensor("time_mix_g2.weight", c.LoRAGate, e, func(L *Layer) **ops.Matrix { return &L.TMG2 }),
		{name: "time_mix_lerp_fused.weight", dims: []int{e, 1, 1, 6}, vec: func(L *Layer) *[]float32 { return &L.TMLerp }},
		vec("time_mix_k_k.weight", func(L *Layer) *[]float32 { return &L.TMKK }),
		vec("time_mix_k_a.weight", func(L *Layer) *[]float32 { return &L.TMKA }),
		vec("time_mix_r_k.weight", func(L *Layer) *[]float32 { return &L.TMRK }),
		matTensor("time_mix_key.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wk }),
		matTensor("time_mix_value.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wv }),
		matTensor("time_mix_receptance.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wq }),
		vec("time_mix_ln.weight", func(L *Layer) *[]float32 { return &L.TMLn }),
		vec("time_mix_ln.bias", func(L *Layer) *[]float32 { return &L.TMLnB }),
		matTensor("time_mix_output.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wo }),
		{name: "channel_mix_lerp_k.weight", dims: []int{e, 1, 1}, vec: func(L *Layer) *[]float32 { return &L.CMLerpK }},
		matTensor("channel_mix_key.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Up }),
		matTensor("channel_mix_value.weight", f, e, func(L *Layer) **ops.Matrix { return &L.Down }),
	}
}

// rwkv7Ends loads what an RWKV-7 model has around its blocks besides the
// final norm's weight and the output: the final norm's bias and the
// embeddings' LayerNorm (token_embd_norm, weight and bias), all required
// as llama.cpp requires them.
func (l *loader) rwkv7Ends(m *Model) (err error) {
	if m.OutNormB, err = l.vector("output_norm.bias", m.Embd); err != nil {
		return err
	}
	return l.embedLayerNorm(m)
}

// embedLayerNorm loads the embeddings' LayerNorm, token_embd_norm's weight
// and bias, both required (rwkv7, bloom; Arch.EmbedLayerNorm).
func (l *loader) embedLayerNorm(m *Model) (err error) {
	if m.EmbedNorm, err = l.vector("token_embd_norm.weight", m.Embd); err != nil {
		return err
	}
	m.EmbedNormB, err = l.vector("token_embd_norm.bias", m.Embd)
	return err
}
