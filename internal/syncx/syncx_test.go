package syncx

import (
	"sync"
	"testing"
)

// TestClose: the first Close sets the flag and wakes a waiter; the second
// reports that it was already closed.
func TestClose(t *testing.T) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	closed := false
	woke := make(chan struct{})
	mu.Lock()
	go func() {
		mu.Lock()
		for !closed {
			cond.Wait()
		}
		mu.Unlock()
		close(woke)
	}()
	mu.Unlock()
	if !Close(cond, &closed) {
		t.Fatal("first Close reported already closed")
	}
	<-woke
	if Close(cond, &closed) {
		t.Error("second Close reported closing")
	}
	if !closed {
		t.Error("flag not set")
	}
}
