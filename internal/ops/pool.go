package ops

import (
	"sync"
)

// Task is a unit of parallel work over the index range [lo, hi). Implement
// it on a long-lived struct (a pointer receiver) so that handing it to the
// pool does not allocate.
type Task interface {
	Do(worker, lo, hi int)
}

type job struct {
	t      Task
	w      int
	lo, hi int
}

// Pool is a fixed set of worker goroutines created once and reused for
// every parallel operation, so that no goroutine or channel is created per
// token. A Pool is safe for concurrent use; concurrent callers take turns.
type Pool struct {
	mu   sync.Mutex
	n    int
	work []chan job
	done chan struct{}
	stop sync.Once
}

// NewPool starts n-1 workers; the calling goroutine is the n-th. n < 1 is
// treated as 1.
func NewPool(n int) *Pool {
	if n < 1 {
		n = 1
	}
	p := &Pool{n: n, done: make(chan struct{}, n)}
	p.work = make([]chan job, n-1)
	for i := range p.work {
		ch := make(chan job, 1)
		p.work[i] = ch
		go func() {
			for j := range ch {
				j.t.Do(j.w, j.lo, j.hi)
				p.done <- struct{}{}
			}
		}()
	}
	return p
}

// Threads is the number of goroutines that share the work of one call.
func (p *Pool) Threads() int { return p.n }

// For splits [0, n) into at most Threads contiguous ranges whose bounds are
// multiples of grain (except the last) and runs t on each in parallel. It
// returns when every range is done.
func (p *Pool) For(n, grain int, t Task) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	units := (n + grain - 1) / grain
	parts := min(p.n, units)
	if parts <= 1 {
		t.Do(0, 0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	per := (units + parts - 1) / parts * grain
	started := 0
	for w := 1; w < parts; w++ {
		lo := w * per
		if lo >= n {
			break
		}
		p.work[w-1] <- job{t: t, w: w, lo: lo, hi: min(n, lo+per)}
		started++
	}
	t.Do(0, 0, min(n, per))
	for range started {
		<-p.done
	}
}

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	p.stop.Do(func() {
		for _, ch := range p.work {
			close(ch)
		}
	})
}
