package ops

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Task is a unit of parallel work over the index range [lo, hi). Implement
// it on a long-lived struct (a pointer receiver) so that handing it to the
// pool does not allocate.
type Task interface {
	Do(worker, lo, hi int)
}

// spinFor is how long an idle worker keeps polling for the next job before
// it parks. A decode step hands the pool a job every few microseconds, so
// polling saves a scheduler wake-up per matrix; between steps the workers
// park and leave the CPU to the rest of the program.
const spinFor = 50 * time.Microsecond

// Pool is a fixed set of worker goroutines created once and reused for
// every parallel operation, so that no goroutine or channel is created per
// token. A Pool is safe for concurrent use; concurrent callers take turns.
type Pool struct {
	mu sync.Mutex // one job at a time
	n  int

	// The current job, published before gen is incremented.
	task    Task
	phase   *Phase // label of the job's workers; nil when labels are off
	per     int    // indices per worker
	total   int
	parts   int
	gen     atomic.Uint64
	pending atomic.Int32
	done    chan struct{} // signalled when pending reaches 0 and the caller parked

	workers []*worker
	closed  atomic.Bool
	stop    sync.Once
}

type worker struct {
	sleeping atomic.Bool
	wake     chan struct{}
}

// NewPool starts n-1 workers; the calling goroutine is the n-th. n < 1 is
// treated as 1.
func NewPool(n int) *Pool {
	if n < 1 {
		n = 1
	}
	p := &Pool{n: n, done: make(chan struct{}, 1)}
	for i := 1; i < n; i++ {
		w := &worker{wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go p.loop(i, w)
	}
	return p
}

// Threads is the number of goroutines that share the work of one call.
func (p *Pool) Threads() int { return p.n }

func (p *Pool) loop(id int, w *worker) {
	// Generation 0 is "no job yet"; reading p.gen here instead would miss a
	// job published before this goroutine first ran.
	var seen uint64
	for {
		// Wait for a new generation: poll for a while, then park.
		start := time.Now()
		for spins := 0; p.gen.Load() == seen; spins++ {
			if p.closed.Load() {
				return
			}
			if spins&63 == 63 {
				if time.Since(start) > spinFor {
					w.sleeping.Store(true)
					if p.gen.Load() == seen && !p.closed.Load() {
						<-w.wake
					}
					w.sleeping.Store(false)
					start = time.Now()
					continue
				}
				runtime.Gosched()
			}
		}
		seen = p.gen.Load()
		if p.closed.Load() {
			return
		}
		if id < p.parts {
			ph := p.phase
			setLabel(ph)
			lo := id * p.per
			p.task.Do(id, lo, min(p.total, lo+p.per))
			if ph != nil {
				setLabel(phaseIdle)
			}
		}
		// Every worker reports, with or without work, so that no worker still
		// reads this job's fields when the caller publishes the next one.
		if p.pending.Add(-1) == 0 {
			select {
			case p.done <- struct{}{}:
			default: // a token from an earlier job is already there
			}
		}
	}
}

// For splits [0, n) into at most Threads contiguous ranges whose bounds are
// multiples of grain (except the last) and runs t on each in parallel. It
// returns when every range is done.
func (p *Pool) For(n, grain int, t Task) { p.run(nil, n, grain, t) }

// run is For with the workers labelled ph (nil: no labels).
func (p *Pool) run(ph *Phase, n, grain int, t Task) {
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
	// Count only the parts that have work.
	parts = (n + per - 1) / per
	p.task, p.phase, p.per, p.total, p.parts = t, ph, per, n, parts
	p.pending.Store(int32(len(p.workers)))
	p.gen.Add(1)
	for _, w := range p.workers {
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	t.Do(0, 0, min(n, per))
	if ph != nil {
		setLabel(phaseBarrier)
	}
	start := time.Now()
	for spins := 0; p.pending.Load() != 0; spins++ {
		if spins&63 == 63 {
			if time.Since(start) > spinFor {
				// A token may be stale (from an earlier job whose last worker
				// signalled after the caller saw pending reach 0): recheck.
				for p.pending.Load() != 0 {
					<-p.done
				}
				break
			}
			runtime.Gosched()
		}
	}
	setLabel(ph)
	p.task, p.phase = nil, nil
}

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	p.stop.Do(func() {
		p.closed.Store(true)
		for _, w := range p.workers {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	})
}
