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
//
// A job's ranges are not assigned to workers up front: the caller and the
// workers take them from a shared counter, and the caller, once none is
// left, closes the job and waits only for the workers that joined it. A
// worker that is parked, descheduled or still busy with the previous job
// therefore never holds up a job it had no part in — the caller does its
// share instead of waiting for it to wake up.
type Pool struct {
	mu sync.Mutex // one job at a time
	n  int

	// The current job: written by the caller before the job opens, read by
	// workers only after they joined it, and left alone until every worker
	// that joined has left.
	task  Task
	phase *Phase // label of the job's workers; nil when labels are off
	per   int    // indices per range
	total int
	parts int
	next  atomic.Int32 // the next range to take

	// state packs the job's generation (high 32 bits), whether the job is
	// open to workers (bit 31) and how many workers are inside it (low 31
	// bits), so that joining a job and its closing are ordered by one
	// atomic word.
	state atomic.Uint64
	gen   uint64        // the current job's generation; written under mu
	jobs  uint64        // jobs handed to the workers; written under mu
	done  chan struct{} // signalled when the last worker leaves a closed job

	workers []*worker
	closed  atomic.Bool
	stop    sync.Once
}

const (
	jobOpen   = 1 << 31
	jobInside = jobOpen - 1
)

type worker struct {
	sleeping atomic.Bool
	wake     chan struct{}
}

// NewPool starts n-1 workers; the calling goroutine is the n-th. n < 1 is
// treated as 1.
func NewPool(n int) *Pool {
	p := newPool(n)
	for i, w := range p.workers {
		go p.loop(i+1, w)
	}
	return p
}

// newPool makes a pool of n threads without starting its workers' goroutines.
func newPool(n int) *Pool {
	if n < 1 {
		n = 1
	}
	p := &Pool{n: n, done: make(chan struct{}, 1)}
	for i := 1; i < n; i++ {
		p.workers = append(p.workers, &worker{wake: make(chan struct{}, 1)})
	}
	return p
}

// Threads is the number of goroutines that share the work of one call.
func (p *Pool) Threads() int { return p.n }

// Jobs is how many jobs For has handed to the workers so far (calls it ran
// alone on the calling goroutine are not counted): each is one barrier.
func (p *Pool) Jobs() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jobs
}

func (p *Pool) loop(id int, w *worker) {
	// Generation 0 is "no job yet"; reading p.state here instead would miss
	// a job published before this goroutine first ran.
	var seen uint64
	for {
		v, ok := p.await(w, seen)
		if !ok {
			return
		}
		seen = v >> 32
		if !p.join(v) {
			continue // closed before this worker came: nothing to do
		}
		ph := p.phase
		setLabel(ph)
		p.work(id)
		if ph != nil {
			setLabel(phaseIdle)
		}
		// The job's fields must not be read after this.
		if v := p.state.Add(^uint64(0)); v&jobOpen == 0 && v&jobInside == 0 {
			select {
			case p.done <- struct{}{}:
			default: // a token from an earlier job is already there
			}
		}
	}
}

// await polls for a job of a generation other than seen, then parks, and
// returns the state that announced it; false when the pool closed.
func (p *Pool) await(w *worker, seen uint64) (uint64, bool) {
	start := time.Now()
	for spins := 0; ; spins++ {
		if p.closed.Load() {
			return 0, false
		}
		if v := p.state.Load(); v>>32 != seen {
			return v, true
		}
		if spins&63 == 63 {
			if time.Since(start) > spinFor {
				w.sleeping.Store(true)
				if p.state.Load()>>32 == seen && !p.closed.Load() {
					<-w.wake
				}
				w.sleeping.Store(false)
				start = time.Now()
				continue
			}
			runtime.Gosched()
		}
	}
}

// join enters the job state v announced, unless it has closed (or a later
// one replaced it) in the meantime.
func (p *Pool) join(v uint64) bool {
	gen := v >> 32
	for v>>32 == gen && v&jobOpen != 0 {
		if p.state.CompareAndSwap(v, v+1) {
			return true
		}
		v = p.state.Load()
	}
	return false
}

// work runs ranges of the current job until none is left.
func (p *Pool) work(id int) {
	for {
		i := int(p.next.Add(1)) - 1
		if i >= p.parts {
			return
		}
		lo := i * p.per
		p.task.Do(id, lo, min(p.total, lo+p.per))
	}
}

// For splits [0, n) into at most Threads contiguous ranges whose bounds are
// multiples of grain (except the last) and runs t on each in parallel. It
// returns when every range is done. Each range runs on one goroutine, but
// one goroutine may run several ranges (one after the other): the worker
// index Do receives identifies the goroutine, not the range.
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
	p.next.Store(0)
	p.gen++
	p.jobs++
	p.state.Store(p.gen<<32 | jobOpen)
	for _, w := range p.workers {
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	p.work(0)
	// Every range is taken: close the job to latecomers and wait for the
	// workers still inside.
	if p.state.And(^uint64(jobOpen))&jobInside != 0 {
		if ph != nil {
			setLabel(phaseBarrier)
		}
		start := time.Now()
		for spins := 0; p.state.Load()&jobInside != 0; spins++ {
			if spins&63 == 63 {
				if time.Since(start) > spinFor {
					// A token may be stale (from an earlier job whose last
					// worker signalled after the caller saw it leave):
					// recheck.
					for p.state.Load()&jobInside != 0 {
						<-p.done
					}
					break
				}
				runtime.Gosched()
			}
		}
		setLabel(ph)
	}
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
