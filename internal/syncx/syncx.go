// Package syncx holds the synchronisation steps that more than one of the
// library's packages take the same way.
package syncx

import "sync"

// Close sets *closed, which cond.L guards, and wakes every waiter on cond
// so that each sees it; it reports false, doing nothing, when *closed was
// already set, so that a second Close of the owner is harmless. The owner
// then releases what its waiters held, outside the lock.
func Close(cond *sync.Cond, closed *bool) bool {
	cond.L.Lock()
	defer cond.L.Unlock()
	if *closed {
		return false
	}
	*closed = true
	cond.Broadcast()
	return true
}
