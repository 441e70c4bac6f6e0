package model

import (
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// gemma4Experts reads a Gemma 4 file's experts (26B-A4B), as llama.cpp's
// gemma4 loader and graph take them: expert_count 0 or absent is a dense
// model; above 0, every layer runs expert_used_count of expert_count
// experts of expert_feed_forward_length (required: llama.cpp sizes the
// expert tensors by it) beside its dense feed-forward, chosen by the
// softmax of the router's logits, their weights renormalised to sum to 1.
func (m *meta) gemma4Experts(c *Config) {
	if m.index("expert_count", 0) == 0 {
		if m.err == nil && m.index("expert_used_count", 0) != 0 {
			m.fail("%s is set, but %s is 0", m.key("expert_used_count"), m.key("expert_count"))
		}
		return
	}
	m.experts(c, false)
	c.ExpertGating = GatingSoftmax
	c.ExpertNorm = true
}

// gemma4ExpertTensors lists the tensors a Gemma 4 expert layer has beside
// the dense block's, as llama.cpp's gemma4 loader takes them: the router
// (ffn_gate_inp) and its input scale (ffn_gate_inp.scale), the norms
// before the experts and after each branch, the experts' gate and up
// (fused in ffn_gate_up_exps when the block has it, as the converter
// writes them; ffn_gate_exps and ffn_up_exps otherwise), their down
// matrices and, when present, each expert's output scale
// (ffn_down_exps.scale, Gemma 4's per_expert_scale).
func gemma4ExpertTensors(c *Config, has func(name string) bool) []blockTensor {
	e, f, n := c.Embd, c.ExpertFFN, c.Experts
	ts := []blockTensor{
		matTensor("ffn_gate_inp.weight", e, n, func(L *Layer) **ops.Matrix { return &L.Router }),
		vecTensor("ffn_gate_inp.scale", e, func(L *Layer) *[]float32 { return &L.RouterScale }),
		vecTensor("pre_ffw_norm_2.weight", e, func(L *Layer) *[]float32 { return &L.PreExpNorm }),
		vecTensor("post_ffw_norm_1.weight", e, func(L *Layer) *[]float32 { return &L.PostDenseNorm }),
		vecTensor("post_ffw_norm_2.weight", e, func(L *Layer) *[]float32 { return &L.PostExpNorm }),
	}
	if has("ffn_gate_up_exps.weight") {
		ts = append(ts, blockTensor{name: "ffn_gate_up_exps.weight", dims: []int{e, 2 * f, n}, exp: expGateUp})
	} else {
		ts = append(ts,
			blockTensor{name: "ffn_gate_exps.weight", dims: []int{e, f, n}, exp: 1},
			blockTensor{name: "ffn_up_exps.weight", dims: []int{e, f, n}, exp: 2})
	}
	ts = append(ts, blockTensor{name: "ffn_down_exps.weight", dims: []int{f, e, n}, exp: 3})
	if has("ffn_down_exps.scale") {
		ts = append(ts, vecTensor("ffn_down_exps.scale", n, func(L *Layer) *[]float32 { return &L.ExpOutScale }))
	}
	return ts
}

// gemma4FFN runs a Gemma 4 block's feed-forward over the pass's residual
// stream x (the attention's output added) in place. A dense block:
// post_ffw_norm(FFN(ffn_norm(x))) added. An expert block, as llama.cpp's
// gemma4 graph: the dense feed-forward normalised by post_ffw_norm_1;
// the experts of pre_ffw_norm_2(x), routed by x's RMS norm times
// 1/sqrt(Embd) times ffn_gate_inp.scale (the router reads the stream, not
// the experts' input), normalised by post_ffw_norm_2; the two summed,
// normalised by post_ffw_norm and added.
func (s *State) gemma4FFN(il int, L *Layer, p *pass) error {
	c := &s.m.Config
	n, E := p.n, c.Embd
	x, a := s.normed(p, L.FFNNorm)
	if L.Router == nil {
		return s.ffn(L, a, p.gu, p.tmp, x, false)
	}
	// The dense branch into tmp.
	if err := s.gated(a, projection{w: L.Gate}, projection{w: L.Up, off: L.Gate.Rows}, L.Gate.Rows, p.gu, false); err != nil {
		return err
	}
	s.e.Phase(phDown)
	if err := s.mul(L.Down, s.acts(p.gu, L.Gate.Rows, n), p.tmp, E); err != nil {
		return err
	}
	s.e.Phase(phNorm)
	s.norm(p.tmp, p.tmp, L.PostDenseNorm, n)
	// The experts' input in xn, the router's in the expert scratch's
	// rin, which then takes the experts' sum: the router is read first.
	s.norm(p.xn, x, L.PreExpNorm, n)
	rin := s.moe.rin[:n*E]
	inv := 1 / float32(math.Sqrt(float64(E)))
	for t := range n {
		r := rin[t*E : (t+1)*E]
		ops.RMSNorm(r, x[t*E:(t+1)*E], nil, c.RMSEps)
		for i, v := range r {
			r[i] = v * inv * L.RouterScale[i]
		}
	}
	s.e.Phase(phMoE)
	if err := s.experts(il, L, s.acts(p.xn, E, n), s.acts(rin, E, n), rin); err != nil {
		return err
	}
	s.e.Phase(phNorm)
	s.norm(rin, rin, L.PostExpNorm, n)
	ops.Add(p.tmp[:n*E], rin)
	s.addNormed(x, p.tmp, L.PostFFNNorm, n)
	return nil
}
