package memplan

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/kv"
)

// A session's KV cache starts small and grows as tokens arrive, so that a
// session declared with a long context costs only what it uses: it starts
// with StartCells cells, doubles up to DoubleUpTo cells, then grows in
// steps of about StepBytes (less when the memory budget leaves less), in
// whole multiples of StepRound cells.
const (
	StartCells = 256
	DoubleUpTo = 4096
	StepBytes  = 1 << 30
	StepRound  = 256
)

// InitialCells is how many cells a session's cache of context cells
// starts with: StartCells, or all of them when preallocated.
func InitialCells(context int, prealloc bool) int {
	if prealloc {
		return context
	}
	return min(StartCells, context)
}

// initialKV is the cache configuration a session starts with.
func initialKV(c kv.Config, prealloc bool) kv.Config {
	c.Initial = InitialCells(c.Cells, prealloc)
	return c
}

// cellBytes is what one more cell costs a cache of c past the windows of
// its sliding-window layers: the layers that grow to the full context.
func cellBytes(c kv.Config) int64 {
	added, _ := kv.GrowBytes(c, c.Cells-1, c.Cells)
	return added
}

// StepCells is a growth step past DoubleUpTo for a cache of c: about
// stepBytes of KV, in whole multiples of StepRound cells (at least one).
func StepCells(c kv.Config, stepBytes int64) int {
	per := max(cellBytes(c), 1)
	return max(int(stepBytes/per)/StepRound*StepRound, StepRound)
}

// NextCells is the size a cache grows to from cur cells so that need fit:
// doubling up to DoubleUpTo, then steps of step cells; never more than
// step at once (a small step is what the memory budget leaves); at most
// limit.
func NextCells(cur, need, limit, step int) int {
	n := max(cur, 1)
	for n < need {
		if n < DoubleUpTo {
			n = min(2*n, DoubleUpTo, n+max(step, 1))
		} else {
			n += step
		}
	}
	return min(n, limit)
}

// kvGrowthComponents annotates the plan's KV component for a cache of c
// that starts at StartCells and grows, and adds what a resize holds
// besides the grown cache: one layer's old storage, at most a layer of
// one cell less than the full context (the last growth may be a small
// one, when memory is short). With preallocation there is no resize, and
// the note says the whole cache is reserved.
func kvGrowthComponents(cs []Component, c kv.Config, prealloc bool) []Component {
	i := -1
	for j := range cs {
		if cs[j].Name == KVComponent {
			i = j
		}
	}
	if i < 0 {
		return cs
	}
	if prealloc {
		cs[i].Note += "; reserved and touched at session creation (WithKVPreallocate)"
		return cs
	}
	start := InitialCells(c.Cells, false)
	if start == c.Cells {
		return cs
	}
	cs[i].Note += fmt.Sprintf("; starts at %d cells (%s), grows on demand", start, FormatBytes(kv.Bytes(initialKV(c, false))))
	_, held := kv.GrowBytes(c, c.Cells-1, c.Cells)
	return slices.Insert(cs, i+1, Component{KVResizeComponent, held, "one old layer held while the cache grows"})
}
