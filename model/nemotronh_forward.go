package model

// singleOpLayer runs nemotron_h block il over the pass p in place, as
// llama.cpp's nemotron_h graph: the stream normalised by attn_norm goes
// through the block's one operator — a Mamba-2 layer and ssm_out, the
// ReLU² feed-forward (nemotron_h_moe: the routed experts plus the shared
// one), or unrotated attention and attn_output — whose output joins the
// stream.
func (s *State) singleOpLayer(il int, L *Layer, p *pass) error {
	c, n := &s.m.Config, p.n
	x, a := s.normed(p, L.AttnNorm)
	switch {
	case c.ExpertLayer(il):
		s.e.Phase(phMoE)
		if err := s.experts(il, L, a, a, p.tmp); err != nil {
			return err
		}
		s.e.Phase(phGateUp)
		if err := s.sharedExpert(L, a, p.gu, p.tmp); err != nil {
			return err
		}
		s.e.Phase(phNorm)
		s.addNormed(x, p.tmp, nil, n)
		return nil
	case c.FFNLayer(il):
		return s.ffn(L, a, p.gu, p.tmp, x, false)
	case c.ConvLayer(il):
		if c.Mamba1 { // mamba
			if err := s.mamba1(il, L, a, p); err != nil {
				return err
			}
		} else if err := s.mamba2(il, L, a, p); err != nil {
			return err
		}
		s.e.Phase(phO)
		return s.residual(L.ConvOut, s.acts(p.att, c.SSMInner, n), nil, p.tmp, x, nil)
	}
	if err := s.qkv(il, L, a, p, &s.gp); err != nil {
		return err
	}
	s.e.Phase(phAttention)
	stride := c.Heads*c.HeadDimK + c.HeadsKV*(c.HeadDimK+c.HeadDimV)
	if err := s.attention(il, p.pos0, n, p.qkv, stride, p.att, nil); err != nil {
		return err
	}
	s.e.Phase(phO)
	return s.residual(L.Wo, s.acts(p.att, c.Heads*c.HeadDimV, n), L.Bo, p.tmp, x, nil)
}

// reluSqr replaces each element of x by ReLU(x)², as ggml's relu then
// sqr.
func reluSqr(x []float32) {
	for i, v := range x {
		if v > 0 {
			x[i] = v * v
		} else {
			x[i] = 0
		}
	}
}
