package model

import (
	"fmt"

	"github.com/lowmem/llm/kv"
)

// This file is the recurrent state a sequence carries from pass to pass
// (lfm2's short convolutions, granitehybrid's Mamba-2 layers) and its
// checkpoints, to which a rewind (Truncate) goes back.
//
// The states live in Checkpoints()+1 fixed slots allocated with the State.
// The current state is a slot, normally the newest checkpoint's; a pass
// reads each recurrent layer's state from it and writes the layer's next
// state into a slot no checkpoint holds (out of place for the pass's first
// token, in place after), so at the end of the pass the slot it read is
// still intact as the previous checkpoint and the slot it wrote becomes
// the newest. Nothing is copied: a checkpoint is a slot index, an eviction
// frees one, a rewind points the current state at a checkpoint's slot.
// For Granite 4.0-H-Micro, whose state is 77 MB, that saves a copy of it
// at every pass's end and another when the older checkpoint went.

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

// ConvState is a sequence's recurrent state as it is saved and restored:
// every recurrent layer's state, layer after layer in model order, after
// At tokens — for a short convolution (lfm2) its inputs (bx) of its last
// ConvKernel-1 positions, oldest first; for a Mamba-2 layer
// (granitehybrid) its last SSMConv-1 positions' convolution inputs (x, B
// and C), oldest first, then its scan state (heads × head size × SSMState)
// — and checkpoints, the same after the tokens in Marks (ascending), Saved
// holding their states one after another. A model without recurrent
// layers has an empty ConvState.
type ConvState struct {
	At    int
	Cur   []float32
	Marks []int
	Saved []float32
}

// recurrentFloats is one recurrent layer's state in floats.
func recurrentFloats(c *Config) int {
	if c.rwkv() {
		return rwkvFloats(c)
	}
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
// checkpoints take, which the memory plan counts with each session: the
// Checkpoints+1 slots, then the marks.
func ConvStateBytes(c *Config) int64 {
	n := int64(ConvStateFloats(c))
	if n == 0 {
		return 0
	}
	k := int64(Checkpoints(c))
	return 4*(1+k)*n + 8*k // floats, then Marks
}

// recurrent is a State's recurrent state in its slots (see the top of the
// file). The slot indices live in the struct, so the allocations are
// exactly what ConvStateBytes counts.
type recurrent struct {
	at    int       // tokens the current state follows; -1 during a pass
	n     int       // floats a state (0: no recurrent layers)
	back  []float32 // the slots, n floats each
	cur   int       // the current state's slot
	dst   int       // during a pass, the slot it writes
	marks []int     // the checkpoints' positions, ascending; cap: how many
	slot  [maxCheckpoints]int8
	view  ConvState // Conv's answer
	// stream says the state is so large (streamMin) that a pass writing
	// it out of place streams its stores past the caches.
	stream bool
}

// streamMin is the smallest state a pass writes out of place with
// non-temporal stores (ssm.ScanHeadStream): past the caches, a line
// written would otherwise be read first, and the next pass reads the
// state from memory anyway. Granite 4.0-H-Micro's 77 MB streams.
const streamMin = 8 << 20

// newRecurrent allocates the recurrent state of config c: zeros (the state
// before any token) and a slot for every checkpoint.
func newRecurrent(c *Config) recurrent {
	n := ConvStateFloats(c)
	if n == 0 {
		return recurrent{}
	}
	k := Checkpoints(c)
	// The current state starts in the last slot, so that Conv's first
	// answer lays its state and checkpoints out as they are allocated.
	return recurrent{n: n, back: make([]float32, (k+1)*n), cur: k, marks: make([]int, 0, k), stream: 4*n >= streamMin}
}

// on reports whether the model has recurrent layers.
func (r *recurrent) on() bool { return r.n > 0 }

// limit is how many checkpoints the state keeps: its marks' capacity,
// which newRecurrent sets and nothing changes.
func (r *recurrent) limit() int { return cap(r.marks) }

// state is slot i's floats.
func (r *recurrent) state(i int) []float32 { return r.back[i*r.n : (i+1)*r.n : (i+1)*r.n] }

// held reports whether a checkpoint holds slot i.
func (r *recurrent) held(i int) bool {
	for j := range r.marks {
		if int(r.slot[j]) == i {
			return true
		}
	}
	return false
}

// begin starts a pass: the state follows no position until end, and the
// pass writes into a slot no checkpoint holds — another than the current
// one when there is one, so that even a current state no checkpoint holds
// (after Restore) survives; otherwise the current slot, in place.
func (r *recurrent) begin() {
	r.at = -1
	r.dst = r.cur
	for i := range r.limit() + 1 {
		if i != r.cur && !r.held(i) {
			r.dst = i
			break
		}
	}
}

// layer is recurrent layer ci's state in the current slot (src) and in the
// slot the pass writes (dst), per floats each.
func (r *recurrent) layer(ci, per int) (src, dst []float32) {
	s, d := r.state(r.cur), r.state(r.dst)
	return s[ci*per : (ci+1)*per], d[ci*per : (ci+1)*per]
}

// end finishes a pass that leaves the state after pos tokens: the slot it
// wrote is current and the newest checkpoint.
func (r *recurrent) end(pos int) {
	r.cur = r.dst
	r.at = pos
	r.checkpoint(pos)
}

// checkpoint makes the current slot the checkpoint after pos tokens, the
// end of a pass. When every checkpoint is taken, one older one goes: the
// one whose loss leaves the smallest gap relative to its distance from
// pos, so the marks thin out geometrically into the past — dense near the
// end, where stop strings and generation settle rewind, and spread back to
// where a new prompt shares a prefix.
func (r *recurrent) checkpoint(pos int) {
	k := len(r.marks)
	for k > 0 && r.marks[k-1] >= pos { // none after a rewind; kept safe
		k--
	}
	r.marks = r.marks[:k]
	if k == r.limit() {
		// Losing mark i leaves a gap from the one before it to the one
		// after it (or pos): never the newest, whose gap is all of its
		// distance from pos.
		victim, best := 0, 2.0
		for i := range k {
			prev, next := 0, pos
			if i > 0 {
				prev = r.marks[i-1]
			}
			if i+1 < k {
				next = r.marks[i+1]
			}
			if score := float64(next-prev) / float64(pos-prev); score < best {
				victim, best = i, score
			}
		}
		copy(r.marks[victim:], r.marks[victim+1:])
		copy(r.slot[victim:k], r.slot[victim+1:k])
		r.marks = r.marks[:k-1]
		k--
	}
	r.marks = append(r.marks, pos)
	r.slot[k] = int8(r.cur)
}

// shift renumbers the state after a context shift that dropped positions
// keep..keep+drop-1: the convolution does not depend on positions, so the
// current state carries on (as llama.cpp's recurrent memory lets a shift
// pass); checkpoints among the dropped positions go, later ones move down.
func (r *recurrent) shift(keep, drop int) {
	if !r.on() {
		return
	}
	j := 0
	for i, p := range r.marks {
		if p > keep && p < keep+drop {
			continue
		}
		if p >= keep+drop {
			p -= drop
		}
		r.marks[j], r.slot[j] = p, r.slot[i]
		j++
	}
	r.marks = r.marks[:j]
	r.at -= drop
}

// TruncatesExactly reports whether Truncate takes the state back to any
// position: false for a model with conv or recurrent layers, whose
// Truncate goes back to a checkpoint and leaves tokens to evaluate again.
func (s *State) TruncatesExactly() bool { return !s.conv.on() }

// Truncate forgets positions n and later and returns how many positions
// the state now holds: n, or for a model with conv layers, whose state
// cannot be taken back position by position, the position of the newest
// checkpoint at or before n (0, the empty state, without one). The caller
// evaluates its tokens from there to n again. The KV cache is cut to the
// same length, so those evaluations store their rows again in order.
func (s *State) Truncate(n int) int {
	n = max(n, 0)
	r := &s.conv
	if !r.on() || n == r.at {
		s.cache.Truncate(n)
		return n
	}
	// A failed pass leaves at -1: the state goes back to the checkpoint
	// every pass leaves at its end, the newest, whose slot the pass only
	// read.
	if r.at >= 0 && n > r.at {
		return r.at
	}
	k := len(r.marks)
	for k > 0 && r.marks[k-1] > n {
		k--
	}
	r.marks = r.marks[:k]
	if k == 0 {
		clear(r.state(r.cur))
		r.at = 0
	} else {
		r.cur = int(r.slot[k-1])
		r.at = r.marks[k-1]
	}
	s.cache.Truncate(r.at)
	return r.at
}

// Conv is the state's recurrent state, for saving: valid until the next
// call that evaluates or rewinds. It lays the checkpoints out in their
// slots in order first (moving states only when a pass has rotated them),
// so that Saved is one run of floats without a copy of its own.
func (s *State) Conv() *ConvState {
	r := &s.conv
	if !r.on() {
		r.view = ConvState{At: r.at}
		return &r.view
	}
	for i := range r.marks {
		if j := int(r.slot[i]); j != i {
			r.swap(i, j)
		}
	}
	k, n := len(r.marks), r.n
	r.view = ConvState{At: r.at, Cur: r.state(r.cur), Marks: r.marks, Saved: r.back[: k*n : r.limit()*n]}
	return &r.view
}

// swap exchanges slots i and j, states and every reference to them.
func (r *recurrent) swap(i, j int) {
	a, b := r.state(i), r.state(j)
	for x := range a {
		a[x], b[x] = b[x], a[x]
	}
	other := func(p int) int {
		switch p {
		case i:
			return j
		case j:
			return i
		}
		return p
	}
	for m := range r.marks {
		r.slot[m] = int8(other(int(r.slot[m])))
	}
	r.cur, r.dst = other(r.cur), other(r.dst)
}

// Restore replaces the state's KV cache with c (as SetCache) and its conv
// state with a copy of cs (a saved one), both or neither.
func (s *State) Restore(c *kv.Cache, cs *ConvState) error {
	if err := s.checkConv(cs); err != nil {
		return err
	}
	if err := s.SetCache(c); err != nil {
		return err
	}
	s.conv.set(cs)
	return nil
}

// checkConv checks a saved conv state against the model: Cur and every
// checkpoint of its size, the marks ascending and none past At.
func (s *State) checkConv(cs *ConvState) error {
	n := s.conv.n
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

// set copies a checked conv state in: checkpoint i into slot i, the
// current state into the last slot, which no checkpoint takes. A state
// Conv gave (the same slots) copies onto itself, or its current state from
// a checkpoint's slot, which the checkpoints' copies left as they were.
func (r *recurrent) set(cs *ConvState) {
	if !r.on() {
		return
	}
	r.at = cs.At
	r.marks = append(r.marks[:0], cs.Marks...)
	for i := range r.marks {
		copy(r.state(i), cs.Saved[i*r.n:(i+1)*r.n])
		r.slot[i] = int8(i)
	}
	r.cur = r.limit()
	copy(r.state(r.cur), cs.Cur)
}
