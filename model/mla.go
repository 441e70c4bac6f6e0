package model

import (
	"github.com/lowmem/llm/arena"
	"github.com/lowmem/llm/internal/ops"
)

// Multi-head latent attention (deepseek2), as llama.cpp runs it absorbed:
// the cache holds, per token and layer, one KV head of the rotated shared
// key and the normalised latent (HeadDimK = RopeDim + KVLoraRank) and the
// latent again as the value (HeadDimV = KVLoraRank). Each head's query is
// its rotated part followed by its unrotated part multiplied by its
// attn_k_b (into the latent's space), so one head's score is exactly
// q_nope·(k_b·latent) + q_pe·k_pe, the score of the decompressed key;
// each head's output, a mix of latents, is multiplied by its attn_v_b,
// which is the mix of the decompressed values. The rotated parts come
// first so that the cache's keys rotate in place on a context shift as
// every other architecture's do (Shift rotates a key's first RopeDim).

// mlaScratch is a pass's buffers for multi-head latent attention, from
// the arena.
type mlaScratch struct {
	proj   []float32 // n × (q, or the query's low-rank part; then the compressed kv)
	q      []float32 // n × Heads × HeadDimKMLA, attn_q_b's output (with QLoraRank)
	gather []float32 // n × Heads × max(nope, KVLoraRank): one head's rows after another
	xq     []byte    // gather quantized
	out    []float32 // n × Heads × HeadDimVMLA: attn_v_b's outputs
}

// mlaWidths are the floats a token takes in each mlaScratch buffer.
func mlaWidths(c *Config) (proj, q, gather, out int) {
	nope := c.HeadDimKMLA - c.RopeDim
	kv := c.KVLoraRank + c.RopeDim
	proj = c.Heads*c.HeadDimKMLA + kv
	if c.QLoraRank > 0 {
		proj = c.QLoraRank + kv
		q = c.Heads * c.HeadDimKMLA
	}
	return proj, q, c.Heads * max(nope, c.KVLoraRank), c.Heads * c.HeadDimVMLA
}

// take takes the buffers of a pass of n tokens from ar. A quantized row
// takes at most 4 bytes an element (F32).
func (ms *mlaScratch) take(ar *arena.Arena, c *Config, n int) {
	proj, q, gather, out := mlaWidths(c)
	ms.proj = ar.Float32s(n * proj)
	if q > 0 {
		ms.q = ar.Float32s(n * q)
	}
	ms.gather = ar.Float32s(n * gather)
	ms.xq = ar.Bytes(4 * n * gather)
	ms.out = ar.Float32s(n * out)
}

// mlaScratchBytes is what mlaScratch.take takes from the arena.
func mlaScratchBytes(c *Config, n int) int {
	f := func(m int) int { return roundUp(4*m, allocAlign) }
	proj, q, gather, out := mlaWidths(c)
	b := f(n*proj) + f(n*gather) + f(n*gather) + f(n*out)
	if q > 0 {
		b += f(n * q)
	}
	return b
}

// mlaQKV computes block il's queries, keys and values of a into p.qkv as
// the attention over the latent cache takes them (see above): each head's
// query [rotated q_pe | k_b·q_nope], the key [rotated k_pe | latent] and
// the value [latent], the latent normalised by attn_kv_a_norm.
func (s *State) mlaQKV(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	ms := &s.mla
	n, H, dq, rope, r := p.n, c.Heads, c.HeadDimKMLA, c.RopeDim, c.KVLoraRank
	nope := dq - rope
	qDim := H * c.HeadDimK
	stride := qDim + c.HeadDimK + c.HeadDimV
	pw, _, _, _ := mlaWidths(c)
	s.e.Phase(phQKV)
	first := L.Wq
	if c.QLoraRank > 0 {
		first = L.WqA
	}
	ps := [2]projection{{w: first}, {w: L.WkvA, off: pw - r - rope}}
	if err := s.mulShared(a, ps[:], ms.proj, pw); err != nil {
		return err
	}
	// The key and value: the latent, normalised, and the shared key.
	for t := range n {
		kv := ms.proj[t*pw+pw-r-rope : (t+1)*pw]
		row := p.qkv[t*stride : (t+1)*stride]
		k, v := row[qDim:qDim+c.HeadDimK], row[qDim+c.HeadDimK:]
		ops.RMSNorm(v, kv[:r], L.KVANorm, c.RMSEps)
		copy(k[rope:], v)
		copy(k[:rope], kv[r:])
	}
	q, qs := ms.proj, pw
	if c.QLoraRank > 0 {
		// Pack the low-rank parts (the keys are out of the way now) and
		// normalise them for attn_q_b.
		ql := c.QLoraRank
		for t := range n {
			copy(ms.proj[t*ql:(t+1)*ql], ms.proj[t*pw:t*pw+ql])
			ops.RMSNorm(ms.proj[t*ql:(t+1)*ql], ms.proj[t*ql:(t+1)*ql], L.QANorm, c.RMSEps)
		}
		if err := s.mul(L.Wq, s.acts(ms.proj, ql, n), ms.q, H*dq); err != nil {
			return err
		}
		q, qs = ms.q, H*dq
	}
	// Each head's rotated part goes first in its query; its unrotated
	// parts, head by head, go through attn_k_b.
	for t := range n {
		row := p.qkv[t*stride : t*stride+qDim]
		for h := range H {
			qh := q[t*qs+h*dq : t*qs+(h+1)*dq]
			copy(row[h*c.HeadDimK:h*c.HeadDimK+rope], qh[nope:])
			copy(ms.gather[(h*n+t)*nope:(h*n+t+1)*nope], qh[:nope])
		}
	}
	kb := L.WkB
	if c.MLAJoined {
		kb = L.WkBMade
	}
	if err := s.perHead(kb, ms.gather, nope, r, r, 0, n, p.qkv[rope:], c.HeadDimK, stride); err != nil {
		return err
	}
	if !c.RopeLayer(il) {
		return nil // kimi-linear: the rope parts go unrotated
	}
	s.e.Phase(phRope)
	for t := range n {
		row := p.qkv[t*stride : (t+1)*stride]
		at := p.cs[t*rope : (t+1)*rope]
		s.rope.Apply(row[:qDim], H, c.HeadDimK, at)
		s.rope.Apply(row[qDim:qDim+c.HeadDimK], 1, c.HeadDimK, at)
	}
	return nil
}

// mlaOut multiplies each head's attention output (att: n × Heads ×
// KVLoraRank, a mix of latents) by its attn_v_b into ms.out, the input of
// attn_output, and returns it.
func (s *State) mlaOut(L *Layer, att []float32, n int) (acts, error) {
	c := &s.m.Config
	ms := &s.mla
	H, r, dv := c.Heads, c.KVLoraRank, c.HeadDimVMLA
	for t := range n {
		for h := range H {
			copy(ms.gather[(h*n+t)*r:(h*n+t+1)*r], att[(t*H+h)*r:(t*H+h+1)*r])
		}
	}
	// Head h's rows of attn_v_b, or of an older file's attn_kv_b, after
	// the head's key rows.
	rowStride, rowOff := dv, 0
	if c.MLAJoined {
		nope := c.HeadDimKMLA - c.RopeDim
		rowStride, rowOff = nope+dv, nope
	}
	if err := s.perHead(L.WvB, ms.gather, r, dv, rowStride, rowOff, n, ms.out, dv, H*dv); err != nil {
		return acts{}, err
	}
	return s.acts(ms.out, H*dv, n), nil
}

// perHead multiplies, for each head h, the n rows of cols floats at
// x[h·n·cols:] by head h's band of rows rows of w, which starts at row
// h·rowStride + rowOff, writing token t's outputs at
// out[t·stride + h·headOff:], four heads a dispatch.
func (s *State) perHead(w *ops.Matrix, x []float32, cols, rows, rowStride, rowOff, n int, out []float32, headOff, stride int) error {
	H := s.m.Heads
	ph := s.e.CurrentPhase()
	s.e.Phase(phQuantize)
	xq, err := s.e.Quantize(w.VecType, x, cols, n*H, s.mla.xq)
	if ph != nil {
		s.e.Phase(ph)
	}
	if err != nil {
		return err
	}
	rb := w.XRowBytes
	var parts [4]ops.Part
	for h0 := 0; h0 < H; h0 += len(parts) {
		np := min(len(parts), H-h0)
		for i := range np {
			h := h0 + i
			parts[i] = ops.Part{M: w, Row0: h*rowStride + rowOff, Rows: rows, X: xq[h*n*rb : (h+1)*n*rb], Out: out[h*headOff:], Stride: stride}
		}
		s.e.MatMulParts(parts[:np], n)
	}
	return nil
}
