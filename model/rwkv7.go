package model

import (
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// This file is RWKV-7 ("Goose") as llama.cpp's rwkv7 graph
// (build_rwkv7_time_mix, build_rwkv7_channel_mix) and ggml's rwkv_wkv7
// run it, on what it shares with RWKV-6 (rwkv.go).
//
// The time mix makes six token-shift mixes (time_mix_lerp_fused: r, w,
// k, v, a, g) and from them the receptance r, key k and value v (full
// matrices), and through low-rank pairs: the decay w = exp(-0.606531·σ(w0
// + w2·tanh(w1·x))), the in-context learning rate a = σ(a0 + a2·(a1·x)),
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
// y goes through the group norm, gains v·Σ_j(k·r·r_k)[j] per head, is
// multiplied by g and goes through time_mix_output. The channel mix is
// value(ReLU(key(x))²) of its one mix (channel_mix_lerp_k).
//
// ARWKV-7 (arwkv7, Config.QRWKV) runs this time mix in a Qwen2 body as
// llama.cpp's arwkv7 graph does: RMSNorms, one token shift, Qwen2's
// SwiGLU feed-forward for the channel mix (rwkvLayer), and, block by
// block, the gate (its pair and the sixth mix) and the group norm only
// when the block has their tensors.

// rwkv7TimeMix runs an RWKV-7 layer's time mix of the normalised rows
// cur, leaving its output (before time_mix_output) in p.att.
func (s *State) rwkv7TimeMix(il int, L *Layer, p *pass, cur, src, dst []float32) error {
	c := &s.m.Config
	E, n := c.Embd, p.n
	W := rwkvSlots * E
	var mixed acts
	lerp := func(b int) acts {
		s.rwkvLerp(p.xn, cur, src[:E], L.TMLerp[b*E:(b+1)*E], nil, n)
		return s.acts(p.xn, E, n)
	}
	s.e.Phase(phQKV)
	if err := s.mul(L.Wq, lerp(rwR), p.qkv[rwR*E:], W); err != nil {
		return err
	}
	if err := s.rwkvLora(L.TMW1, L.TMW2, c.LoRADecay, lerp(rwW), tanh32, p, rwW); err != nil {
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
		if err := s.rwkvLora(L.TMV1, L.TMV2, c.LoRAValue, mixed, nil, p, rwG); err != nil {
			return err
		}
	}
	if err := s.rwkvLora(L.TMA1, L.TMA2, c.LoRAICLR, lerp(rwA), nil, p, rwA); err != nil {
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
	gated := L.TMG1 != nil // every RWKV-7 block; an ARWKV-7 block with the gate's pair
	if gated {
		if err := s.rwkvLora(L.TMG1, L.TMG2, c.LoRAGate, lerp(rwG), sigmoid32, p, rwG); err != nil {
			return err
		}
	}
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
	y := s.rwkvWKV(p, src, dst, nil)
	for t := range n {
		row := p.qkv[t*W : (t+1)*W]
		r, k, v, g := row[rwR*E:(rwR+1)*E], row[rwK*E:(rwK+1)*E], row[rwV*E:(rwV+1)*E], row[rwG*E:(rwG+1)*E]
		yt := y[t*E : (t+1)*E]
		if L.TMLn != nil {
			rwkvGroupNorm(yt, L, N)
		}
		for h := 0; h < E; h += N {
			var rk float32
			for j := h; j < h+N; j++ {
				rk += k[j] * r[j] * L.TMRK[j]
			}
			for i := h; i < h+N; i++ {
				yt[i] += v[i] * rk
			}
		}
		if gated {
			for i := range yt {
				yt[i] *= g[i]
			}
		}
	}
	return nil
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

// rwkv7Hparams: RWKV-7 as llama.cpp loads it: rwkvHparams' keys and the
// low-rank pairs' ranks attention.decay_lora_rank,
// attention.iclr_lora_rank, attention.value_residual_mix_lora_rank and
// attention.gate_lora_rank, all required (llama.cpp reads the gate's as
// optional, but then asks for its tensors at a rank of 0, which no file
// has) and at most the width, which the pass's scratch holds them in.
func rwkv7Hparams(c *Config, m *meta) {
	c.RWKV7 = true
	rwkvHparams(c, m, 2, append(rwkv7Dims(c), rwkvDim{"attention.gate_lora_rank", &c.LoRAGate}))
}

// rwkv7Dims is RWKV-7's ranks every file states: the decay's, the
// in-context rate's and the value mix's.
func rwkv7Dims(c *Config) []rwkvDim {
	return []rwkvDim{{"attention.decay_lora_rank", &c.LoRADecay}, {"attention.iclr_lora_rank", &c.LoRAICLR},
		{"attention.value_residual_mix_lora_rank", &c.LoRAValue}}
}

// arwkv7Hparams: ARWKV-7 (arwkv7) as llama.cpp loads it: qrwkvHparams'
// keys with rwkv7Dims, and attention.gate_lora_rank optional (the
// converter writes 0 for a model without the gate), at most the width.
func arwkv7Hparams(c *Config, m *meta) {
	c.RWKV7 = true
	qrwkvHparams(c, m, rwkv7Dims(c))
	c.LoRAGate = m.count("attention.gate_lora_rank", c.Embd)
}

// An rwkvDim is a required key of an RWKV model's low-rank widths and
// the Config field it fills.
type rwkvDim struct {
	key string
	dst *int
}

// rwkvHparams reads what RWKV-6 and RWKV-7 read alike, as llama.cpp
// loads them: wkv.head_size (required) must divide embedding_length;
// feed_forward_length is the channel mix's width; token_shift_count must
// be shifts (default 2), as llama.cpp's graphs assert;
// attention.layer_norm_epsilon defaults to 0; each of dims is required
// and from 1 to the width. No layer attends: every layer is recurrent,
// and the KV cache keeps mamba's placeholder layer (mambaHparams).
func rwkvHparams(c *Config, m *meta, shifts int, dims []rwkvDim) {
	// Every norm is a LayerNorm with a bias, as Config.LayerNorm's path
	// runs them (State.normB), the final one too.
	c.NoRopeEvery, c.LayerNorm = 1, true
	c.HeadDimK, c.HeadDimV, c.RopeDim = placeholderHeadDim, placeholderHeadDim, placeholderHeadDim
	c.FFN = m.num("feed_forward_length", maxCount, -1, false)
	c.NormEps = m.real("attention.layer_norm_epsilon", 0)
	c.WKVHead = m.num("wkv.head_size", maxHeadDim, -1, false)
	for _, d := range dims {
		*d.dst = m.num(d.key, maxCount, -1, false)
	}
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
	case shift != shifts:
		m.fail("%s = %d, want %d (a row for each mix that shifts)", k("token_shift_count"), shift, shifts)
	case c.FFN < 1:
		m.fail("%s = %d, want at least 1", k("feed_forward_length"), c.FFN)
	}
	for _, d := range dims {
		if m.err == nil && (*d.dst < 1 || *d.dst > c.Embd) {
			m.fail("%s = %d, want 1 to %s = %d", k(d.key), *d.dst, k("embedding_length"), c.Embd)
		}
	}
	c.ConvLayers = make([]bool, c.Layers)
	for il := range c.ConvLayers {
		c.ConvLayers[il] = true
	}
}

// rwkv7Tensors lists an RWKV-7 block's tensors as llama.cpp's loader
// takes them, all required: rwkvTensors' and rwkv7MixTensors' with the
// gate and six mixes.
func rwkv7Tensors(c *Config, il int) []blockTensor {
	return append(rwkvTensors(c), rwkv7MixTensors(c, il, true, 6)...)
}

// arwkv7Tensors lists an ARWKV-7 block's tensors as llama.cpp's arwkv7
// loader takes them, dims giving the file's dims of each (nil: absent):
// qrwkvTensors' around rwkv7MixTensors', gated when the block has either
// of the gate's pair (then both at LoRAGate and six mixes), else five
// mixes or six (the sixth unread, as llama.cpp's graph leaves it), and
// the group norm's weight and bias when it has either. llama.cpp would
// take one of a pair alone and run without it; this loader asks for the
// other instead of leaving a tensor of the file unused.
func arwkv7Tensors(c *Config, il int, dims func(name string) []int64) []blockTensor {
	has := func(name string) bool { return dims(name) != nil }
	gated := has("time_mix_g1.weight") || has("time_mix_g2.weight")
	lerps := 5
	if d := dims("time_mix_lerp_fused.weight"); gated || len(d) == 4 && d[3] == 6 {
		lerps = 6
	}
	mix := rwkv7MixTensors(c, il, gated, lerps)
	if has("time_mix_ln.weight") || has("time_mix_ln.bias") {
		mix = append(mix, rwkvGroupNormTensors(c)...)
	}
	return qrwkvTensors(c, c.Embd, mix...)
}

// rwkv7MixTensors lists RWKV-7's time mix's own tensors: the low-rank
// pairs and their biases (layer 0's value pair, which its graph never
// runs, at the in-context rate's rank; the gate's when gated), the fused
// mixes ([Embd, 1, 1, lerps]), k_k, k_a and r_k.
func rwkv7MixTensors(c *Config, il int, gated bool, lerps int) []blockTensor {
	e := c.Embd
	vr := c.LoRAValue
	if il == 0 {
		vr = c.LoRAICLR
	}
	vec := func(name string, get func(L *Layer) *[]float32) blockTensor { return vecTensor(name, e, get) }
	bts := []blockTensor{
		vec("time_mix_w0.weight", func(L *Layer) *[]float32 { return &L.TMW0 }),
		matTensor("time_mix_w1.weight", e, c.LoRADecay, func(L *Layer) **ops.Matrix { return &L.TMW1 }),
		matTensor("time_mix_w2.weight", c.LoRADecay, e, func(L *Layer) **ops.Matrix { return &L.TMW2 }),
		vec("time_mix_a0.weight", func(L *Layer) *[]float32 { return &L.TMA0 }),
		matTensor("time_mix_a1.weight", e, c.LoRAICLR, func(L *Layer) **ops.Matrix { return &L.TMA1 }),
		matTensor("time_mix_a2.weight", c.LoRAICLR, e, func(L *Layer) **ops.Matrix { return &L.TMA2 }),
		vec("time_mix_v0.weight", func(L *Layer) *[]float32 { return &L.TMV0 }),
		matTensor("time_mix_v1.weight", e, vr, func(L *Layer) **ops.Matrix { return &L.TMV1 }),
		matTensor("time_mix_v2.weight", vr, e, func(L *Layer) **ops.Matrix { return &L.TMV2 }),
	}
	if gated {
		bts = append(bts,
			matTensor("time_mix_g1.weight", e, c.LoRAGate, func(L *Layer) **ops.Matrix { return &L.TMG1 }),
			matTensor("time_mix_g2.weight", c.LoRAGate, e, func(L *Layer) **ops.Matrix { return &L.TMG2 }))
	}
	return append(bts,
		blockTensor{name: "time_mix_lerp_fused.weight", dims: []int{e, 1, 1, lerps}, vec: func(L *Layer) *[]float32 { return &L.TMLerp }},
		vec("time_mix_k_k.weight", func(L *Layer) *[]float32 { return &L.TMKK }),
		vec("time_mix_k_a.weight", func(L *Layer) *[]float32 { return &L.TMKA }),
		vec("time_mix_r_k.weight", func(L *Layer) *[]float32 { return &L.TMRK }),
	)
}
