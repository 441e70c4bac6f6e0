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

	select {
	case sl := <-ch:
		return sl, nil
	case <-ctx.Done():
		s.mu.Lock()
		for i, w := range s.waiting {
			if w == ch {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		// A slot may have been handed over just before we left the queue.
		select {
		case sl := <-ch:
			s.release(sl)
		default:
		}
		return nil, ctx.Err()
	}
}

// release returns a slot: to the first waiter, or to the free list.
func (s *slots) release(sl *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
