package model

import (
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// This file is RWKV-6 ("Finch") as llama.cpp's rwkv6 graph
// (build_rwkv6_time_mix, build_rwkv6_channel_mix) and ggml's rwkv_wkv6
// run it, on what it shares with RWKV-7 (rwkv.go).
//
// The time mix's token shift is data-dependent: a first mix by
// time_mix_lerp_x goes through time_mix_w1 (Embd → 5×time_mix_extra_dim)
// and tanh, and each fifth of that through its own matrix of time_mix_w2
// ([extra, Embd, 5]) gives m_b; the five mixes (w, k, v, r, g in
// time_mix_lerp_fused's order) then move each row toward the previous
// one by lerp_b + m_b. From them: r, k and v (full matrices), the gate
// g = SiLU(time_mix_gate·x_g) and the decay w = exp(-exp(time_mix_decay +
// decay_w2·tanh(decay_w1·x_w))). The state S of each head (WKVHead²
// floats, S[i][j]: key i, value j, as ggml's rwkv_wkv6 lays it out)
// takes each token with time_mix_first's bonus u:
//
//	y[j]    = Σ_i r[i]·(u[i]·k[i]·v[j] + S[i][j])
//	S[i][j] = S[i][j]·w[i] + k[i]·v[j]
//
// y goes through the group norm, is multiplied by g and goes through
// time_mix_output. The channel mix is σ(receptance(x_r))·value(ReLU(key(x_k))²)
// of its two mixes (channel_mix_lerp_k, channel_mix_lerp_r). With
// rescale_every_n_layers = N, the residual stream is halved after every
// N-th block (the converter divides those blocks' output and value
// matrices to match).

// rwkv6Mixes is the qkv slot each of the five data-dependent mixes
// (time_mix_lerp_fused's w, k, v, r, g) and its projection take.
var rwkv6Mixes = [5]int{rwW, rwK, rwV, rwR, rwG}

// rwkv6TimeMix runs an RWKV-6 layer's time mix of the normalised rows
// cur, leaving its output (before time_mix_output) in p.att.
func (s *State) rwkv6TimeMix(L *Layer, p *pass, cur, src, dst []float32) error {
	c := &s.m.Config
	E, n, D := c.Embd, p.n, c.LoRAMix
	W := rwkvSlots * E
	s.e.Phase(phQKV)
	s.rwkvLerp(p.xn, cur, src[:E], L.TMLerpX, nil, n)
	if err := s.mul(L.TMMix1, s.acts(p.xn, E, n), p.att, 5*D); err != nil {
		return err
	}
	for i, v := range p.att[:n*5*D] {
		p.att[i] = tanh32(v)
	}
	for b, slot := range rwkv6Mixes {
		// m_b: the b-th fifth of each token's row through the b-th of
		// time_mix_w2's matrices, into the slot its mix takes.
		for t := range n {
			copy(p.xn[t*D:(t+1)*D], p.att[t*5*D+b*D:t*5*D+(b+1)*D])
		}
		one := [1]projection{{w: L.TMMix2, row0: b * E, rows: E}}
		if err := s.mulShared(s.acts(p.xn, D, n), one[:], p.qkv[slot*E:], W); err != nil {
			return err
		}
	}
	lerp := func(b int) acts {
		slot := rwkv6Mixes[b]
		s.rwkvLerp(p.xn, cur, src[:E], L.TMLerp[b*E:(b+1)*E], p.qkv[slot*E:], n)
		return s.acts(p.xn, E, n)
	}
	for b, w := range [5]*ops.Matrix{1: L.Wk, 2: L.Wv, 3: L.Wq, 4: L.TMGate} {
		if w != nil {
			if err := s.mul(w, lerp(b), p.qkv[rwkv6Mixes[b]*E:], W); err != nil {
				return err
			}
		}
	}
	if c.QRWKV {
		s.qrwkvInputs(L, p)
	}
	// The decay's pair last: its rank's rows take p.att, which held the
	// mixes' tanh rows until now.
	if err := s.rwkvLora(L.TMW1, L.TMW2, c.LoRADecay, lerp(0), tanh32, p, rwW); err != nil {
		return err
	}
	for t := range n {
		row := p.qkv[t*W : (t+1)*W]
		w, g := row[rwW*E:(rwW+1)*E], row[rwG*E:(rwG+1)*E]
		for i := range E {
			w[i] = float32(math.Exp(-math.Exp(float64(w[i] + L.TMW0[i]))))
		}
		if c.QRWKV {
			k := row[rwK*E : (rwK+1)*E]
			for i := range E {
				g[i] = sigmoid32(g[i])
				k[i] -= k[i] * w[i]
			}
			continue
		}
		for i := range E {
			g[i] *= sigmoid32(g[i]) // SiLU
		}
	}
	y := s.rwkvWKV(p, src, dst, L.TMFirst)
	for t := range n {
		g := p.qkv[t*W+rwG*E : t*W+(rwG+1)*E]
		yt := y[t*E : (t+1)*E]
		if !c.QRWKV {
			rwkvGroupNorm(yt, L, c.WKVHead)
		}
		for i := range yt {
			yt[i] *= g[i]
		}
	}
	return nil
}

// qrwkvInputs adds a QRWKV layer's optional receptance, key and value
// biases and repeats its WKVHeadsKV key and value heads over the heads,
// head h taking head h/(heads/WKVHeadsKV) as llama.cpp's ggml_repeat
// lays them out, in place in each token's slots.
func (s *State) qrwkvInputs(L *Layer, p *pass) {
	c := &s.m.Config
	E, N := c.Embd, c.WKVHead
	W := rwkvSlots * E
	group := E / N / c.WKVHeadsKV
	for t := range p.n {
		row := p.qkv[t*W : (t+1)*W]
		for _, b := range [3]struct {
			slot int
			bias []float32
		}{{rwR, L.Bq}, {rwK, L.Bk}, {rwV, L.Bv}} {
			if b.bias != nil {
				ops.Add(row[b.slot*E:b.slot*E+len(b.bias)], b.bias)
			}
		}
		if group == 1 {
			continue
		}
		for _, slot := range [2]int{rwK, rwV} {
			x := row[slot*E : slot*E+E]
			// From the last head down: a head's source is never a head
			// already written.
			for h := E/N - 1; h >= 0; h-- {
				copy(x[h*N:(h+1)*N], x[h/group*N:(h/group+1)*N])
			}
		}
	}
}

// rwkv6Hparams: RWKV-6 as llama.cpp loads it: rwkvHparams' keys, the
// data-dependent mix's width time_mix_extra_dim and the decay's
// time_decay_extra_dim, both required, and rescale_every_n_layers
// (default 0: never).
func rwkv6Hparams(c *Config, m *meta) {
	c.RWKV6 = true
	rwkvHparams(c, m, 2, rwkv6Dims(c))
	c.RescaleEvery = m.num("rescale_every_n_layers", maxCount, 0, false)
}

// rwkv6Dims is RWKV-6's extra dims, the data-dependent mix's and the
// decay's.
func rwkv6Dims(c *Config) []rwkvDim {
	return []rwkvDim{{"time_mix_extra_dim", &c.LoRAMix}, {"time_decay_extra_dim", &c.LoRADecay}}
}

// rwkv6Qwen2Hparams: QRWKV6 (rwkv6qwen2) as llama.cpp loads it:
// qrwkvHparams' keys with RWKV-6's extra dims, and
// attention.head_count_kv (0 or absent: one a head; else dividing the
// heads, Embd/wkv.head_size). rescale_every_n_layers, which
// llama.cpp reads but its graph never applies, is not read.
func rwkv6Qwen2Hparams(c *Config, m *meta) {
	c.RWKV6 = true
	qrwkvHparams(c, m, rwkv6Dims(c))
	c.WKVHeadsKV = m.num("attention.head_count_kv", maxCount, 0, false)
	if m.err != nil {
		return
	}
	heads := c.Embd / c.WKVHead
	if c.WKVHeadsKV == 0 {
		c.WKVHeadsKV = heads
	}
	if heads%c.WKVHeadsKV != 0 {
		m.fail("%s = %d does not divide the %d heads of %s", m.key("attention.head_count_kv"), c.WKVHeadsKV, heads, m.key("wkv.head_size"))
	}
}

// qrwkvHparams reads what a QRWKV model's header has beyond its time
// mix's own: rwkvHparams' keys with token_shift_count 1 (the
// converters'; llama.cpp's graphs assert it) and dims, and
// attention.layer_norm_rms_epsilon (default 0) for its RMSNorms.
func qrwkvHparams(c *Config, m *meta, dims []rwkvDim) {
	c.QRWKV = true
	rwkvHparams(c, m, 1, dims)
	c.LayerNorm = false
	c.RMSEps = m.real("attention.layer_norm_rms_epsilon", 0)
	if m.err == nil && !(c.RMSEps >= 0 && c.RMSEps < 1) {
		m.fail("%s = %v, want a number in [0, 1)", m.key("attention.layer_norm_rms_epsilon"), c.RMSEps)
	}
}

// rwkv6Tensors lists an RWKV-6 block's tensors as llama.cpp's loader
// takes them, all required: rwkvTensors', rwkv6MixTensors',
// time_mix_first ([WKVHead, Embd/WKVHead]), and the channel mix's
// receptance and its lerp.
func rwkv6Tensors(c *Config) []blockTensor {
	e := c.Embd
	return append(append(rwkvTensors(c), rwkv6MixTensors(c)...),
		blockTensor{name: "time_mix_first.weight", dims: []int{c.WKVHead, e / c.WKVHead}, vec: func(L *Layer) *[]float32 { return &L.TMFirst }},
		blockTensor{name: "channel_mix_lerp_r.weight", dims: []int{e, 1, 1}, vec: func(L *Layer) *[]float32 { return &L.CMLerpR }},
		matTensor("channel_mix_receptance.weight", e, e, func(L *Layer) **ops.Matrix { return &L.CMR }),
	)
}

// rwkv6LerpParts are the five lerps ([Embd, 1, 1] each) an RWKV-6 file
// converted before llama.cpp fused them holds in place of
// time_mix_lerp_fused, in its order.
var rwkv6LerpParts = []string{"time_mix_lerp_w.weight", "time_mix_lerp_k.weight", "time_mix_lerp_v.weight",
	"time_mix_lerp_r.weight", "time_mix_lerp_g.weight"}

// rwkv6MixTensors lists the time mix's tensors RWKV-6 and QRWKV6 have
// beyond rwkvProjections', all required: the data-dependent mix's pair
// (time_mix_w2 a stack of five matrices), lerp_x and the fused mixes
// ([Embd, 1, 1, 5]; an rwkv6 file may hold rwkv6LerpParts instead, all
// five, as llama.cpp's rwkv6 loader takes them, its rwkv6qwen2 loader
// not), the decay and its pair, and the gate.
func rwkv6MixTensors(c *Config) []blockTensor {
	e, d := c.Embd, c.LoRAMix
	var parts []string
	if !c.QRWKV {
		parts = rwkv6LerpParts
	}
	return []blockTensor{
		matTensor("time_mix_w1.weight", e, 5*d, func(L *Layer) **ops.Matrix { return &L.TMMix1 }),
		{name: "time_mix_w2.weight", dims: []int{d, e, 5}, mat: func(L *Layer) **ops.Matrix { return &L.TMMix2 }},
		{name: "time_mix_lerp_x.weight", dims: []int{e, 1, 1}, vec: func(L *Layer) *[]float32 { return &L.TMLerpX }},
		{name: "time_mix_lerp_fused.weight", dims: []int{e, 1, 1, 5}, vec: func(L *Layer) *[]float32 { return &L.TMLerp }, parts: parts},
		vecTensor("time_mix_decay.weight", e, func(L *Layer) *[]float32 { return &L.TMW0 }),
		matTensor("time_mix_decay_w1.weight", e, c.LoRADecay, func(L *Layer) **ops.Matrix { return &L.TMW1 }),
		matTensor("time_mix_decay_w2.weight", c.LoRADecay, e, func(L *Layer) **ops.Matrix { return &L.TMW2 }),
		matTensor("time_mix_gate.weight", e, e, func(L *Layer) **ops.Matrix { return &L.TMGate }),
	}
}

// rwkv6Qwen2Tensors lists a QRWKV6 block's tensors as llama.cpp's
// rwkv6qwen2 loader takes them: qrwkvTensors' (the key and value
// WKVHeadsKV heads wide) around rwkv6MixTensors' and the receptance's,
// key's and value's biases when the file has them. A time_mix_first,
// which llama.cpp takes as optional and then cannot run, is refused by
// name (rwkvRefusals).
func rwkv6Qwen2Tensors(c *Config, has func(string) bool) []blockTensor {
	e, kv := c.Embd, c.WKVHeadsKV*c.WKVHead
	mix := rwkv6MixTensors(c)
	for _, b := range []blockTensor{
		vecTensor("time_mix_receptance.bias", e, func(L *Layer) *[]float32 { return &L.Bq }),
		vecTensor("time_mix_key.bias", kv, func(L *Layer) *[]float32 { return &L.Bk }),
		vecTensor("time_mix_value.bias", kv, func(L *Layer) *[]float32 { return &L.Bv }),
	} {
		if has(b.name) {
			mix = append(mix, b)
		}
	}
	return qrwkvTensors(c, kv, mix...)
}
