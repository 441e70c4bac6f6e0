package ops

import (
	"fmt"
	"testing"

	"github.com/lowmem/llm/quant"
)

// readTask streams a buffer through the fastest F32 dot kernel, each chunk
// dotted with itself so that the second operand is a cache hit: the
// bytes counted are the bytes read from memory.
type readTask struct {
	buf   []byte
	chunk int
	dot   quant.DotFunc
	sink  [64]float32
}

func (r *readTask) Do(w, lo, hi int) {
	var s float32
	for c := lo; c < hi; c++ {
		b := r.buf[c*r.chunk : (c+1)*r.chunk]
		s += r.dot(r.chunk/4, b, b)
	}
	r.sink[w*8] += s
}

// BenchmarkMemoryRead measures read bandwidth from DRAM with 1 and 2
// threads: the bound on decode speed, which reads every weight once per
// token (tokens/s ≤ bandwidth ÷ model bytes).
func BenchmarkMemoryRead(b *testing.B) {
	const size = 512 << 20
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	dot, err := quant.Dot(quant.F32)
	if err != nil {
		b.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			p := NewPool(threads)
			defer p.Close()
			t := &readTask{buf: buf, chunk: 64 << 10, dot: dot}
			b.SetBytes(size)
			for b.Loop() {
				p.For(size/t.chunk, 1, t)
			}
		})
	}
}
