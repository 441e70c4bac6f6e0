package server

import (
	"context"
	"errors"
	"strings"
	"sync"
)

var errQueueFull = errors.New("server: queue full")

// slot is one session and what it last held.
type slot struct {
	id      int
	session Session
	nCtx    int    // its session's context (tokens)
	prompt  string // the prompt of its last request, for prefix affinity
	loraGen uint64 // Server.loraGen when its session last ran

	// mu guards task, which the request holding the slot writes while
	// GET /slots reads it.
	mu   sync.Mutex
	task *slotTask // the running or last task; nil before the first
}

// slotTask is what GET /slots reports of a slot's running or last task,
// as llama-server's slot does: its id, its settings and how far its
// generation got.
type slotTask struct {
	id      int64
	params  Params
	decoded int  // tokens generated
	running bool // llama-server's has_next_token
	newLine bool // a generated token's text held a new line
}

// nPredict is the task's limit of generated tokens as llama-server's
// n_predict gives it: -1 until the context is full.
func (t *slotTask) nPredict() int {
	if t.params.MaxTokens <= 0 {
		return -1
	}
	return t.params.MaxTokens
}

// start makes a task of id with p the slot's running one, and returns
// the function that ends it.
func (sl *slot) start(id int64, p Params) (end func()) {
	t := &slotTask{id: id, params: p, running: true}
	sl.mu.Lock()
	sl.task = t
	sl.mu.Unlock()
	return func() {
		sl.mu.Lock()
		t.running = false
		sl.mu.Unlock()
	}
}

// generated notes text the running task generated, of a token when
// token is set (else text released at the end without one).
func (sl *slot) generated(text string, token bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if token {
		sl.task.decoded++
	}
	sl.task.newLine = sl.task.newLine || strings.Contains(text, "\n")
}

// snapshot is a copy of the slot's running or last task, false before
// its first.
func (sl *slot) snapshot() (slotTask, bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.task == nil {
		return slotTask{}, false
	}
	return *sl.task, true
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
