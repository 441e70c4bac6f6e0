package ops

import (
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
