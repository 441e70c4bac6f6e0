package ops

import (
	"fmt"
	"runtime"
	"runtime/debug"
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
	per     int // indices per worker
	total   int
	parts   int
	gen     atomic.Uint64
	pending atomic.Int32
	done    chan struct{} // signalled when pending reaches 0 and the caller parked

	workers []*worker
	closed  atomic.Bool
	stop    sync.Once
	exited  sync.WaitGroup // the workers, until they return after Close

	// panicked is the first panic of the current job, from any part: For
	// raises it again in the caller once every part is done.
	panicked atomic.Pointer[Panic]
	// hook, when set, runs before every part of every job (SetTestHook).
	hook func(worker int)
}

// Panic is a panic raised while the pool ran a task, in a worker or in the
// caller's own part. A worker recovers it, so the process does not die; For
// waits for every part to finish, so that no worker still reads the job,
// and raises the *Panic again in the goroutine that called it, where a
// recover can turn it into an error. Workers run with
// debug.SetPanicOnFault, so a memory fault on a mapped file that shrank
// (SIGBUS) arrives here as a runtime.Error with an Addr method in Value.
type Panic struct {
	Value any    // what was passed to panic
	Stack []byte // the stack where it happened
}

func (p *Panic) Error() string { return fmt.Sprint(p.Value) }

// Caught is the recovered value r as a *Panic: r itself if it is one (a
// panic carried from a worker keeps the worker's stack), else r with the
// current stack, which in a deferred function is the panicking one's.
func Caught(r any) *Panic {
	if p, ok := r.(*Panic); ok {
		return p
	}
	return &Panic{Value: r, Stack: debug.Stack()}
}

// SetTestHook makes fn run before every part of every job, with the index
// of the part (0 is the caller's): tests use it to raise a panic in a
// worker or in the caller. Set it only while no job runs; nil removes it.
func (p *Pool) SetTestHook(fn func(worker int)) { p.hook = fn }

// run runs one part of the current job, recording a panic instead of
// letting it kill the process.
func (p *Pool) run(t Task, worker, lo, hi int) {
	defer func() {
		if r := recover(); r != nil {
			p.panicked.CompareAndSwap(nil, Caught(r))
		}
	}()
	if p.hook != nil {
		p.hook(worker)
	}
	t.Do(worker, lo, hi)
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
	p.exited.Add(n - 1)
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
	defer p.exited.Done()
	// A fault reading a mapped model file that was truncated is a panic
	// (recovered by run), not the death of the process.
	debug.SetPanicOnFault(true)
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
			lo := id * p.per
			p.run(p.task, id, lo, min(p.total, lo+p.per))
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
// returns when every range is done. A panic in any range is raised again
// here, as a *Panic, once every range is done.
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
		if p.hook != nil {
			p.hook(0)
		}
		t.Do(0, 0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	per := (units + parts - 1) / parts * grain
	// Count only the parts that have work.
	parts = (n + per - 1) / per
	p.task, p.per, p.total, p.parts = t, per, n, parts
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
	p.run(t, 0, 0, min(n, per))
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
	p.task = nil
	if e := p.panicked.Swap(nil); e != nil {
		panic(e)
	}
}

// Close stops the workers and waits until they have returned. The pool
// must not be used afterwards.
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
	p.exited.Wait()
}
