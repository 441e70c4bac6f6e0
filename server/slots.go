package server

import (
	"context"
	"errors"
	"sync"
)

var errQueueFull = errors.New("server: queue full")

// slot is one session and what it last held.
type slot struct {
	id      int
	session Session
	prompt  string // the prompt of its last request, for prefix affinity
	loraGen uint64 // Server.loraGen when its session last ran
}

// slots hands out sessions: a free one at once (preferring the one whose
// last prompt shares the longest prefix with the new one, whose KV cache it
// can reuse, and of those the one caching the least), else a place in a
// bounded FIFO queue, else errQueueFull.
type slots struct {
	mu       sync.Mutex
	free     []*slot
	waiting  []chan *slot
	maxQueue int
	busy     int
	// pinned are the waiters for one slot in particular (a slot action
	// on a busy slot waits for it, as llama-server defers the task).
	pinned map[*slot][]chan *slot
}

func newSlots(list []*slot, maxQueue int) *slots {
	return &slots{free: append([]*slot(nil), list...), maxQueue: maxQueue}
}

// acquire returns a slot, waiting in the queue while all are busy.
func (s *slots) acquire(ctx context.Context, prompt string) (*slot, error) {
	s.mu.Lock()
	if len(s.free) > 0 {
		// Of equals, the slot caching the least: what it drops is worth
		// least (an embedding, prompt "", takes an emptied slot first).
		best, bestLen := 0, -1
		for i, sl := range s.free {
			n := commonPrefix(sl.prompt, prompt)
			if n > bestLen || n == bestLen && len(sl.prompt) < len(s.free[best].prompt) {
				best, bestLen = i, n
			}
		}
		sl := s.free[best]
		s.free = append(s.free[:best], s.free[best+1:]...)
		s.busy++
		s.mu.Unlock()
		return sl, nil
	}
	if len(s.waiting) >= s.maxQueue {
		s.mu.Unlock()
		return nil, errQueueFull
	}
	ch := make(chan *slot, 1)
	s.waiting = append(s.waiting, ch)
	s.mu.Unlock()
	return s.await(ctx, ch, func() { s.waiting = removeChan(s.waiting, ch) })
}

// acquireSlot returns sl itself, waiting (outside the queue's bound)
// while a request holds it.
func (s *slots) acquireSlot(ctx context.Context, sl *slot) (*slot, error) {
	s.mu.Lock()
	for i, f := range s.free {
		if f == sl {
			s.free = append(s.free[:i], s.free[i+1:]...)
			s.busy++
			s.mu.Unlock()
			return sl, nil
		}
	}
	ch := make(chan *slot, 1)
	if s.pinned == nil {
		s.pinned = make(map[*slot][]chan *slot)
	}
	s.pinned[sl] = append(s.pinned[sl], ch)
	s.mu.Unlock()
	return s.await(ctx, ch, func() { s.pinned[sl] = removeChan(s.pinned[sl], ch) })
}

// await waits for ch to be handed a slot, or for ctx to end, when leave
// (called under s.mu) takes ch out of the line it waits in.
func (s *slots) await(ctx context.Context, ch chan *slot, leave func()) (*slot, error) {
	select {
	case sl := <-ch:
		return sl, nil
	case <-ctx.Done():
		s.mu.Lock()
		leave()
		s.mu.Unlock()
		// A slot may have been handed over just before we left the line.
		select {
		case sl := <-ch:
			s.release(sl)
		default:
		}
		return nil, ctx.Err()
	}
}

func removeChan(list []chan *slot, ch chan *slot) []chan *slot {
	for i, w := range list {
		if w == ch {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// release returns a slot: to the first waiter for it in particular, else
// to the first waiter, else to the free list.
func (s *slots) release(sl *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pinned[sl]; len(p) > 0 {
		p[0] <- sl // buffered: never blocks
		s.pinned[sl] = p[1:]
		return
	}
	if len(s.waiting) > 0 {
		ch := s.waiting[0]
		s.waiting = s.waiting[1:]
		ch <- sl // buffered: never blocks
		return
	}
	s.busy--
	s.free = append(s.free, sl)
}

// idle returns the slots no request holds.
func (s *slots) idle() map[*slot]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[*slot]bool, len(s.free))
	for _, sl := range s.free {
		out[sl] = true
	}
	return out
}

// queued returns the number of waiting requests and busy slots.
func (s *slots) load() (queued, busy int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting), s.busy
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
