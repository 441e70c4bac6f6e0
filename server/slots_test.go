package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

func testSlots(n, queue int) *slots {
	var list []*slot
	for i := 0; i < n; i++ {
		list = append(list, &slot{id: i})
	}
	return newSlots(list, queue)
}

func TestSlotsPreferCachedPrefix(t *testing.T) {
	s := testSlots(3, 0)
	s.free[0].prompt = "<user>hello"
	s.free[1].prompt = "<user>how are you? fine"
	s.free[2].prompt = ""
	sl, err := s.acquire(context.Background(), "<user>how are you? fine. and you?")
	if err != nil {
		t.Fatal(err)
	}
	if sl.id != 1 {
		t.Errorf("got slot %d, want 1 (longest common prefix)", sl.id)
	}
	// Of slots sharing as much (none), the one caching least.
	if sl, _ = s.acquire(context.Background(), ""); sl.id != 2 {
		t.Errorf("got slot %d, want 2 (caching nothing)", sl.id)
	}
	if sl, _ = s.acquire(context.Background(), "other"); sl.id != 0 {
		t.Errorf("got slot %d, want the last", sl.id)
	}
}

func TestSlotsQueueFIFOAndFull(t *testing.T) {
	s := testSlots(1, 2)
	ctx := context.Background()
	held, err := s.acquire(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 2)
	for i := 0; i < 2; i++ {
		go func(i int) {
			sl, err := s.acquire(ctx, "")
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			s.release(sl)
		}(i)
		waitQueued(t, s, i+1)
	}
	if _, err := s.acquire(ctx, ""); !errors.Is(err, errQueueFull) {
		t.Fatalf("third waiter: %v, want errQueueFull", err)
	}
	s.release(held)
	if a, b := <-order, <-order; a != 0 || b != 1 {
		t.Errorf("served %d then %d, want 0 then 1", a, b)
	}
	if q, busy := s.load(); q != 0 || busy != 0 {
		t.Errorf("queued %d busy %d after all released", q, busy)
	}
}

func TestSlotsCancelWhileQueued(t *testing.T) {
	s := testSlots(1, 4)
	held, _ := s.acquire(context.Background(), "")
	leaveWhileWaiting(t, s, held, func() bool { q, _ := s.load(); return q == 1 }, func(ctx context.Context) error {
		_, err := s.acquire(ctx, "")
		return err
	})
}

// leaveWhileWaiting runs take, which waits for held; once waiting says it
// does, it cancels take's context and checks that take gives up with
// context.Canceled and that held, released, is free again.
func leaveWhileWaiting(t *testing.T, s *slots, held *slot, waiting func() bool, take func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- take(ctx) }()
	waitFor(t, waiting)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	s.release(held)
	if q, busy := s.load(); q != 0 || busy != 0 || len(s.free) != 1 {
		t.Errorf("queued %d busy %d free %d", q, busy, len(s.free))
	}
}

func waitQueued(t *testing.T, s *slots, n int) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if q, _ := s.load(); q == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("queue never reached %d", n)
}

// TestSlotsPinnedFirst: a slot released goes to a waiter for it in
// particular before the queue, and a pinned waiter that gives up leaves
// the slot to the others.
func TestSlotsPinnedFirst(t *testing.T) {
	s := testSlots(1, 4)
	ctx := context.Background()
	held, _ := s.acquire(ctx, "")
	got := make(chan string, 2)
	go func() {
		sl, _ := s.acquire(ctx, "")
		got <- "queued"
		s.release(sl)
	}()
	waitQueued(t, s, 1)
	go func() {
		sl, _ := s.acquireSlot(ctx, held)
		got <- "pinned"
		s.release(sl)
	}()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.pinned[held]) == 1 })
	s.release(held)
	if a, b := <-got, <-got; a != "pinned" || b != "queued" {
		t.Errorf("served %s then %s, want pinned then queued", a, b)
	}

	held, _ = s.acquire(ctx, "")
	leaveWhileWaiting(t, s, held, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.pinned[held]) == 1 },
		func(ctx context.Context) error {
			_, err := s.acquireSlot(ctx, held)
			return err
		})
}
