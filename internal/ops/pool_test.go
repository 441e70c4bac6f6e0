package ops

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
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

// TestPoolPanic raises a panic in each part of a job in turn (0 is the
// caller's own): For must raise it again in the caller as a *Panic, after
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
	if after := runtime.NumGoroutine(); after != before {
		t.Fatalf("%d goroutines after Close, %d before NewPool", after, before)
	}
}
