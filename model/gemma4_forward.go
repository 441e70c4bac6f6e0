package model

import "github.com/lowmem/llm/internal/ops"

// gemma4Blocks runs Gemma 4's blocks over the pass p begun by begin (the
// scaled token embeddings in p.x), as llama.cpp's gemma4 graph: the
// per-layer inputs when the model has them, then each block. It returns
// the residual stream and a scratch buffer, as blocks does.
func (s *State) gemma4Blocks(tokens []int32, p *pass) (x, xn []float32, err error) {
	c := &s.m.Config
	if c.PerLayerEmbd > 0 {
		if err := s.perLayerInputs(tokens, s.acts(p.x, c.Embd, p.n), &p.alt); err != nil {
			return nil, nil, err
		}
	}
	if err := s.forLayers(func(il int, L *Layer) error { return s.gemma4Layer(il, L, p) }); err != nil {
		return nil, nil, err
	}
	return p.x, p.xn, nil
}

// gemma4Layer runs Gemma 4 block il over the pass's residual stream in
// place: attention with post-norm, the feed-forward (dense, or dense and
// experts: gemma4FFN) with post-norm, the
// per-layer input's term, then the layer's output scale.
func (s *State) gemma4Layer(il int, L *Layer, p *pass) error {
	c := &s.m.Config
	n, E, H := p.n, c.Embd, c.Heads
	x, a := s.normed(p, L.AttnNorm)
	if err := s.gemma4QKV(il, L, a, p); err != nil {
		return err
	}
	s.e.Phase(phAttention)
	stride := (c.Heads + 2*c.HeadsKV) * c.HeadDimK
	if err := s.attention(il, p.pos0, n, p.qkv, stride, p.att, nil); err != nil {
		return err
	}
	d := c.LayerHeadDim(il)
	packRows(p.att, n, H*d, H*c.HeadDimV)
	s.e.Phase(phO)
	if err := s.residual(L.Wo, s.acts(p.att, H*d, n), nil, p.tmp, x, L.PostAttnNorm); err != nil {
		return err
	}
	if err := s.gemma4FFN(il, L, p); err != nil {
		return err
	}
	if c.PerLayerEmbd > 0 {
		if err := s.perLayerInput(il, L, x, p.tmp, &p.alt, n); err != nil {
			return err
		}
		ops.Add(x, p.tmp[:n*E])
	}
	if L.OutScale != nil {
		ops.Scale(x, L.OutScale[0])
	}
	return nil
}

// gemma4QKV computes block il's queries (and, in a layer that keeps its
// KV, keys and values: the keys again when the block has no attn_v) at
// the layer's own head size and KV heads, which its KV cache layer holds
// (KVConfig's Geometry), and normalises and rotates them with the layer's
// kind of RoPE. Each token's row keeps room for the widest layer: the
// queries, keys and values of a narrower one sit at the start of theirs.
func (s *State) gemma4QKV(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	H, D, HKV := c.Heads, c.HeadDimK, c.HeadsKV
	d, hkv := c.LayerHeadDim(il), c.LayerHeadsKV(il)
	qDim, kDim := H*D, HKV*D
	stride := qDim + 2*kDim
	own := c.OwnsKV(il)
	s.e.Phase(phQKV)
	s.gp = [maxShared]projection{{w: L.Wq}, {w: L.Wk, off: qDim}, {w: L.Wv, off: qDim + kDim}}
	np := 1
	switch {
	case own && L.Wv != nil:
		np = 3
	case own:
		np = 2
	}
	if err := s.mulShared(a, s.gp[:np], p.qkv, stride); err != nil {
		return err
	}
	s.e.Phase(phRope)
	rope, ang := &s.rope, p.cs
	if c.WindowedLayer(il) {
		rope, ang = &s.ropeSWA, p.csSWA
	}
	for t := range p.n {
		row := p.qkv[t*stride : (t+1)*stride]
		at := c.angles(ang, t)
		qt := row[:H*d]
		headNorm(qt, L.QNorm, d, c.RMSEps)
		rope.Apply(qt, H, d, at)
		if !own {
			continue
		}
		kt, vt := row[qDim:qDim+hkv*d], row[qDim+kDim:qDim+kDim+hkv*d]
		if L.Wv == nil {
			copy(vt, kt)
		}
		headNorm(kt, L.KNorm, d, c.RMSEps)
		headNorm(vt, nil, d, c.RMSEps)
		rope.Apply(kt, hkv, d, at)
	}
	return nil
}

// packRows packs n rows of w floats, each at the start of a stride of
// stride floats, into n rows of w floats at the start of x.
func packRows(x []float32, n, w, stride int) {
	if w == stride {
		return
	}
	for t := 1; t < n; t++ {
		copy(x[t*w:(t+1)*w], x[t*stride:t*stride+w])
	}
}
