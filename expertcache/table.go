package expertcache

import (
	"github.com/lowmem/llm/internal/enum"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/tensor"
)

// Policy chooses which cached expert makes room for one that must be read.
type Policy int

const (
	// LFU evicts the expert used least often, counting every use of every
	// expert (cached or not) with counts halved periodically, so that
	// experts popular long ago fade; ties go to the least recently used.
	// Newcomers pass through a small LRU window first, and enter the
	// frequency-ranked main part only if they are used more often than
	// what they would displace (W-TinyLFU; see table.victim). It is the
	// default: on routing traces it is about as good as LRU when routing
	// repeats from token to token, and much better when a block's working
	// set exceeds its share of the cache (see the package doc).
	LFU Policy = iota
	// LRU evicts the expert whose last use is the oldest.
	LRU
)

// String returns "lfu" or "lru".
func (p Policy) String() string { return enum.Name(p, policyNames[:], "Policy") }

var policyNames = [...]string{LFU: "lfu", LRU: "lru"}

// ageSlots sets how often LFU halves its counts: after ageSlots uses per
// slot of the cache (uses are experts requested). Longer memories do
// better on stationary routing, shorter ones follow a change of topic
// sooner; 32 was as good as 128 on the modelled traces and loses little
// against 8 on the others.
const ageSlots = 32

// LFU's window (see table.victim) holds winTokens tokens' worth of a
// class's misses (a moving average over winAvg fetches), so that an expert
// read for one token is still there for the next; when that is more than
// winMaxShare of the class's slots, recency cannot be kept without
// starving the main part, and the window shrinks to winMinShare of them
// (but never below one token's experts). Chosen on routing traces (see
// TestPolicyHitRatesZipf).
const (
	winTokens   = 1.0
	winMaxShare = 0.5
	winMinShare = 0.01
	winAvg      = 16
)

type slotState uint8

const (
	empty   slotState = iota
	loading           // reads in flight
	ready
	failed // a read failed; served from the model instead until unpinned
)

// slot is one expert's room in the cache: its bytes, the matrix headers
// that view them, and the bookkeeping of which expert it holds.
type slot struct {
	x          int32 // flat id of the expert held (table.base), or -1
	il, e      int32 // its block and number
	class      int32
	state      slotState
	prefetched bool  // read by Prefetch and not requested since
	window     bool  // LFU: in the window, not the main part (see victim)
	pending    int8  // reads in flight
	pins       int32 // blocks using it now (at most one: passes are serialised)
	last       uint64
	err        error

	buf  []byte // the class's three parts, each DirectAlign-aligned
	ex   model.Expert
	mats [3]ops.Matrix
	tens [3]tensor.Tensor
}

// table is the cache's bookkeeping without the I/O: which expert each slot
// holds, where each expert is, use counts and the eviction choice. The
// routing-trace simulations of the tests run it alone.
type table struct {
	policy     Policy
	cs         []class
	blockClass []int
	base       []int32 // per block: flat id of its expert 0
	where      []int32 // per flat expert id: its slot, or -1
	freq       []uint32
	slots      []slot
	clock      uint64 // advances once per Fetch
	uses       int64  // since the last halving
	agePeriod  int64
	k          int // experts per token
}

func newTable(l Layout, cs []class, blockClass []int, sz Sizing, p Policy, k int) table {
	t := table{policy: p, cs: cs, blockClass: blockClass, base: make([]int32, len(l.Experts)), k: k}
	n := int32(0)
	for il, xs := range l.Experts {
		t.base[il] = n
		n += int32(len(xs))
	}
	t.where = make([]int32, n)
	for i := range t.where {
		t.where[i] = -1
	}
	t.freq = make([]uint32, n)
	t.slots = make([]slot, sz.Slots)
	lo := 0
	for i := range t.cs {
		t.cs[i].slots, t.cs[i].lo = sz.SlotsPerClass[i], lo
		for s := lo; s < lo+sz.SlotsPerClass[i]; s++ {
			t.slots[s] = slot{x: -1, il: -1, e: -1, class: int32(i)}
		}
		lo += sz.SlotsPerClass[i]
	}
	t.agePeriod = ageSlots * int64(max(sz.Slots, 1))
	for i := range t.cs {
		t.cs[i].winMax = t.cs[i].minWindow(k)
	}
	return t
}

// find is the slot holding expert e of block il, or -1.
func (t *table) find(il, e int) int32 { return t.where[t.base[il]+int32(e)] }

// count records a use of expert e of block il for LFU, halving every
// count once per agePeriod uses.
func (t *table) count(il, e int) {
	x := t.base[il] + int32(e)
	if t.freq[x] < 1<<31 {
		t.freq[x]++
	}
	t.uses++
	if t.uses >= t.agePeriod {
		t.uses = 0
		for i := range t.freq {
			t.freq[i] >>= 1
		}
	}
}

// victim is the slot to take for expert e of block il, which is not
// cached: an empty one if any, else one no block is using and no read is
// filling, or -1 if there is none. It also reports whether e enters the
// window (see below).
//
// LRU takes the least recently used slot. LFU is W-TinyLFU's scheme: a
// newcomer enters a window of the class's slots, sized by observe; when
// the window is full, its least recent expert
// either moves to the main part, evicting the main part's least used
// expert, if it has been used more often, or is evicted itself. The
// window keeps what the next tokens reuse (routing repeats itself from
// token to token); the main part keeps what is used most, and a block
// whose working set exceeds the cache cycles through the window instead
// of evicting every expert before its next use, as LRU does.
func (t *table) victim(c int, il, e int) (s int32, window bool) {
	cl := &t.cs[c]
	main, win, free := int32(-1), int32(-1), int32(-1)
	var mf uint32
	var ml, wl uint64
	for i := cl.lo; i < cl.lo+cl.slots; i++ {
		sl := &t.slots[i]
		if sl.pins > 0 || sl.state == loading {
			continue
		}
		if sl.x < 0 {
			if t.policy != LFU {
				return int32(i), false
			}
			free = int32(i)
			continue
		}
		if sl.window {
			if win < 0 || sl.last < wl {
				win, wl = int32(i), sl.last
			}
			continue
		}
		var f uint32
		if t.policy == LFU {
			f = t.freq[sl.x]
		}
		if main < 0 || f < mf || f == mf && sl.last < ml {
			main, mf, ml = int32(i), f, sl.last
		}
	}
	if t.policy != LFU {
		return main, false
	}
	if free >= 0 {
		// Filling up: the window's least recent moves on to the main part
		// while it has room.
		if win >= 0 && cl.win >= cl.winMax {
			t.slots[win].window = false
			cl.win--
		}
		return free, true
	}
	if win < 0 || main >= 0 && cl.win < cl.winMax {
		return main, true
	}
	if main >= 0 && t.freq[t.slots[win].x] > mf {
		// The window's candidate is worth more than the main part's least:
		// promote it, and the main part's least goes.
		t.slots[win].window = false
		cl.win--
		return main, true
	}
	return win, true
}

// place makes slot s hold expert e of block il, in the window or not,
// evicting what it held; it reports whether something was evicted.
func (t *table) place(s int32, il, e int, window bool) bool {
	sl := &t.slots[s]
	evicted := sl.x >= 0
	if evicted {
		t.where[sl.x] = -1
	}
	cl := &t.cs[sl.class]
	if sl.window {
		cl.win--
	}
	if window {
		cl.win++
	}
	sl.x = t.base[il] + int32(e)
	sl.il, sl.e = int32(il), int32(e)
	sl.prefetched, sl.window = false, window
	sl.last = t.clock
	t.where[sl.x] = s
	return evicted
}

// drop empties slot s.
func (t *table) drop(s int32) {
	sl := &t.slots[s]
	if sl.x >= 0 && t.where[sl.x] == s {
		t.where[sl.x] = -1
	}
	if sl.window {
		t.cs[sl.class].win--
	}
	sl.x, sl.il, sl.e = -1, -1, -1
	sl.state = empty
	sl.prefetched, sl.window = false, false
}

// hit records a use of the cached expert in slot s.
func (t *table) hit(s int32) { t.slots[s].last = t.clock }

// minWindow is the smallest window: room for the newcomers of one token's
// Fetch (k, the experts per token), which stay pinned while it runs; a
// smaller window would make them evict the main part.
func (cl *class) minWindow(k int) int {
	return min(max(int(winMinShare*float64(cl.slots)), k, 1), cl.slots)
}

// observe records that a Fetch of a block of class c missed misses
// experts, and resizes the class's window.
func (t *table) observe(c, misses int) {
	cl := &t.cs[c]
	cl.missAvg += (float64(misses) - cl.missAvg) / winAvg
	w := winTokens * cl.missAvg * float64(cl.blocks)
	if w > winMaxShare*float64(cl.slots) {
		cl.winMax = cl.minWindow(t.k)
		return
	}
	cl.winMax = max(int(w), cl.minWindow(t.k))
}
