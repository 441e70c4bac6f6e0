package memplan

import (
	"sync"
	"sync/atomic"
)

// KVBudget counts the KV cache memory of a model's sessions against what
// its plan leaves for them (Plan.KVLimit). It is the one place that decides
// whether a cache may grow. It is safe for concurrent use.
type KVBudget struct {
	limit int64
	short func() bool
	mu    sync.Mutex // makes the check and the count of Reserve one step
	inUse atomic.Int64
}

// NewKVBudget is a budget of limit bytes. short, if not nil, reports that
// memory is short right now (a pressure watcher's verdict): then nothing
// more is reserved, whatever the limit says.
func NewKVBudget(limit int64, short func() bool) *KVBudget {
	return &KVBudget{limit: limit, short: short}
}

// Limit is the bytes the KV caches may hold together.
func (b *KVBudget) Limit() int64 { return b.limit }

// InUse is the bytes reserved now.
func (b *KVBudget) InUse() int64 { return b.inUse.Load() }

// Short reports whether memory is short now, so that nothing should grow.
func (b *KVBudget) Short() bool { return b.short != nil && b.short() }

// Reserve counts extra more bytes if they fit the limit and memory is not
// short, and reports whether it did.
func (b *KVBudget) Reserve(extra int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if extra > 0 && b.Short() || b.inUse.Load()+extra > b.limit {
		return false
	}
	b.inUse.Add(extra)
	return true
}

// Force counts n bytes whatever the limit: a session's first small cache,
// which it cannot run without.
func (b *KVBudget) Force(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inUse.Add(n)
}

// Release gives back n bytes reserved before.
func (b *KVBudget) Release(n int64) { b.Force(-n) }
