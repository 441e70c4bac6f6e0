package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/ssm"
)

// This file is what RWKV-6 (rwkv6.go) and RWKV-7 (rwkv7.go) run alike, as
// llama.cpp's rwkv6 and rwkv7 graphs do: the embeddings through
// token_embd_norm (a LayerNorm with bias); per block a time mix and a
// channel mix, each after a LayerNorm with bias (attn_norm, attn_norm_2)
// and each added to the residual stream. Both mix a token's normalised
// row with the previous token's (the token shift): x + (prev - x)·lerp,
// the previous row of the pass's first token carried in the recurrent
// state. The time mix's heads' outputs each go through a group norm
// (time_mix_ln, eps 64e-5) and its output matrix; the channel mix is
// value(ReLU(key(x))²), times σ(receptance(x')) in RWKV-6.
//
// A layer's recurrent state is its two shifted rows (the time mix's,
// then the channel mix's) and its heads' states, WKVHead² floats each.

// rwkvSlots is the rows of Embd floats a token takes in the qkv scratch
// of an RWKV pass: RWKV-7's r, w, k, v, a (then kk·a), g, kk, and the
// first layer's value, which lives there through every layer of the
// pass; RWKV-6 takes the first six (rwkv6.go).
const rwkvSlots = 8

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

// rwkvFloats is one RWKV layer's recurrent state: the shifted rows
// (rwkvShifts), then Embd/WKVHead heads of WKVHead² floats.
func rwkvFloats(c *Config) int { return c.rwkvShifts()*c.Embd + c.Embd*c.WKVHead }

// rwkvShifts is the rows an RWKV layer shifts: the time mix's and the
// channel mix's, or the time mix's alone in a QRWKV model (rwkv6qwen2,
// arwkv7: its token_shift_count 1), whose feed-forward shifts nothing.
func (c *Config) rwkvShifts() int {
	if c.QRWKV {
		return 1
	}
	return 2
}

// rwkv reports whether every block is an RWKV block (rwkv6, rwkv6qwen2,
// rwkv7, arwkv7).
func (c *Config) rwkv() bool { return c.RWKV6 || c.RWKV7 }

// rwkvLerp is the token shift's mix into dst: each token's row of cur
// moved toward the previous token's by lerp, plus, when extra is not nil,
// the token's own row of extra (rows of rwkvSlots×Embd: RWKV-6's
// data-dependent part); the pass's first token (and a packed pass's
// first token of each text) takes prev0.
func (s *State) rwkvLerp(dst, cur, prev0, lerp, extra []float32, n int) {
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
		var ex []float32
		if extra != nil {
			ex = extra[t*rwkvSlots*E : t*rwkvSlots*E+E]
		}
		for i := range E {
			var p float32
			if prev != nil {
				p = prev[i]
			}
			l := lerp[i]
			if ex != nil {
				l += ex[i]
			}
			d[i] = x[i] + (p-x[i])*l
		}
	}
}

// rwkvLora is up·act(down·x) of the pass's n rows in a (act nil: none),
// written into slot slot of each token's row of p.qkv; p.att holds the
// rank's rows between the two products.
func (s *State) rwkvLora(down, up *ops.Matrix, rank int, a acts, act func(float32) float32, p *pass, slot int) error {
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
	return s.mul(up, s.acts(p.att, rank, n), p.qkv[slot*c.Embd:], rwkvSlots*c.Embd)
}

func sigmoid32(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
func tanh32(x float32) float32    { return float32(math.Tanh(float64(x))) }

// rwkvLayer runs block il of an RWKV model over the pass's residual
// stream in place, carrying the layer's shifted rows and wkv state on.
func (s *State) rwkvLayer(il int, L *Layer, p *pass) error {
	m := s.m
	c := &m.Config
	E, n := c.Embd, p.n
	x := p.x[:n*E]
	src, dst := s.conv.layer(c.recurrentIndex(il), rwkvFloats(c))
	s.e.Phase(phNorm)
	cur := p.tmp[:n*E]
	s.normB(cur, x, L.AttnNorm, L.AttnNormB, n)
	var err error
	if c.RWKV6 {
		err = s.rwkv6TimeMix(L, p, cur, src, dst)
	} else {
		err = s.rwkv7TimeMix(il, L, p, cur, src, dst)
	}
	if err != nil {
		return err
	}
	s.e.Phase(phO)
	if err := s.mul(L.Wo, s.acts(p.att, E, n), p.xn, E); err != nil {
		return err
	}
	ops.Add(x, p.xn[:n*E])
	copy(dst[:E], cur[(n-1)*E:])
	if c.QRWKV {
		// Qwen2's feed-forward for the channel mix.
		s.e.Phase(phNorm)
		s.norm(p.xn, x, L.FFNNorm, n)
		return s.ffn(L, s.acts(p.xn, E, n), p.gu, p.tmp, x, false)
	}

	// The channel mix.
	s.e.Phase(phNorm)
	s.normB(cur, x, L.FFNNorm, L.FFNNormB, n)
	s.rwkvLerp(p.xn, cur, src[E:2*E], L.CMLerpK, nil, n)
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
	if L.CMR != nil {
		// RWKV-6's receptance gates the value, from a mix of its own.
		s.rwkvLerp(p.xn, cur, src[E:2*E], L.CMLerpR, nil, n)
		if err := s.mul(L.CMR, s.acts(p.xn, E, n), p.qkv, E); err != nil {
			return err
		}
		for i, r := range p.qkv[:n*E] {
			p.att[i] *= sigmoid32(r)
		}
	}
	ops.Add(x, p.att[:n*E])
	copy(dst[E:2*E], cur[(n-1)*E:])
	if c.RescaleEvery > 0 && (il+1)%c.RescaleEvery == 0 {
		ops.Scale(x, 0.5) // rescale_every_n_layers: the stream halved after the block
	}
	return nil
}

// rwkvWKV runs a layer's state update over the pass's heads into y (n
// rows of Embd in p.att), from the layer's heads' states in src into
// dst; first is RWKV-6's time_mix_first, nil in RWKV-7 and QRWKV6.
func (s *State) rwkvWKV(p *pass, src, dst, first []float32) []float32 {
	c := &s.m.Config
	E, N, n := c.Embd, c.WKVHead, p.n
	s.e.Phase(phScan)
	y := p.att[:n*E]
	o := c.rwkvShifts() * E
	s.wkv = wkvTask{s: s, n: n, rows: p.qkv, y: y, src: src[o:], dst: dst[o:], first: first}
	if c.QRWKV && c.RWKV6 {
		s.wkv.scale = float32(1 / math.Sqrt(float64(N)))
	}
	s.e.For(E/N, 1, &s.wkv)
	s.wkv = wkvTask{}
	return y
}

// rwkvGroupNorm is the group norm of one token's heads' outputs y: a
// LayerNorm over each head, eps 64e-5, with time_mix_ln's weight and
// bias.
func rwkvGroupNorm(y []float32, L *Layer, N int) {
	for h := 0; h < len(y); h += N {
		ops.LayerNorm(y[h:h+N], y[h:h+N], L.TMLn[h:h+N], L.TMLnB[h:h+N], 64e-5)
	}
}

// wkvTask runs one RWKV layer's state update over a pass, a range of
// heads per work item, each head's state through the tokens in order.
type wkvTask struct {
	s     *State
	n     int
	rows  []float32 // n rows of rwkvSlots×Embd: r, w, k, v, (RWKV-7: kk·a, g, kk, …)
	y     []float32 // n rows of Embd: the heads' outputs
	src   []float32 // the layer's heads' states before the pass
	dst   []float32 // where the pass leaves them (src itself or a free slot)
	first []float32 // RWKV-6's time_mix_first (u); nil: RWKV-7's update
	scale float32   // QRWKV6's receptance scale, 1/√WKVHead: gated linear attention
}

// Do updates heads [lo,hi): the first token from src into dst, the rest
// in place; a new text of the pass starts from the empty state.
func (k *wkvTask) Do(_, lo, hi int) {
	c := &k.s.m.Config
	E, N := c.Embd, c.WKVHead
	W := rwkvSlots * E
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
			slot := func(i int) []float32 { return row[i*E+o : i*E+o+N] }
			y := k.y[t*E+o : t*E+o+N]
			switch {
			case k.first != nil:
				ssm.WKV6Head(st, in, slot(rwR), slot(rwW), slot(rwK), slot(rwV), k.first[o:o+N], y)
			case k.scale != 0:
				ssm.GLAHead(st, in, slot(rwR), slot(rwW), slot(rwK), slot(rwV), k.scale, y)
			default:
				wkv7Head(st, in, slot(rwR), slot(rwW), slot(rwK), slot(rwV), slot(rwKK), slot(rwA), y)
			}
			in = st
		}
	}
}

// rwkvTensors lists the tensors every RWKV block has, as llama.cpp's
// loaders take them, all required: the two LayerNorms with biases, the
// receptance, key, value and output matrices, the group norm, and the
// channel mix's lerp, key and value.
func rwkvTensors(c *Config) []blockTensor {
	e, f := c.Embd, c.FFN
	vec := func(name string, get func(L *Layer) *[]float32) blockTensor { return vecTensor(name, e, get) }
	return append(append(append([]blockTensor{
		vec("attn_norm.weight", func(L *Layer) *[]float32 { return &L.AttnNorm }),
		vec("attn_norm.bias", func(L *Layer) *[]float32 { return &L.AttnNormB }),
		vec("attn_norm_2.weight", func(L *Layer) *[]float32 { return &L.FFNNorm }),
		vec("attn_norm_2.bias", func(L *Layer) *[]float32 { return &L.FFNNormB }),
	}, rwkvProjections(c, e)...), rwkvGroupNormTensors(c)...),
		blockTensor{name: "channel_mix_lerp_k.weight", dims: []int{e, 1, 1}, vec: func(L *Layer) *[]float32 { return &L.CMLerpK }},
		matTensor("channel_mix_key.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Up }),
		matTensor("channel_mix_value.weight", f, e, func(L *Layer) **ops.Matrix { return &L.Down }),
	)
}

// rwkvGroupNormTensors lists the group norm's weight and bias.
func rwkvGroupNormTensors(c *Config) []blockTensor {
	return []blockTensor{
		vecTensor("time_mix_ln.weight", c.Embd, func(L *Layer) *[]float32 { return &L.TMLn }),
		vecTensor("time_mix_ln.bias", c.Embd, func(L *Layer) *[]float32 { return &L.TMLnB }),
	}
}

// qrwkvTensors lists a QRWKV block's tensors around its time mix's own
// (mix) as llama.cpp's rwkv6qwen2 and arwkv7 loaders take them:
// attn_norm (no bias), rwkvProjections' (the key and value kv wide),
// mix, and Qwen2's feed-forward: ffn_norm, ffn_gate, ffn_up, ffn_down.
func qrwkvTensors(c *Config, kv int, mix ...blockTensor) []blockTensor {
	e, f := c.Embd, c.FFN
	return append(append(append([]blockTensor{vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm })},
		rwkvProjections(c, kv)...), mix...),
		vecTensor("ffn_norm.weight", e, func(L *Layer) *[]float32 { return &L.FFNNorm }),
		matTensor("ffn_gate.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Gate }),
		matTensor("ffn_up.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Up }),
		matTensor("ffn_down.weight", f, e, func(L *Layer) **ops.Matrix { return &L.Down }),
	)
}

// rwkvProjections lists the time mix's key and value (kv wide: the
// width, or a QRWKV model's key heads'), receptance and output matrices.
func rwkvProjections(c *Config, kv int) []blockTensor {
	e := c.Embd
	return []blockTensor{
		matTensor("time_mix_key.weight", e, kv, func(L *Layer) **ops.Matrix { return &L.Wk }),
		matTensor("time_mix_value.weight", e, kv, func(L *Layer) **ops.Matrix { return &L.Wv }),
		matTensor("time_mix_receptance.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wq }),
		matTensor("time_mix_output.weight", e, e, func(L *Layer) **ops.Matrix { return &L.Wo }),
	}
}

// rwkvEnds loads what an RWKV model has around its blocks besides the
// final norm's weight and the output: the final norm's bias and the
// embeddings' LayerNorm (token_embd_norm, weight and bias), all required
// as llama.cpp requires them; a QRWKV model has no embeddings' norm, and
// the bias (of its final RMSNorm) only in a QRWKV6 file that has one
// (llama.cpp's arwkv7 loader takes none).
func (l *loader) rwkvEnds(m *Model) (err error) {
	if m.QRWKV && (m.RWKV7 || !l.has("output_norm.bias")) {
		return nil
	}
	if m.OutNormB, err = l.vector("output_norm.bias", m.Embd); err != nil || m.QRWKV {
		return err
	}
	return l.embedLayerNorm(m)
}

// embedLayerNorm loads the embeddings' LayerNorm, token_embd_norm's weight
// and bias, both required (rwkv6, rwkv7, bloom; Arch.EmbedLayerNorm).
func (l *loader) embedLayerNorm(m *Model) (err error) {
	if m.EmbedNorm, err = l.vector("token_embd_norm.weight", m.Embd); err != nil {
		return err
	}
	m.EmbedNormB, err = l.vector("token_embd_norm.bias", m.Embd)
	return err
}

// rwkvRefusals are tensors an RWKV block (prefix p) may hold that
// llama.cpp d32676d77 loads but cannot run: a QRWKV6 (rwkv6qwen2) block's
// time_mix_first turns its graph to RWKV-6's wkv6 and then the group
// norm, whose tensors its rwkv6qwen2 loader never loads.
var rwkvRefusals = []struct {
	name, what string
	applies    func(c *Config) bool
}{
	{"time_mix_first.weight", "time_mix_first (llama.cpp would run wkv6 and the group norm it never loads)",
		func(c *Config) bool { return c.RWKV6 && c.QRWKV }},
}

// refuseRWKV fails, naming the tensor, when block p of an RWKV model
// holds one of rwkvRefusals.
func (l *loader) refuseRWKV(c *Config, p string) error {
	for _, r := range rwkvRefusals {
		if c.rwkv() && r.applies(c) && l.has(p+r.name) {
			return fmt.Errorf("model: tensor %q: %s models with %s are not supported: %w", p+r.name, c.Arch, r.what, ErrUnsupportedArch)
		}
	}
	return nil
}
