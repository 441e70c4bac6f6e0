package expertcache

import (
	"fmt"

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
	// An expert used once does not push out one used often: it takes the
	// slot of the previous one-off. It is the default: on routing traces
	// it beats LRU at every cache size measured (see the package doc).
	LFU Policy = iota
	// LRU evicts the expert whose last use is the oldest.
	LRU
)

func (p Policy) String() string {
	switch p {
	case LFU:
		return "lfu"
	case LRU:
		return "lru"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ageSlots sets how often LFU halves its counts: after ageSlots uses per
// slot of the cache (uses are experts requested).
const ageSlots = 8

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
}

func newTable(l Layout, cs []class, blockClass []int, sz Sizing, p Policy) table {
	t := table{policy: p, cs: cs, blockClass: blockClass, base: make([]int32, len(l))}
	n := int32(0)
	for il, xs := range l {
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
	t.agePeriod = int64(ageSlots * max(sz.Slots, 1))
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

// victim is the slot of class c to evict for a new expert: an empty one if
// any, else the one the policy values least among those no block is using
// and no read is filling; -1 if there is none.
func (t *table) victim(c int) int32 {
	cl := &t.cs[c]
	best := int32(-1)
	var bf uint32
	var bl uint64
	for s := cl.lo; s < cl.lo+cl.slots; s++ {
		sl := &t.slots[s]
		if sl.pins > 0 || sl.state == loading {
			continue
		}
		if sl.x < 0 {
			return int32(s)
		}
		var f uint32
		if t.policy == LFU {
			f = t.freq[sl.x]
		}
		if best < 0 || f < bf || f == bf && sl.last < bl {
			best, bf, bl = int32(s), f, sl.last
		}
	}
	return best
}

// place makes slot s hold expert e of block il, evicting what it held; it
// reports whether something was evicted.
func (t *table) place(s int32, il, e int) bool {
	sl := &t.slots[s]
	evicted := sl.x >= 0
	if evicted {
		t.where[sl.x] = -1
	}
	sl.x = t.base[il] + int32(e)
	sl.il, sl.e = int32(il), int32(e)
	sl.prefetched = false
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
	sl.x, sl.il, sl.e = -1, -1, -1
	sl.state = empty
	sl.prefetched = false
}
