package model

import (
	"math"

	"github.com/lowmem/llm/internal/ssm"
)

// This file is a gated delta-net layer of qwen35 (Qwen 3.5) as llama.cpp's
// qwen35 graph and ggml's ssm_conv and gated_delta_net compute it. Per
// token, attn_qkv makes the convolution's channels — the query (SSMGroups
// key heads of SSMState), the key (the same) and the value (SSMHeads value
// heads of SSMState) — attn_gate makes z (SSMInner), ssm_beta and
// ssm_alpha one number a value head. The channels go through a causal
// depthwise convolution of SSMConv taps (no bias), then SiLU; each key
// head's query and key are L2-normalised (eps the RMS norm's). Value head
// h reads key head h mod SSMGroups (ggml repeats the key heads, it does
// not interleave them) and advances its state (ssm.DeltaHead) with
//
//	β = sigmoid(beta[h]), decay = exp(softplus(alpha[h] + dt_bias[h])·a[h])
//
// a = ssm_a (-exp(A_log), negative), the output scaled by 1/sqrt(SSMState).
// Each head's output is RMS-normalised with ssm_norm's weights, times
// SiLU of its slice of z; ssm_out (the caller's) takes it back to Embd.
// The layer's state — its last SSMConv-1 positions' channels, then the
// value heads' SSMState² floats each — lives in the State's recurrent
// slots as Mamba-2's does (recurrent.go).

// deltaTask runs one delta-net layer's recurrence over a pass, a range of
// value heads per work item.
type deltaTask struct {
	s      *State
	L      *Layer
	n      int
	rows   []float32 // the input products, convolved: q, k, v, z, β, α
	stride int
	y      []float32 // n rows of SSMInner: the heads' outputs
	src    []float32 // the layer's state: value heads × SSMState²
	dst    []float32 // where the pass leaves it (src itself or a free slot)
}

// Do advances value heads [lo,hi) through the pass's tokens in order: the
// first token from src into dst, the rest in place in dst.
func (k *deltaTask) Do(_, lo, hi int) {
	c := &k.s.m.Config
	N, G, H, I := c.SSMState, c.SSMGroups, c.SSMHeads, c.SSMInner
	cw := c.ssmConvWidth()
	scale := 1 / float32(math.Sqrt(float64(N)))
	texts := k.s.texts
	for h := lo; h < hi; h++ {
		kh := h % G
		if c.DeltaBlocks {
			kh = h / (H / G)
		}
		in, st := k.src[h*N*N:(h+1)*N*N], k.dst[h*N*N:(h+1)*N*N]
		for t := range k.n {
			if texts != nil && int(texts[t].from) == t {
				clear(st)
				in = st
			}
			row := k.rows[t*k.stride:]
			q, key := row[kh*N:(kh+1)*N], row[G*N+kh*N:G*N+(kh+1)*N]
			v := row[2*G*N+h*N : 2*G*N+(h+1)*N]
			beta, y := sigmoid(row[cw+I+h]), k.y[t*I+h*N:t*I+(h+1)*N]
			if c.KDA {
				g := row[cw+I+H+h*N : cw+I+H+(h+1)*N]
				kdaDecay(g, k.L.SSMDtB[h*N:(h+1)*N], k.L.SSMA[h])
				ssm.DeltaHeadDiag(st, in, q, key, v, y, g, beta, scale)
			} else {
				g := softplus(row[cw+I+H+h]+k.L.SSMDtB[h]) * k.L.SSMA[h]
				ssm.DeltaHead(st, in, q, key, v, y, float32(math.Exp(float64(g))), beta, scale)
			}
			in = st
		}
	}
}

// deltaUngroup puts one token's delta-net input products row (qwen3next:
// deltaInProj floats) in the order the layer reads them — every key
// head's query, every key head's key, every value head's value, z, then
// β and α of every value head — from llama.cpp's qwen3next layout,
// grouped by key head: ssm_ba's output is, for each key head, the β of
// its SSMHeads/SSMGroups value heads then their α; with qkvz (a layer
// with ssm_in) so is the rest: for each key head its query, its key, its
// value heads' values, then their z. tmp holds a row.
func deltaUngroup(c *Config, row, tmp []float32, qkvz bool) {
	N, G, H, I := c.SSMState, c.SSMGroups, c.SSMHeads, c.SSMInner
	r := H / G // value heads a key head
	cw := c.ssmConvWidth()
	copy(tmp, row)
	if qkvz {
		per := 2*N + 2*r*N // one key head's q, k, v and z
		for g := range G {
			src := tmp[g*per:]
			copy(row[g*N:(g+1)*N], src[:N])
			copy(row[G*N+g*N:G*N+(g+1)*N], src[N:2*N])
			copy(row[2*G*N+g*r*N:2*G*N+(g+1)*r*N], src[2*N:2*N+r*N])
			copy(row[cw+g*r*N:cw+(g+1)*r*N], src[2*N+r*N:per])
		}
	}
	for g := range G {
		src := tmp[cw+I+g*2*r:]
		copy(row[cw+I+g*r:cw+I+(g+1)*r], src[:r])
		copy(row[cw+I+H+g*r:cw+I+H+(g+1)*r], src[r:2*r])
	}
}

// sigmoid is 1/(1+e^-x) in float32.
func sigmoid(x float32) float32 { return 1 / (1 + float32(math.Exp(float64(-x)))) }

// l2Norm scales x to unit length, as ggml's l2_norm: x / max(|x|, eps),
// the sum of squares in float64.
func l2Norm(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	s := 1 / max(float32(math.Sqrt(sum)), eps)
	for i := range x {
		x[i] *= s
	}
}

// deltaNet runs delta-net layer il's input products, convolution,
// recurrence and gated norm of a into p.att (SSMInner floats a token),
// carrying the layer's conv and recurrent state on; ssm_out is the
// caller's.
func (s *State) deltaNet(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	w := c.deltaInProj()
	cw, I, H, N, G := c.ssmConvWidth(), c.SSMInner, c.SSMHeads, c.SSMState, c.SSMGroups
	s.e.Phase(phQKV)
	if c.KDA {
		if err := s.kdaInputs(L, a, p, w); err != nil {
			return err
		}
	} else if err := s.deltaInputs(L, a, p, w); err != nil {
		return err
	}
	s.e.Phase(phConv)
	convRows := (c.SSMConv - 1) * cw
	src, dst := s.conv.layer(c.recurrentIndex(il), recurrentFloats(c))
	s.convolve(ssmConvTask{s: s, n: a.n, rows: p.qkv, stride: w, src: src[:convRows], dst: dst[:convRows], w: L.ConvW, width: cw})
	s.e.Phase(phScan)
	for t := range a.n {
		qk := p.qkv[t*w : t*w+2*G*N]
		for h := range 2 * G {
			l2Norm(qk[h*N:(h+1)*N], c.RMSEps)
		}
	}
	s.dn = deltaTask{s: s, L: L, n: a.n, rows: p.qkv, stride: w, y: p.att, src: src[convRows:], dst: dst[convRows:]}
	if a.n*H >= ssmParallelMin {
		s.e.For(H, 1, &s.dn)
	} else {
		s.dn.Do(0, 0, H)
	}
	s.dn = deltaTask{}
	// RMSNorm of each head's output, times SiLU(z) (KDA: sigmoid of the
	// gate).
	for t := range a.n {
		z := p.qkv[t*w+cw : t*w+cw+I]
		y := p.att[t*I : (t+1)*I]
		headNorm(y, L.SSMNorm, N, c.RMSEps)
		if c.KDA {
			kdaGate(y, z)
			continue
		}
		s.act(z, y)
		copy(y, z)
	}
	return nil
}

// deltaInputs computes a gated delta-net layer's input products of a into
// p.qkv's rows (w floats), in the order the layer reads them.
func (s *State) deltaInputs(L *Layer, a acts, p *pass, w int) error {
	c := &s.m.Config
	cw, I, H := c.ssmConvWidth(), c.SSMInner, c.SSMHeads
	// qwen3next's ssm_in (no attn_gate: the channels and z of each key
	// head together) and ssm_ba (no ssm_alpha: β and α of each key head
	// together) make their outputs in one product each.
	ps := s.gp[:0]
	ps = append(ps, projection{w: L.ConvIn})
	if L.WZ != nil {
		ps = append(ps, projection{w: L.WZ, off: cw})
	}
	ps = append(ps, projection{w: L.WBeta, off: cw + I})
	if L.WAlpha != nil {
		ps = append(ps, projection{w: L.WAlpha, off: cw + I + H})
	}
	err := s.mulShared(a, ps, p.qkv, w)
	s.gp = [maxShared]projection{}
	if err != nil {
		return err
	}
	if c.DeltaBlocks {
		for t := range a.n {
			deltaUngroup(c, p.qkv[t*w:(t+1)*w], p.row, L.WZ == nil)
		}
	}
	return nil
}

// gatedQKVWidth is the floats a token's attn_q (each head's query, then
// its gate), attn_k and attn_v outputs take side by side.
func gatedQKVWidth(c *Config) int {
	return 2*c.Heads*c.HeadDimK + c.HeadsKV*c.HeadDimK + c.HeadsKV*c.HeadDimV
}

// gatedQKV computes the projections ps (attn_q, attn_k, attn_v) of a in
// one dispatch into p.gu, gatedQKVWidth floats a token, and copies each
// head's query, and the keys and values, into p.qkv's rows (stride floats
// each) where attention reads them; the gates stay in p.gu for gateHeads.
func (s *State) gatedQKV(ps []projection, a acts, p *pass, stride int) error {
	c := &s.m.Config
	hd, qDim := c.HeadDimK, c.Heads*c.HeadDimK
	w := gatedQKVWidth(c)
	for i := 1; i < len(ps); i++ {
		ps[i].off += qDim // past the gates
	}
	if err := s.mulShared(a, ps, p.gu, w); err != nil {
		return err
	}
	for t := range a.n {
		from, to := p.gu[t*w:(t+1)*w], p.qkv[t*stride:(t+1)*stride]
		for h := range c.Heads {
			copy(to[h*hd:(h+1)*hd], from[2*h*hd:(2*h+1)*hd])
		}
		copy(to[qDim:], from[2*qDim:])
	}
	return nil
}

// gateHeads multiplies each head's attention output in att by the sigmoid
// of its gate, which gatedQKV left in gu.
func gateHeads(att, gu []float32, n int, c *Config) {
	hd, heads, w := c.HeadDimV, c.Heads, gatedQKVWidth(c)
	for t := range n {
		o, g := att[t*heads*hd:(t+1)*heads*hd], gu[t*w:(t+1)*w]
		for h := range heads {
			for i := range hd {
				o[h*hd+i] *= sigmoid(g[(2*h+1)*hd+i])
			}
		}
	}
}
