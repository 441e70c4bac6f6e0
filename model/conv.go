package model

import (
	"fmt"

	"github.com/lowmem/llm/kv"
)

// This file is the gated short convolution of LFM2's conv layers and the
// state it carries between passes, as llama.cpp's build_shortconv_block
// and ggml_ssm_conv compute it: in_proj makes three chunks of Embd, B, C
// and x; bx = B·x; each channel of bx goes through a causal depthwise
// convolution of ConvKernel taps over time, the first ConvKernel-1 of which
// reach back into earlier passes; y = C·conv(bx); out_proj(y) joins the
// residual stream. A conv layer keeps no keys or values: what it carries
// is its last ConvKernel-1 positions' bx (the conv state), which cannot be
// rebuilt from the KV cache. So the state also keeps checkpoints, copies of
// the whole conv state after some passes, and a rewind (Truncate) goes back
// to the newest checkpoint at or before its target, from where the caller
// evaluates the known tokens again.

// maxCheckpoints is the most checkpoints a State keeps; a model whose
// state is large keeps fewer (Checkpoints). A rewind past all of them
// evaluates from position 0 again.
const maxCheckpoints = 16

// checkpointBudget is the memory a State's checkpoints may take before
// their count drops below maxCheckpoints: LFM2's states (a few hundred KiB)
// keep all 16; a Mamba-2 state (Granite 4.0-H-Micro's is 77 MB) keeps
// minCheckpoints.
const checkpointBudget = 16 << 20

// minCheckpoints is the fewest checkpoints a State keeps however large its
// state: the end of the last pass, which a failed pass goes back to, and
// the one before, so that a one-token rewind (a generation settling on a
// stop string) does not evaluate the whole sequence again.
const minCheckpoints = 2

// ConvState is a sequence's recurrent state: every recurrent layer's
// state, layer after layer in model order, after At tokens — for a short
// convolution (lfm2) its inputs (bx) of its last ConvKernel-1 positions,
// oldest first; for a Mamba-2 layer (granitehybrid) its last SSMConv-1
// positions' convolution inputs (x, B and C), oldest first, then its
// scan state (heads × head size × SSMState) — and checkpoints, the same
// after the tokens in Marks (ascending), Saved holding their states one
// after another. A model without recurrent layers has an empty ConvState.
type ConvState struct {
	At    int
	Cur   []float32
	Marks []int
	Saved []float32
}

// recurrentFloats is one recurrent layer's state in floats.
func recurrentFloats(c *Config) int {
	if c.mamba() {
		return (c.SSMConv-1)*c.ssmConvWidth() + c.SSMInner*c.SSMState
	}
	if c.ConvKernel < 2 {
		return 0
	}
	return (c.ConvKernel - 1) * c.Embd
}

// ConvStateFloats is how many floats one recurrent state of a model of
// config c holds (ConvState.Cur): 0 for a model without recurrent layers.
func ConvStateFloats(c *Config) int { return c.convCount() * recurrentFloats(c) }

// Checkpoints is how many checkpoints a State of config c keeps:
// maxCheckpoints, or as many as checkpointBudget holds, but at least
// minCheckpoints; 0 without recurrent layers.
func Checkpoints(c *Config) int {
	n := ConvStateFloats(c)
	if n == 0 {
		return 0
	}
	return min(maxCheckpoints, max(minCheckpoints, checkpointBudget/(4*n)))
}

// ConvStateBytes is the memory a State's recurrent state and its
// checkpoints take, which the memory plan counts with each session.
func ConvStateBytes(c *Config) int64 {
	n := int64(ConvStateFloats(c))
	if n == 0 {
		return 0
	}
	k := int64(Checkpoints(c))
	return 4*(1+k)*n + 8*k // floats, then Marks
}

// newConvState allocates the state of config c: zeros (the state before
// any token) and room for every checkpoint.
func newConvState(c *Config) ConvState {
	n := ConvStateFloats(c)
	if n == 0 {
		return ConvState{}
	}
	k := Checkpoints(c)
	return ConvState{Cur: make([]float32, n), Marks: make([]int, 0, k), Saved: make([]float32, 0, k*n)}
}

// limit is how many checkpoints the state keeps: its Marks' capacity,
// which newConvState sets and nothing changes.
func (cs *ConvState) limit() int { return cap(cs.Marks) }

// Conv is the state's conv state, for saving: valid until the next call
// that evaluates or rewinds.
func (s *State) Conv() *ConvState { return &s.conv }

// Restore replaces the state's KV cache with c (as SetCache) and its conv
// state with a copy of cs (a saved one), both or neither.
func (s *State) Restore(c *kv.Cache, cs *ConvState) error {
	if err := s.checkConv(cs); err != nil {
		return err
	}
	if err := s.SetCache(c); err != nil {
		return err
	}
	s.setConv(cs)
	return nil
}

// checkConv checks a saved conv state against the model: Cur and every
// checkpoint of its size, the marks ascending and none past At.
func (s *State) checkConv(cs *ConvState) error {
	n := len(s.conv.Cur)
	k := len(cs.Marks)
	bad := func(why string) error {
		return fmt.Errorf("model: conv state: %s: %w", why, kv.ErrBadState)
	}
	switch {
	case len(cs.Cur) != n:
		return bad(fmt.Sprintf("%d floats, this model's is %d", len(cs.Cur), n))
	case n == 0 && (k != 0 || len(cs.Saved) != 0):
		return bad("checkpoints for a model without conv layers")
	case k > s.conv.limit() || len(cs.Saved) != k*n:
		return bad(fmt.Sprintf("%d checkpoints of %d floats", k, len(cs.Saved)))
	case cs.At < 0:
		return bad(fmt.Sprintf("position %d", cs.At))
	}
	for i, p := range cs.Marks {
		if p < 0 || p > cs.At || (i > 0 && p <= cs.Marks[i-1]) {
			return bad(fmt.Sprintf("checkpoint %d at %d (state at %d)", i, p, cs.At))
		}
	}
	return nil
}

// setConv copies a checked conv state into the state's own.
func (s *State) setConv(cs *ConvState) {
	if s.conv.Cur == nil {
		return
	}
	s.conv.At = cs.At
	copy(s.conv.Cur, cs.Cur)
	s.conv.Marks = append(s.conv.Marks[:0], cs.Marks...)
	s.conv.Saved = append(s.conv.Saved[:0], cs.Saved...)
}

// Truncate forgets positions n and later and returns how many positions
// the state now holds: n, or for a model with conv layers, whose state
// cannot be taken back position by position, the position of the newest
// checkpoint at or before n (0, the empty state, without one). The caller
// evaluates its tokens from there to n again. The KV cache is cut to the
// same length, so those evaluations store their rows again in order.
func (s *State) Truncate(n int) int {
	n = max(n, 0)
	cs := &s.conv
	if cs.Cur == nil || n == cs.At {
		s.cache.Truncate(n)
		return n
	}
	// A failed pass leaves At at -1: the state is restored from the
	// checkpoint every pass leaves at its end, the newest.
	if cs.At >= 0 && n > cs.At {
		return cs.At
	}
	k := len(cs.Marks)
	for k > 0 && cs.Marks[k-1] > n {
		k--
	}
	cs.Marks = cs.Marks[:k]
	cs.Saved = cs.Saved[:k*len(cs.Cur)]
	if k == 0 {
		clear(cs.Cur)
		cs.At = 0
	} else {
		copy(cs.Cur, cs.Saved[(k-1)*len(cs.Cur):])
		cs.At = cs.Marks[k-1]
	}
	s.cache.Truncate(cs.At)
	return cs.At
}

// checkpoint records the conv state after pos tokens, the end of a pass.
// When every slot is taken, one older checkpoint goes: the one whose loss
// leaves the smallest gap relative to its distance from pos, so the marks
// thin out geometrically into the past — dense near the end, where stop
// strings and generation settle rewind, and spread back to where a new
// prompt shares a prefix.
func (cs *ConvState) checkpoint(pos int) {
	n := len(cs.Cur)
	k := len(cs.Marks)
	for k > 0 && cs.Marks[k-1] >= pos { // none after a rewind; kept safe
		k--
	}
	cs.Marks, cs.Saved = cs.Marks[:k], cs.Saved[:k*n]
	if k == cs.limit() {
		// Losing mark i leaves a gap from the one before it to the one
		// after it (or pos): never the newest, whose gap is all of its
		// distance from pos.
		victim, best := 0, 2.0
		for i := range k {
			prev, next := 0, pos
			if i > 0 {
				prev = cs.Marks[i-1]
			}
			if i+1 < k {
				next = cs.Marks[i+1]
			}
			if score := float64(next-prev) / float64(pos-prev); score < best {
				victim, best = i, score
			}
		}
		copy(cs.Marks[victim:], cs.Marks[victim+1:])
		copy(cs.Saved[victim*n:], cs.Saved[(victim+1)*n:])
		cs.Marks, cs.Saved = cs.Marks[:k-1], cs.Saved[:(k-1)*n]
	}
	cs.Marks = append(cs.Marks, pos)
	cs.Saved = append(cs.Saved, cs.Cur...)
}

// shift renumbers the state after a context shift that dropped positions
// keep..keep+drop-1: the convolution does not depend on positions, so the
// current state carries on (as llama.cpp's recurrent memory lets a shift
// pass); checkpoints among the dropped positions go, later ones move down.
func (cs *ConvState) shift(keep, drop int) {
	if cs.Cur == nil {
		return
	}
	n := len(cs.Cur)
	j := 0
	for i, p := range cs.Marks {
		if p > keep && p < keep+drop {
			continue
		}
		if p >= keep+drop {
			p -= drop
		}
		cs.Marks[j] = p
		copy(cs.Saved[j*n:(j+1)*n], cs.Saved[i*n:(i+1)*n])
		j++
	}
	cs.Marks, cs.Saved = cs.Marks[:j], cs.Saved[:j*n]
	cs.At -= drop
}

// convTask runs the convolution of one conv layer over a pass, a range of
// channels per work item: each channel's window moves through the pass's
// tokens in order, which is all that is sequential.
type convTask struct {
	s     *State
	n     int       // tokens
	bcx   []float32 // n rows of B, C, x (3·Embd each)
	y     []float32 // n rows of Embd: C·conv(B·x)
	state []float32 // the layer's ConvKernel-1 rows of Embd, oldest first
	w     []float32 // ConvKernel taps per channel, oldest first
}

// Do convolves channels [lo,hi) (window.push).
func (k *convTask) Do(_, lo, hi int) {
	E := k.s.m.Embd
	win := window{L: k.s.m.ConvKernel}
	for ch := lo; ch < hi; ch++ {
		win.load(k.state, E, ch)
		w := k.w[ch*win.L : (ch+1)*win.L]
		for t := range k.n {
			win.restart(k.s.texts, t)
			row := k.bcx[t*3*E:]
			k.y[t*E+ch] = row[E+ch] * win.push(row[ch]*row[2*E+ch], w)
		}
		win.store(k.state, E, ch)
	}
}

// window is one channel's inputs to a causal convolution of L taps: the
// last L-1, oldest first, and room for the newest.
type window struct {
	v [maxConvKernel]float32
	L int
}

// load takes channel ch's window from a state of L-1 rows of stride
// floats, oldest first.
func (w *window) load(state []float32, stride, ch int) {
	for j := 0; j < w.L-1; j++ {
		w.v[j] = state[j*stride+ch]
	}
}

// store puts the window back where load took it from.
func (w *window) store(state []float32, stride, ch int) {
	for j := 0; j < w.L-1; j++ {
		state[j*stride+ch] = w.v[j]
	}
}

// restart empties the window at token t when t starts a packed pass's
// next text (texts nil: an unpacked pass).
func (w *window) restart(texts []textSpan, t int) {
	if texts != nil && int(texts[t].from) == t {
		clear(w.v[:w.L-1])
	}
}

// push adds input x and returns the convolution Σ taps[j]·window[j]: in
// ggml's order (oldest first, float32), each product rounded before it is
// added, so no platform fuses them differently.
func (w *window) push(x float32, taps []float32) float32 {
	L := w.L
	w.v[L-1] = x
	var sum float32
	for j, tap := range taps[:L] {
		sum += float32(w.v[j] * tap)
	}
	copy(w.v[:L-1], w.v[1:L])
	return sum
}

// convParallelMin is the shortest pass whose convolution goes to the
// thread pool; one token's is a few thousand multiplications.
const convParallelMin = 8

// shortConv runs conv layer il's in_proj and convolution of a into p.att
// (Embd floats a token), carrying the layer's conv state on.
func (s *State) shortConv(il int, L *Layer, a acts, p *pass) error {
	c := &s.m.Config
	E := c.Embd
	s.e.Phase(phQKV)
	if err := s.mul(L.ConvIn, a, p.qkv, 3*E); err != nil {
		return err
	}
	s.e.Phase(phConv)
	rows := (c.ConvKernel - 1) * E
	ci := il - c.KVLayer(il)
	s.ct = convTask{s: s, n: a.n, bcx: p.qkv, y: p.att, state: s.conv.Cur[ci*rows : (ci+1)*rows], w: L.ConvW}
	if a.n >= convParallelMin {
		s.e.For(E, 64, &s.ct)
	} else {
		s.ct.Do(0, 0, E)
	}
	s.ct = convTask{}
	return nil
}
