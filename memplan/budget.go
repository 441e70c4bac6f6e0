package memplan

import (
	"sync"
	"sync/atomic"
)

// KVBudget counts the KV cache memory of a model's sessions against what
// its plan leaves for them (Plan.KVLimit, or Residency.MaxKV when resident
// weights make room). It is the one place that decides whether a cache
// may grow. It is safe for concurrent use.
type KVBudget struct {
	limit   int64
	short   func() bool
	weights Yielder
	mu      sync.Mutex // makes the check and the count of Reserve one step
	inUse   atomic.Int64
}

// Yielder is memory the KV caches share with resident weights (package
// residency): the caches take it from blocks that are then read from
// disk, and give it back.
type Yielder interface {
	// Yield makes room for KV caches of kv bytes beside the weights,
	// moving blocks out of memory if needed (which may wait for the
	// forward passes running to end), and reports whether they fit.
	Yield(kv int64) bool
	// Room is the bytes KV caches of kv bytes may grow by without moving
	// any block out of memory.
	Room(kv int64) int64
	// Regain tells the weights the caches shrank: blocks may come back
	// into memory. It must not wait; the weights decide later, looking at
	// the budget under Hold.
	Regain()
}

// NewKVBudget is a budget of limit bytes. short, if not nil, reports that
// memory is short right now (a pressure watcher's verdict): then nothing
// more is reserved, whatever the limit says.
func NewKVBudget(limit int64, short func() bool) *KVBudget {
	return &KVBudget{limit: limit, short: short}
}

// Share makes the caches share their memory with resident weights: a
// reservation that does not fit beside them asks them to Yield, and a
// release lets them Regain. Call it before the first reservation.
func (b *KVBudget) Share(w Yielder) { b.weights = w }

// Limit is the bytes the KV caches may hold together.
func (b *KVBudget) Limit() int64 { return b.limit }

// InUse is the bytes reserved now.
func (b *KVBudget) InUse() int64 { return b.inUse.Load() }

// Room is the bytes the caches may grow by now without taking memory from
// resident weights: what growth should aim for before it asks for more.
func (b *KVBudget) Room() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	in := b.inUse.Load()
	room := b.limit - in
	if b.weights != nil {
		room = min(room, b.weights.Room(in))
	}
	return room
}

// Short reports whether memory is short now, so that nothing should grow.
func (b *KVBudget) Short() bool { return b.short != nil && b.short() }

// Reserve counts extra more bytes if they fit the limit (resident weights
// making room for them) and memory is not short, and reports whether it
// did.
func (b *KVBudget) Reserve(extra int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	in := b.inUse.Load()
	if extra > 0 && b.Short() || in+extra > b.limit {
		return false
	}
	if extra > 0 && b.weights != nil && !b.weights.Yield(in+extra) {
		return false
	}
	b.inUse.Add(extra)
	return true
}

// Force counts n bytes whatever the limit: a session's first small cache,
// which it cannot run without. Resident weights make room for it as far
// as they can.
func (b *KVBudget) Force(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	in := b.inUse.Add(n)
	if n > 0 && b.weights != nil {
		b.weights.Yield(in)
	}
}

// Release gives back n bytes reserved before; resident weights may take
// them.
func (b *KVBudget) Release(n int64) {
	b.mu.Lock()
	b.inUse.Add(-n)
	b.mu.Unlock()
	if n > 0 && b.weights != nil {
		b.weights.Regain()
	}
}

// Hold calls f with the bytes in use, holding reservations back until it
// returns: what f decides from them stays true meanwhile.
func (b *KVBudget) Hold(f func(inUse int64)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b.inUse.Load())
}
