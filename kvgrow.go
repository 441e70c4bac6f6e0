package llm

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lowmem/llm/model"
)

// A session's KV cache starts small and grows as tokens arrive, so that a
// session declared with a long context costs only what it uses: it starts
// with kvStartCells cells, doubles up to kvDoubleUpTo cells, then grows in
// steps of about kvStepBytes (less when the memory budget leaves less).
const (
	kvStartCells = 256
	kvDoubleUpTo = 4096
	kvStepBytes  = 1 << 30
	kvStepRound  = 256 // steps are whole multiples of this many cells
)

// WithKVPreallocate makes every session reserve its whole context's KV cache
// when it is created, and write to every page of it, so that the memory is
// really held from the start (and a shortage shows at NewSession, not in
// the middle of generation). Without it the cache starts with 256 cells and
// grows on demand. NewSession fails with ErrOutOfMemoryBudget when the
// reservation does not fit the memory budget.
func WithKVPreallocate() interface {
	Option
	SessionOption
} {
	return bothOption(func(s *settings) { s.kvPrealloc = true })
}

// KVStats describes a session's KV cache.
type KVStats struct {
	Cells        int   // positions the cache holds without growing
	MaxCells     int   // the session's context: the most it grows to
	Used         int   // tokens held
	Bytes        int64 // bytes allocated for keys, values and scales
	Grows        int   // times the cache was enlarged
	Shifts       int   // context shifts (WithContextShift)
	Preallocated bool  // the whole context was reserved at creation
}

// KVStats reports the session's KV cache size and history. A closed
// session reports zeros.
func (s *Session) KVStats() KVStats {
	if s.closed || s.st == nil {
		return KVStats{}
	}
	c := s.st.Cache()
	return KVStats{Cells: c.Cells(), MaxCells: c.MaxCells(), Used: len(s.history), Bytes: c.Bytes(),
		Grows: s.kv.grows, Shifts: s.kv.shifts, Preallocated: s.set.kvPrealloc}
}

// kvSession is a session's KV bookkeeping.
type kvSession struct {
	grows, shifts int
	bytes         int64 // counted in the model's kvAccount
}

// kvAccount tracks the KV memory of a model's sessions against the budget
// the memory plan leaves for it.
type kvAccount struct {
	mu    sync.Mutex // serializes reservations
	inUse atomic.Int64
}

// kvBudget is the memory the plan leaves for KV caches: its limit minus
// every component that is not the KV cache.
func (m *Model) kvBudget() int64 {
	other := m.plan.Total
	for _, c := range m.plan.Components {
		if c.Name == kvComponent || c.Name == kvResizeComponent {
			other -= c.Bytes
		}
	}
	return m.plan.Limit - other
}

// kvGrowthAllowed reports whether the sessions' KV caches may take extra
// more bytes: whether they then still fit the memory plan's budget, and
// memory is not short right now (WithMemoryPressure's watcher). It is the
// one place that decides.
func (m *Model) kvGrowthAllowed(extra int64) bool {
	if extra > 0 && m.underPressure() {
		return false
	}
	return m.kvAcct.inUse.Load()+extra <= m.kvBudget()
}

// kvReserve counts extra bytes of KV memory if kvGrowthAllowed agrees, or
// unconditionally with force.
func (m *Model) kvReserve(extra int64, force bool) bool {
	m.kvAcct.mu.Lock()
	defer m.kvAcct.mu.Unlock()
	if !force && !m.kvGrowthAllowed(extra) {
		return false
	}
	m.kvAcct.inUse.Add(extra)
	return true
}

func (m *Model) kvRelease(n int64) { m.kvReserve(-n, true) }

// kvInitialCells is how many cells a session of these settings starts with.
func kvInitialCells(set settings) int {
	if set.kvPrealloc {
		return set.context
	}
	return min(kvStartCells, set.context)
}

// kvCellBytes is what one more cell costs the full-attention layers (windowed
// layers stop growing at their window).
func kvCellBytes(c *model.Config, t KVType) int64 {
	var full int64
	for il := range c.Layers {
		if !c.WindowedLayer(il) {
			full++
		}
	}
	return full * kvBytes(&model.Config{Layers: 1, HeadsKV: c.HeadsKV, HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV}, t, 1)
}

// kvStepCells is a growth step past kvDoubleUpTo: about stepBytes of KV,
// in whole multiples of kvStepRound cells.
func kvStepCells(c *model.Config, t KVType, stepBytes int64) int {
	per := max(kvCellBytes(c, t), 1)
	return max(int(stepBytes/per)/kvStepRound*kvStepRound, kvStepRound)
}

// kvNextCells is the size the cache grows to from cur cells so that need
// fit: doubling up to kvDoubleUpTo, then steps of step cells; at most limit.
func kvNextCells(cur, need, limit, step int) int {
	n := max(cur, 1)
	for n < need {
		if n < kvDoubleUpTo {
			n = min(2*n, kvDoubleUpTo)
		} else {
			n += step
		}
	}
	return min(n, limit)
}

// growKV makes the session's cache hold need positions, growing it by the
// schedule above when the budget allows, or by just enough when only that
// fits. It returns an error wrapping ErrContextFull when even that would
// break the budget.
func (s *Session) growKV(need int) error {
	c := s.st.Cache()
	cur := c.Cells()
	if need <= cur {
		return nil
	}
	if need > c.MaxCells() {
		return fmt.Errorf("llm: %d tokens do not fit in a context of %d: %w", need, c.MaxCells(), ErrContextFull)
	}
	cfg := &s.m.m.Config
	step := kvStepCells(cfg, s.set.kvType, kvStepBytes)
	// What the budget leaves, less the old layer a resize holds meanwhile.
	_, holds := c.GrowBytes(cur + 1)
	if left := s.m.kvBudget() - s.m.kvAcct.inUse.Load() - holds; left < kvStepBytes {
		step = kvStepCells(cfg, s.set.kvType, max(left, 0))
	}
	target := kvNextCells(cur, need, c.MaxCells(), step)
	added, transient := c.GrowBytes(target)
	if !s.m.kvReserve(added+transient, false) {
		target = need
		added, transient = c.GrowBytes(target)
		if !s.m.kvReserve(added+transient, false) {
			if s.m.underPressure() {
				return fmt.Errorf("llm: not growing the KV cache from %d to %d cells while memory is short: %w", cur, need, ErrContextFull)
			}
			return fmt.Errorf("llm: growing the KV cache from %d to %d cells needs %s more, beyond the memory budget (%s for KV caches, %s in use): %w",
				cur, need, fmtBytes(added+transient), fmtBytes(s.m.kvBudget()), fmtBytes(s.m.kvAcct.inUse.Load()), ErrContextFull)
		}
	}
	start := time.Now()
	err := s.st.Grow(target)
	s.m.kvRelease(transient)
	if err != nil {
		s.m.kvRelease(added)
		return fmt.Errorf("llm: growing the KV cache: %w", err)
	}
	s.kv.bytes += added
	s.kv.grows++
	s.m.set.logger.Debug("llm: KV cache grew", "from", cur, "to", target, "bytes", c.Bytes(),
		"context", c.MaxCells(), "took", time.Since(start))
	return nil
}

// Names of the plan's KV components.
const (
	kvComponent       = "kv cache"
	kvResizeComponent = "kv resize"
)

// kvGrowthComponents annotates the plan's KV component for a cache that
// starts at kvStartCells and grows, and adds what a resize holds besides
// the grown cache: one layer's old storage, at most the size of a layer
// before the last step to the full context. With preallocation there is
// no resize, and the note says the whole cache is reserved.
func kvGrowthComponents(cs []Component, c *model.Config, kvt KVType, ctx int, prealloc bool) []Component {
	i := -1
	for j := range cs {
		if cs[j].Name == kvComponent {
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
	start := min(kvStartCells, ctx)
	if start == ctx {
		return cs
	}
	cs[i].Note += fmt.Sprintf("; starts at %d cells (%s), grows on demand", start, fmtBytes(kvBytes(c, kvt, start)))
	prev := start
	step := kvStepCells(c, kvt, kvStepBytes)
	for n := start; n < ctx; n = kvNextCells(n, n+1, ctx, step) {
		prev = n
	}
	// The largest layer at prev cells: windowed layers are capped by their
	// window, the others hold prev.
	var layer int64
	for il := range c.Layers {
		cells := prev
		if c.WindowedLayer(il) {
			cells = min(cells, c.Window)
		}
		layer = max(layer, kvBytes(&model.Config{Layers: 1, HeadsKV: c.HeadsKV, HeadDimK: c.HeadDimK, HeadDimV: c.HeadDimV}, kvt, cells))
	}
	return append(cs, Component{kvResizeComponent, layer,
		fmt.Sprintf("one old layer held while growing from %d cells to the full context", prev)})
}

// kvPlanInitial is the KV cache a session starts with.
func kvPlanInitial(c *model.Config, kvt KVType, ctx int, prealloc bool) int64 {
	if prealloc {
		return kvBytes(c, kvt, ctx)
	}
	return kvBytes(c, kvt, min(kvStartCells, ctx))
}
