package model

import (
	"cmp"
	"fmt"

	"github.com/lowmem/llm/internal/ops"
)

// grovemoeHparams: inclusionAI's GroveMoE as llama.cpp's grovemoe graph
// runs it — qwen3moe's block (per-head Q/K RMSNorms before NEOX RoPE
// over whole heads; Q, K and V fused or apart, their biases optional;
// expert_count experts of expert_feed_forward_length, expert_used_count
// a token, chosen by a softmax over all of them and renormalised) and its
// adjugate experts: expert_count / experts_per_group more of
// expert_chunk_feed_forward_length (ffn_{gate,up,down}_chexps), whose
// sum, times expert_group_scale, joins the routed experts'
// (adjugateExperts). The RMS epsilon, the experts' width,
// experts_per_group and expert_group_scale are required, as llama.cpp
// requires them; an expert width of 0 means feed_forward_length /
// expert_used_count, an adjugate width absent or 0 the head size, as
// llama.cpp sizes them then. experts_per_group must divide expert_count
// (llama.cpp would route the last, partial group's tokens past the
// adjugate experts it loads) and leave at least expert_used_count groups
// (llama.cpp asserts: it would sum more adjugate outputs than it
// computed).
func grovemoeHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "expert_feed_forward_length", "experts_per_group", "expert_group_scale")
	if m.err != nil || !m.expertCounts(c) {
		return
	}
	c.ExpertFFN = cmp.Or(m.count("expert_feed_forward_length", maxCount), c.defaultExpertFFN())
	c.ExpertNorm = true
	c.ChunkFFN = cmp.Or(m.count("expert_chunk_feed_forward_length", maxCount), c.HeadDimK)
	c.GroupExperts = m.num("experts_per_group", maxExperts, -1, false)
	c.GroupScale = m.finite("expert_group_scale", 0)
	if m.err == nil && (c.Experts%c.GroupExperts != 0 || c.ExpertsUsed > c.Experts/c.GroupExperts) {
		m.fail("%s = %d: want a divisor of %s = %d leaving at least %s = %d groups", m.key("experts_per_group"), c.GroupExperts,
			m.key("expert_count"), c.Experts, m.key("expert_used_count"), c.ExpertsUsed)
	}
}

// adjugateExperts adds GroveMoE's adjugate experts to the routed
// experts' output out (n rows), as llama.cpp's grovemoe graph runs them,
// from the routing State.experts left in s.moe: token t's slot s takes
// the adjugate expert of its expert's group (the id divided by
// GroupExperts, as ggml divides: times the reciprocal in float32, then
// truncated), weighted by the softmax probability of the expert whose id
// is that group number (llama.cpp gathers the weights with the divided
// ids from all the probabilities), renormalised. Each computes
// down(SiLU(gate·o) ⊙ up·o) of the token's routed output o, not of the
// block's input; their weighted sum, slot by slot, times GroupScale
// (ggml scales the sum, then adds it), joins o. The adjugate experts are bands of rows of the three stacked
// chexps matrices, which stay with the layer (small: ChunkFFN is one
// head's width).
func (s *State) adjugateExperts(L *Layer, out []float32, n int) error {
	c := &s.m.Config
	ms := &s.moe
	k, nx, E := c.ExpertsUsed, c.Experts, c.Embd
	inv := 1 / float32(c.GroupExperts)
	for t := range n {
		p, ids, w := ms.logits[t*nx:(t+1)*nx], ms.ids[t*k:(t+1)*k], ms.wts[t*k:(t+1)*k]
		for slot, e := range ids {
			ids[slot] = int32(float32(e) * inv)
			w[slot] = p[ids[slot]]
		}
		renormalise(w)
	}
	xg, xu, err := s.quantizedPair(s.acts(out, E, n), L.ChGate, L.ChUp)
	if err != nil {
		return err
	}
	if n == 1 {
		err = s.adjugateOne(L, xg, xu)
	} else {
		err = s.adjugateGrouped(L, n, xg, xu)
	}
	if err != nil {
		return err
	}
	s.sumExperts(ms.y, n)
	for i, v := range ms.y[:n*E] {
		out[i] += float32(v * c.GroupScale)
	}
	return nil
}

// adjugateGrouped is adjugateExperts' products for a pass of n tokens
// (rows xg and xu for the gate and up matrices): the (token, slot) pairs
// grouped by adjugate expert, each expert's read once a batch.
func (s *State) adjugateGrouped(L *Layer, n int, xg, xu []byte) error {
	ms := &s.moe
	used := ms.group(n*s.m.ExpertsUsed, s.m.Experts/s.m.GroupExperts)
	// A token may bring two experts of one group, so an expert may have
	// more pairs than there are tokens: batches of at most n keep to the
	// scratch's rows.
	start := int32(0)
	for _, j := range used {
		all := ms.order[start:ms.counts[j]]
		start = ms.counts[j]
		for b := 0; b < len(all); b += n {
			if err := s.adjugateBatch(L, int(j), all[b:min(b+n, len(all))], xg, xu); err != nil {
				return err
			}
		}
	}
	return nil
}

// adjugateOne is adjugateExperts' products for a pass of one token
// (rows xg and xu for the gate and up matrices): every slot's gate-and-up
// pair in as few dispatches as ops.MaxParts allows (with the activation
// when gate and up take one type), then every slot's down projection
// likewise, each into its slot's row of s.moe.ys — two dispatches a
// decode step, as State.expertsOne makes for the routed experts. A
// token's two experts of one group run their adjugate expert twice, as
// llama.cpp's graph does.
func (s *State) adjugateOne(L *Layer, xg, xu []byte) error {
	ms := &s.moe
	F, E := s.m.ChunkFFN, s.m.Embd
	ids := ms.ids[:s.m.ExpertsUsed]
	gated := L.ChGate.VecType == L.ChUp.VecType
	const pairs = ops.MaxParts / 2
	for s0 := 0; s0 < len(ids); s0 += pairs {
		parts := ms.parts[:0]
		for slot := s0; slot < min(len(ids), s0+pairs); slot++ {
			row := int(ids[slot]) * F
			parts = append(parts, ops.Part{M: L.ChGate, Row0: row, Rows: F, X: xg, Out: ms.g[slot*F : (slot+1)*F], Stride: F},
				ops.Part{M: L.ChUp, Row0: row, Rows: F, X: xu, Out: ms.u[slot*F : (slot+1)*F], Stride: F})
		}
		if gated {
			s.e.MatMulGatedParts(parts, 1, s.act)
		} else {
			s.e.MatMulParts(parts, 1)
		}
	}
	if !gated {
		for slot := range ids {
			s.act(ms.g[slot*F:(slot+1)*F], ms.u[slot*F:(slot+1)*F])
		}
	}
	xd, err := s.e.Quantize(L.ChDown.VecType, ms.g[:len(ids)*F], F, len(ids), ms.gather)
	if err != nil {
		return fmt.Errorf("model: quantize activations: %w", err)
	}
	rb := L.ChDown.XRowBytes
	for s0 := 0; s0 < len(ids); s0 += ops.MaxParts {
		parts := ms.parts[:0]
		for slot := s0; slot < min(len(ids), s0+ops.MaxParts); slot++ {
			parts = append(parts, ops.Part{M: L.ChDown, Row0: int(ids[slot]) * E, Rows: E, X: xd[slot*rb : (slot+1)*rb], Out: ms.ys[slot*E : (slot+1)*E], Stride: E})
		}
		s.e.MatMulParts(parts, 1)
	}
	return nil
}

// adjugateBatch runs adjugate expert j on the tokens of pairs, whose
// rows xg and xu hold quantized for its gate and up matrices, and writes
// each pair's output into its row of s.moe.ys.
func (s *State) adjugateBatch(L *Layer, j int, pairs []int32, xg, xu []byte) error {
	ms := &s.moe
	F, E, m := s.m.ChunkFFN, s.m.Embd, len(pairs)
	row := j * F
	gp := ops.Part{M: L.ChGate, Row0: row, Rows: F, X: ms.gatherPairs(xg, L.ChGate.XRowBytes, pairs, s.m.ExpertsUsed), Out: ms.g, Stride: F}
	up := ops.Part{M: L.ChUp, Row0: row, Rows: F, X: gp.X, Out: ms.u, Stride: F}
	if L.ChGate.VecType == L.ChUp.VecType {
		s.e.MatMulGatedParts(append(ms.parts[:0], gp, up), m, s.act)
	} else {
		// Each its own rows (one gathering buffer: the gate's product
		// first), the activation after.
		s.e.MatMulParts(append(ms.parts[:0], gp), m)
		up.X = ms.gatherPairs(xu, L.ChUp.XRowBytes, pairs, s.m.ExpertsUsed)
		s.e.MatMulParts(append(ms.parts[:0], up), m)
		for i := range m {
			s.act(ms.g[i*F:(i+1)*F], ms.u[i*F:(i+1)*F])
		}
	}
	xd, err := s.e.Quantize(L.ChDown.VecType, ms.g[:m*F], F, m, ms.gather)
	if err != nil {
		return fmt.Errorf("model: quantize activations: %w", err)
	}
	s.e.MatMulParts(append(ms.parts[:0], ops.Part{M: L.ChDown, Row0: j * E, Rows: E, X: xd, Out: ms.y, Stride: E}), m)
	for i, p := range pairs {
		copy(ms.ys[int(p)*E:(int(p)+1)*E], ms.y[i*E:(i+1)*E])
	}
	return nil
}

// gatherPairs copies into the gathering buffer the rows (rb bytes each)
// of xq of the tokens of pairs (token·k + slot each), one after another.
func (ms *moeScratch) gatherPairs(xq []byte, rb int, pairs []int32, k int) []byte {
	for i, p := range pairs {
		t := int(p) / k
		copy(ms.gather[i*rb:(i+1)*rb], xq[t*rb:(t+1)*rb])
	}
	return ms.gather[:len(pairs)*rb]
}
