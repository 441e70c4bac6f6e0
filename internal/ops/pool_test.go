package ops

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type countTask struct {
	hits []atomic.Int32
}

func (c *countTask) Do(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

func TestPoolCoversEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		for _, n := range []int{1, 2, 7, 64, 1000} {
			for _, grain := range []int{0, 1, 4, 16, 2000} {
				c := &countTask{hits: make([]atomic.Int32, n)}
				p.For(n, grain, c)
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 1 {
						t.Fatalf("threads %d n %d grain %d: index %d run %d times", threads, n, grain, i, h)
					}
				}
			}
		}
		p.Close()
	}
}

func TestPoolConcurrentCallers(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for range 200 {
				c := &countTask{hits: make([]atomic.Int32, 100)}
				p.For(100, 1, c)
				for i := range c.hits {
					if c.hits[i].Load() != 1 {
						t.Errorf("index %d run %d times", i, c.hits[i].Load())
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestPoolAllocatesNothing(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 64)}
	if a := testing.AllocsPerRun(100, func() { p.For(64, 8, c) }); a != 0 {
		t.Fatalf("For allocates %.1f times", a)
	}
}

type nopTask struct{}

func (nopTask) Do(_, _, _ int) {}

// BenchmarkPoolFor measures the cost of handing out one job.
func BenchmarkPoolFor(b *testing.B) {
	p := NewPool(2)
	defer p.Close()
	t := &nopTask{}
	for b.Loop() {
		p.For(2, 1, t)
	}
}

// TestPoolNeverWaitsForAbsentWorkers: a pool whose workers never run (as
// if parked and not woken, or descheduled for the whole job) still
// finishes every job: the caller takes the ranges nobody else took and
// waits only for workers that joined.
func TestPoolNeverWaitsForAbsentWorkers(t *testing.T) {
	p := newPool(4) // no goroutines started
	for _, n := range []int{2, 7, 100} {
		c := &countTask{hits: make([]atomic.Int32, n)}
		p.For(n, 1, c)
		for i := range c.hits {
			if h := c.hits[i].Load(); h != 1 {
				t.Fatalf("n %d: index %d run %d times", n, i, h)
			}
		}
	}
	if p.Jobs() != 3 {
		t.Errorf("Jobs() = %d, want 3", p.Jobs())
	}
}

// exclusiveTask checks that no two goroutines run with the same worker
// index at once and that indices are in range, and counts every index.
type exclusiveTask struct {
	threads int
	busy    []atomic.Bool
	hits    []atomic.Int32
	bad     atomic.Int32
	sleep   bool
}

func (x *exclusiveTask) Do(w, lo, hi int) {
	if w < 0 || w >= x.threads || !x.busy[w].CompareAndSwap(false, true) {
		x.bad.Add(1)
		return
	}
	for i := lo; i < hi; i++ {
		x.hits[i].Add(1)
	}
	if x.sleep && w != 0 {
		time.Sleep(20 * time.Microsecond) // a worker that finishes after the caller
	}
	x.busy[w].Store(false)
}

// TestPoolStress runs many jobs of every size, with pauses between some of
// them long enough for the workers to park (so jobs start while workers
// are asleep, waking or still leaving the previous job), from several
// callers at once. Run it with -race: it checks the hand-over of each
// job's fields between the caller and late or early workers.
func TestPoolStress(t *testing.T) {
	for _, threads := range []int{2, 3} {
		p := NewPool(threads)
		var wg sync.WaitGroup
		for c := range 3 {
			wg.Go(func() {
				for j := range 300 {
					n := 1 + (j*7+c)%23
					x := &exclusiveTask{threads: threads, busy: make([]atomic.Bool, threads), hits: make([]atomic.Int32, n), sleep: j%3 == 0}
					p.For(n, 1+j%3, x)
					if x.bad.Load() != 0 {
						t.Errorf("job %d: worker index reused or out of range", j)
						return
					}
					for i := range x.hits {
						if h := x.hits[i].Load(); h != 1 {
							t.Errorf("job %d of %d: index %d run %d times", j, n, i, h)
							return
						}
					}
					if j%50 == 0 {
						time.Sleep(2 * spinFor) // let the workers park
					}
				}
			})
		}
		wg.Wait()
		p.Close()
	}
}

// TestPoolPanic raises a panic in each range of a job in turn, whichever
// goroutine runs it: For must raise it again in the caller as a *Panic, after
// every part has finished, and the pool must go on working.
func TestPoolPanic(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	for part := range 3 {
		p.SetTestHook(func(w int) {
			if w == part {
				panic("injected")
			}
		})
		c := &countTask{hits: make([]atomic.Int32, 30)}
		func() {
			defer func() {
				e, ok := recover().(*Panic)
				if !ok || e.Value != "injected" || len(e.Stack) == 0 {
					t.Errorf("part %d: recovered %v, want a *Panic of the injected value with its stack", part, e)
				}
			}()
			p.For(30, 10, c)
			t.Errorf("part %d: For returned without panicking", part)
		}()
		p.SetTestHook(nil)
		// The other parts ran to completion before For raised the panic.
		for i := range c.hits {
			if h := c.hits[i].Load(); h != 1 && i/10 != part {
				t.Errorf("part %d: index %d run %d times", part, i, h)
			}
		}
		c = &countTask{hits: make([]atomic.Int32, 30)}
		p.For(30, 10, c)
		for i := range c.hits {
			if h := c.hits[i].Load(); h != 1 {
				t.Fatalf("after the panic of part %d: index %d run %d times", part, i, h)
			}
		}
	}
}

// TestPoolCloseWaits checks that Close returns only when the workers have.
func TestPoolCloseWaits(t *testing.T) {
	before := runtime.NumGoroutine()
	p := NewPool(4)
	p.For(8, 1, &countTask{hits: make([]atomic.Int32, 8)})
	p.Close()
	// A worker still counts for a moment after Close's Wait has seen its
	// deferred Done, until it has returned: give it that moment (under
	// qemu-user it took long enough to fail this test once), at most a
	// second.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); after > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after != before {
		t.Fatalf("%d goroutines after Close, %d before NewPool", after, before)
	}
}
