package model

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/lowmem/llm/arena"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/softmax"
)

// ExpertSource supplies the experts of mixture-of-experts blocks to forward
// passes (Model.ExpertSource): an expert cache that keeps the hot experts
// in memory and reads cold ones from disk implements it. For each expert
// block il of a pass, Forward calls Fetch once with the distinct experts
// the batch's tokens were routed to (ascending ids), then Expert for each
// of them in that order, and Release(il) when the block's feed-forward is
// done. A source that reads from disk starts every read it needs in Fetch,
// so the reads proceed together while the first experts compute.
//
// Forward uses one expert at a time, unless the source is a HeldExperts
// that holds them all: once it asks for the next expert of the block (or
// releases the block) it no longer reads the previous one's matrices, so
// a source with room for fewer experts than a block announces may reuse
// the room of the experts already used (expertcache does).
//
// Forward calls of different States may use a source at the same time; a
// source that cannot serve them together serialises them (holding a lock
// from Fetch to Release, say).
type ExpertSource interface {
	// Fetch announces the experts block il is about to use. ids is only
	// valid during the call.
	Fetch(il int, ids []int32)
	// Expert returns expert e of block il, one that the last Fetch for il
	// announced, waiting until its weights are readable. Its matrices stay
	// valid until Release(il).
	Expert(il, e int) *Expert
	// Release ends block il's use of the experts Fetch announced.
	Release(il int)
}

// HeldExperts is an ExpertSource that can say, after Fetch(il, ids), that
// every expert it announced stays readable until Release(il) (there was
// room for them all), so that a pass may use them together: a decode
// step then multiplies its experts in two dispatches instead of two an
// expert. A source that cannot tell, or says false, is used one expert at
// a time — which a source still reading some of them may prefer, so that
// the pass computes the others meanwhile (expertcache does).
type HeldExperts interface {
	ExpertSource
	// Held reports whether block il's announced experts are all readable
	// until Release(il), whatever order Expert is called in. Called
	// between Fetch(il, …) and the first Expert(il, …).
	Held(il int) bool
}

// MappedExperts is the ExpertSource of a model whose experts all stay in
// the mapped file: every expert is served from Blocks, in place. It is
// what Forward does when Model.ExpertSource is nil (except that then a
// LayerSource's streamed layers serve their own experts).
type MappedExperts struct{ M *Model }

// Fetch does nothing: mapped experts need no reads ahead.
func (MappedExperts) Fetch(il int, ids []int32) {}

// Expert returns the expert from the model's blocks.
func (s MappedExperts) Expert(il, e int) *Expert { return &s.M.Blocks[il].Experts[e] }

// Release does nothing.
func (MappedExperts) Release(il int) {}

// Held is true: mapped experts are always readable.
func (MappedExperts) Held(il int) bool { return true }

// moeScratch is a pass's routing tables and expert buffers, from the arena.
type moeScratch struct {
	logits []float32 // n × Experts router logits, then probabilities
	ids    []int32   // n × ExpertsUsed chosen experts, best first
	wts    []float32 // their weights
	counts []int32   // Experts+1: start of each expert's pairs in order
	order  []int32   // (token, slot) pairs t·k+slot, grouped by expert
	used   []int32   // distinct experts of the batch, ascending
	gather []byte    // quantized input rows of one expert's tokens (expertsOne: of every expert's down)
	g, u   []float32 // one expert's gate and up outputs, n × ExpertFFN (expertsOne: every expert's)
	y      []float32 // one expert's down outputs, n × Embd
	rin    []float32 // the router's own input (ownRouterInput), n × Embd; Gemma 4's then takes the experts' sum
	xw     []float32 // the experts' input times the weight (ExpertInputWeighted), n × Embd
	ys     []float32 // every pair's down output, n × ExpertsUsed × Embd
	// parts is one dispatch's products for expertsOne, held the token's
	// experts slot by slot (ExpertsUsed pointers, made with the State);
	// each, set by tests, makes one token's pass take one expert at a
	// time too.
	parts [ops.MaxParts]ops.Part
	held  []*Expert
	each  bool
}

// int32s takes n int32s from the arena (its memory is pointer-free and
// aligned, so it may hold any plain numbers).
func int32s(ar *arena.Arena, n int) []int32 {
	b := ar.Bytes(4 * n)
	if b == nil {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

func (ms *moeScratch) take(ar *arena.Arena, c *Config, maxX, n int) {
	k := c.ExpertsUsed
	ms.logits = ar.Float32s(n * c.Experts)
	ms.wts = ar.Float32s(n * k)
	ms.ids = int32s(ar, n*k)
	ms.counts = int32s(ar, c.Experts+1)
	ms.order = int32s(ar, n*k)
	ms.used = int32s(ar, c.Experts)
	// A pass of one token holds every expert's rows (expertsOne).
	w := max(n, k)
	ms.gather = ar.Bytes(w * maxX)
	ms.g = ar.Float32s(w * c.expertWidth())
	ms.u = ar.Float32s(w * c.expertWidth())
	ms.y = ar.Float32s(n * c.Embd)
	ms.ys = ar.Float32s(n * k * c.Embd)
	if c.ownRouterInput() {
		ms.rin = ar.Float32s(n * c.Embd)
	}
	if c.ExpertInputWeighted {
		ms.xw = ar.Float32s(n * c.Embd)
	}
}

// moeScratchBytes is what moeScratch.take takes from the arena.
func moeScratchBytes(c *Config, maxX, n int) int {
	f := func(m int) int { return roundUp(4*m, allocAlign) }
	k := c.ExpertsUsed
	w := max(n, k)
	b := f(n*c.Experts) + 3*f(n*k) + f(c.Experts+1) + f(c.Experts) +
		roundUp(w*maxX, allocAlign) + 2*f(w*c.expertWidth()) + f(n*c.Embd) + f(n*k*c.Embd)
	if c.ownRouterInput() {
		b += f(n * c.Embd) // rin
	}
	if c.ExpertInputWeighted {
		b += f(n * c.Embd) // xw
	}
	return b
}

// expertWidth is the widest expert a block runs: an adjugate expert
// (ChunkFFN) may be wider than the routed ones.
func (c *Config) expertWidth() int { return max(c.ExpertFFN, c.ChunkFFN) }

// ownRouterInput reports whether a block's router reads rows of its own
// (moeScratch.rin) rather than the experts' input: Gemma 4's scaled norm
// of the stream, smallthinker's layer input from before attention.
func (c *Config) ownRouterInput() bool { return c.HeadDimSWA > 0 || c.RouterPreAttn }

// route turns one token's router logits p into its experts and their
// weights, as llama.cpp's build_moe_ffn does: the gating function g makes
// the logits probabilities (in place in p: a softmax over all experts, or
// each one's sigmoid; kept as they are for GatingSoftmaxWeight); the k
// best probabilities — each with its selection bias added when bias is
// not nil — choose the experts, best first (ties to the lower id, NaN
// last); their weights are their unbiased probabilities (for
// GatingSoftmaxWeight the softmax of the chosen logits alone), divided,
// with norm, by their sum (at least 2⁻¹⁴, the clamp llama.cpp puts
// against a sum of 0). With groups (more than one), only the experts of
// the groups.used best groups may be chosen (groupLimit).
func route(p, bias []float32, ids []int32, w []float32, g Gating, norm bool, groups groupLimit) {
	switch g {
	case GatingSigmoid:
		for i, v := range p {
			p[i] = float32(1 / (1 + math.Exp(float64(-v))))
		}
	case GatingSoftmaxWeight:
	default:
		softmax.InPlace(p, 1)
	}
	var keep [maxExpertGroups]bool
	per := groups.keep(p, bias, &keep)
	for s := range ids {
		best, bv := -1, float32(0)
		for i, v := range p {
			if slices.Contains(ids[:s], int32(i)) || per > 0 && !keep[i/per] {
				continue
			}
			if bias != nil {
				v += bias[i]
			}
			if best < 0 || v > bv || bv != bv && v == v {
				best, bv = i, v
			}
		}
		ids[s], w[s] = int32(best), p[best]
	}
	if g == GatingSoftmaxWeight {
		softmax.InPlace(w, 1)
	}
	if norm {
		renormalise(w)
	}
}

// renormalise divides the weights w by their sum, at least 2⁻¹⁴: the
// clamp llama.cpp's build_moe_ffn puts against a sum of 0.
func renormalise(w []float32) {
	var total float64
	for _, v := range w {
		total += float64(v)
	}
	t := max(float32(total), 6.103515625e-5)
	for s := range w {
		w[s] /= t
	}
}

// groupLimit is DeepSeek V3's group-limited routing (Config.ExpertGroups):
// n groups of consecutive experts, the used best of them open to the
// choice; n ≤ 1 limits nothing.
type groupLimit struct{ n, used int }

// keep marks in keep the groups whose experts may be chosen, as
// llama.cpp's build_moe_ffn ranks them: each group scored by the sum of
// its two best selection probabilities (p plus bias, when not nil), the
// used best scores kept (ties to the lower group). It returns the experts
// per group, or 0 when no limit applies.
func (gl groupLimit) keep(p, bias []float32, keep *[maxExpertGroups]bool) int {
	if gl.n <= 1 {
		return 0
	}
	per := len(p) / gl.n
	var score [maxExpertGroups]float32
	for g := range gl.n {
		b1, b2 := float32(math.Inf(-1)), float32(math.Inf(-1))
		for i := g * per; i < (g+1)*per; i++ {
			v := p[i]
			if bias != nil {
				v += bias[i]
			}
			if v > b1 {
				b1, b2 = v, b1
			} else if v > b2 {
				b2 = v
			}
		}
		if per == 1 {
			b2 = 0
		}
		score[g] = b1 + b2
	}
	for range gl.used {
		best := -1
		for g := range gl.n {
			if !keep[g] && (best < 0 || score[g] > score[best]) {
				best = g
			}
		}
		keep[best] = true
	}
	return per
}

// experts is the mixture-of-experts feed-forward block: each token's
// ExpertsUsed experts, chosen by the router from ra (a itself, but for
// Gemma 4 and smallthinker: Config.ownRouterInput), each computing
// down(act(gate·a) ⊙ up·a), summed with the routing weights — times each expert's output scale, when the block has
// them (Gemma 4) — into out, which ra may be;
// with ExpertBiases, the router's logits and each product have their bias
// added first (gpt-oss); with ExpertSelBias, the router's selection bias
// joins the probabilities that choose (lfm2moe, deepseek2); with
// ExpertGroups, only the best groups' experts may be chosen, and the
// weights are scaled by ExpertScale when it is set (deepseek2).
// Tokens are grouped by expert, so each expert's weights are read once per
// pass however many tokens chose it; every token then sums its experts'
// outputs in its own order of preference, as llama.cpp does, so a batch
// and one token at a time add the same numbers in the same order.
func (s *State) experts(il int, L *Layer, a, ra acts, out []float32) error {
	c := &s.m.Config
	ms := &s.moe
	n, k, nx, F, E := a.n, c.ExpertsUsed, c.Experts, c.ExpertFFN, c.Embd
	if err := s.mul(L.Router, ra, ms.logits, nx); err != nil {
		return err
	}
	addRows(ms.logits, L.BRouter, n)
	for t := 0; t < n; t++ {
		p, ids, w := ms.logits[t*nx:(t+1)*nx], ms.ids[t*k:(t+1)*k], ms.wts[t*k:(t+1)*k]
		route(p, L.ExpProbsB, ids, w, c.ExpertGating, c.ExpertNorm, groupLimit{c.ExpertGroups, c.ExpertGroupsUsed})
		if c.ExpertScale != 0 {
			ops.Scale(w, c.ExpertScale)
		}
		if L.ExpOutScale != nil {
			for slot, e := range ids {
				w[slot] *= L.ExpOutScale[e]
			}
		}
	}
	if c.ExpertInputWeighted {
		a = s.weightedInput(a)
	}
	used := ms.group(n*k, nx)
	counts := ms.counts

	xs := s.xs
	if xs != nil {
		xs.Fetch(il, used)
		defer xs.Release(il)
	}
	if n == 1 && !ms.each && allHeld(xs, il) {
		if err := s.expertsOne(il, L, a, xs, used); err != nil {
			return err
		}
		s.sumExperts(out, n)
		return nil
	}
	start := int32(0)
	for _, e := range used {
		pairs := ms.order[start:counts[e]]
		start = counts[e]
		ex := &L.Experts[e]
		if xs != nil {
			ex = xs.Expert(il, int(e))
		}
		m := len(pairs)
		// The expert's input: its tokens' rows of a, quantized for its
		// gate and up matrices (all of a when every token chose it); one
		// gathered copy serves both when they take the same type, and gate,
		// up and the activation then run in one dispatch.
		input := func(w *ops.Matrix) ([]byte, error) {
			xq, err := s.quantized(a, w.VecType)
			if err != nil || m == n {
				return xq, err
			}
			return ms.gatherPairs(xq, w.XRowBytes, pairs, k), nil
		}
		if ex.Gate == nil {
			// Gate-less experts: act(up·a).
			xq, err := input(ex.Up)
			if err != nil {
				return err
			}
			s.e.MatMul(ex.Up, xq, m, ms.g, F)
			s.ungatedAct(ms.g[:m*F])
		} else if ex.Gate.VecType == ex.Up.VecType && L.BGateExps == nil {
			xq, err := input(ex.Gate)
			if err != nil {
				return err
			}
			s.e.MatMulGated(ops.Part{M: ex.Gate, X: xq, Out: ms.g, Stride: F}, ops.Part{M: ex.Up, X: xq, Out: ms.u, Stride: F}, m, s.act)
		} else {
			for _, h := range [2]struct {
				w   *ops.Matrix
				out []float32
			}{{ex.Gate, ms.g}, {ex.Up, ms.u}} {
				xq, err := input(h.w)
				if err != nil {
					return err
				}
				s.e.MatMul(h.w, xq, m, h.out, F)
			}
			if L.BGateExps != nil {
				// The biases come before the activation, so the two cannot
				// run in the products' dispatch.
				addRows(ms.g, L.BGateExps[int(e)*F:(int(e)+1)*F], m)
				addRows(ms.u, L.BUpExps[int(e)*F:(int(e)+1)*F], m)
			}
			for j := range m {
				s.act(ms.g[j*F:(j+1)*F], ms.u[j*F:(j+1)*F])
			}
		}
		if err := s.mul(ex.Down, s.acts(ms.g, F, m), ms.y, E); err != nil {
			return err
		}
		if L.BDownExps != nil {
			addRows(ms.y, L.BDownExps[int(e)*E:(int(e)+1)*E], m)
		}
		for j, p := range pairs {
			copy(ms.ys[int(p)*E:(int(p)+1)*E], ms.y[j*E:(j+1)*E])
		}
	}
	s.sumExperts(out, n)
	return nil
}

// group sorts the first pairs (token, slot) pairs of ids by expert, of
// nx, into order (a counting sort) and returns the distinct experts,
// ascending; counts[e] is then the end of expert e's pairs in order,
// counts[e-1] their start.
func (ms *moeScratch) group(pairs, nx int) []int32 {
	counts := ms.counts[:nx+1]
	clear(counts)
	for _, e := range ms.ids[:pairs] {
		counts[e+1]++
	}
	used := ms.used[:0]
	for e := range nx {
		if counts[e+1] > 0 {
			used = append(used, int32(e))
		}
		counts[e+1] += counts[e]
	}
	for p, e := range ms.ids[:pairs] {
		ms.order[counts[e]] = int32(p)
		counts[e]++
	}
	return used
}

// weightedInput is llama4's experts' input: each token's row of a times
// its expert's weight (one expert a token: the config refuses more), as
// ggml multiplies them, the weight then 1 so that the expert's output
// joins the sum as it is.
func (s *State) weightedInput(a acts) acts {
	ms := &s.moe
	E := s.m.Embd
	for t := range a.n {
		xw := ms.xw[t*E : (t+1)*E]
		copy(xw, a.rows[t*E:(t+1)*E])
		ops.Scale(xw, ms.wts[t])
		ms.wts[t] = 1
	}
	return s.acts(ms.xw, E, a.n)
}

// sumExperts writes each of n tokens' experts' down outputs (ys), weighted,
// into out: each token's experts in its order of preference, the products
// rounded before the sum, as ggml multiplies then adds.
func (s *State) sumExperts(out []float32, n int) {
	ms := &s.moe
	k, E := s.m.Config.ExpertsUsed, s.m.Config.Embd
	for t := 0; t < n; t++ {
		o := out[t*E : (t+1)*E]
		for slot := range k {
			w := ms.wts[t*k+slot]
			y := ms.ys[(t*k+slot)*E : (t*k+slot+1)*E]
			if slot == 0 {
				for i, v := range y {
					o[i] = v * w
				}
				continue
			}
			for i, v := range y {
				o[i] += float32(v * w)
			}
		}
	}
}

// allHeld reports whether a pass may use block il's experts together:
// the model's own (xs nil), or a HeldExperts source's that holds them all.
func allHeld(xs ExpertSource, il int) bool {
	if xs == nil {
		return true
	}
	h, ok := xs.(HeldExperts)
	return ok && h.Held(il)
}

// expertsOne is experts' products for a pass of one token, whose
// ExpertsUsed experts are distinct and all readable at once (the model's
// own, or those of an xs that holds them all; used is them ascending):
// their gate-and-up pairs in as few dispatches as ops.MaxParts allows
// (with the activation, unless biases come between), then their down
// projections likewise, each written straight into its slot's row of ys. The sums are those of one expert at
// a time; a decode step of a model of small experts (Granite's 512 rows,
// eight a token) spends less on the dispatches' barriers than on the
// products otherwise.
func (s *State) expertsOne(il int, L *Layer, a acts, xs ExpertSource, used []int32) error {
	c := &s.m.Config
	ms := &s.moe
	F := c.ExpertFFN
	ids := ms.ids[:c.ExpertsUsed]
	held := ms.held[:len(ids)]
	for slot, e := range ids {
		held[slot] = &L.Experts[e]
	}
	if xs != nil {
		// In the order Fetch announced them (used, ascending), as the
		// source expects.
		for _, e := range used {
			held[slices.Index(ids, e)] = xs.Expert(il, int(e))
		}
	}
	if held[0].Gate == nil {
		// Gate-less experts: their up products into g, as many a dispatch
		// as ops.MaxParts allows, then the activation.
		for s0 := 0; s0 < len(ids); s0 += ops.MaxParts {
			parts := ms.parts[:0]
			for slot := s0; slot < min(len(ids), s0+ops.MaxParts); slot++ {
				xu, err := s.quantized(a, held[slot].Up.VecType)
				if err != nil {
					return err
				}
				parts = append(parts, ops.Part{M: held[slot].Up, X: xu, Out: ms.g[slot*F : (slot+1)*F], Stride: F})
			}
			s.e.MatMulParts(parts, 1)
		}
		s.ungatedAct(ms.g[:len(ids)*F])
		return s.expertsDown(L, held, ids)
	}
	const pairs = ops.MaxParts / 2
	for s0 := 0; s0 < len(ids); s0 += pairs {
		parts := ms.parts[:0]
		for slot := s0; slot < min(len(ids), s0+pairs); slot++ {
			ex := held[slot]
			xg, xu, err := s.quantizedPair(a, ex.Gate, ex.Up)
			if err != nil {
				return err
			}
			parts = append(parts, ops.Part{M: ex.Gate, X: xg, Out: ms.g[slot*F : (slot+1)*F], Stride: F},
				ops.Part{M: ex.Up, X: xu, Out: ms.u[slot*F : (slot+1)*F], Stride: F})
		}
		if L.BGateExps == nil {
			s.e.MatMulGatedParts(parts, 1, s.act)
		} else {
			s.e.MatMulParts(parts, 1)
		}
	}
	if L.BGateExps != nil {
		// The biases come before the activation (gpt-oss).
		for slot, e := range ids {
			g, u := ms.g[slot*F:(slot+1)*F], ms.u[slot*F:(slot+1)*F]
			addRows(g, L.BGateExps[int(e)*F:(int(e)+1)*F], 1)
			addRows(u, L.BUpExps[int(e)*F:(int(e)+1)*F], 1)
			s.act(g, u)
		}
	}
	return s.expertsDown(L, held, ids)
}

// quantizedPair is a's rows converted for a gate and an up matrix (the
// same buffer when they take one type).
func (s *State) quantizedPair(a acts, gate, up *ops.Matrix) (xg, xu []byte, err error) {
	if xg, err = s.quantized(a, gate.VecType); err != nil {
		return nil, nil, err
	}
	xu, err = s.quantized(a, up.VecType)
	return xg, xu, err
}

// expertsDown is expertsOne's down projections: the activated rows of
// the experts held (in g, slot by slot) through their down matrices, as
// many a dispatch as ops.MaxParts allows, each into its slot's row of ys,
// then their biases.
func (s *State) expertsDown(L *Layer, held []*Expert, ids []int32) error {
	ms := &s.moe
	F, E := s.m.ExpertFFN, s.m.Embd
	// Every expert's down matrix is a slice of one tensor: one type, so
	// the activation rows are quantized together.
	down := held[0].Down
	xd, err := s.e.Quantize(down.VecType, ms.g[:len(ids)*F], F, len(ids), ms.gather)
	if err != nil {
		return fmt.Errorf("model: quantize activations: %w", err)
	}
	xrb := down.XRowBytes
	for s0 := 0; s0 < len(ids); s0 += ops.MaxParts {
		parts := ms.parts[:0]
		for slot := s0; slot < min(len(ids), s0+ops.MaxParts); slot++ {
			parts = append(parts, ops.Part{M: held[slot].Down, X: xd[slot*xrb : (slot+1)*xrb], Out: ms.ys[slot*E : (slot+1)*E], Stride: E})
		}
		s.e.MatMulParts(parts, 1)
	}
	if L.BDownExps != nil {
		for slot, e := range ids {
			addRows(ms.ys[slot*E:(slot+1)*E], L.BDownExps[int(e)*E:(int(e)+1)*E], 1)
		}
	}
	return nil
}

// ungatedAct applies the activation of gate-less experts to x in place:
// ReLU² (nemotron_h_moe) or GELU (nomic-bert-moe).
func (s *State) ungatedAct(x []float32) {
	if s.m.GELUExperts {
		ops.GELU(x)
		return
	}
	reluSqr(x)
}
