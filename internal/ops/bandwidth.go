package ops

import (
	"time"

	"github.com/lowmem/llm/quant"
)

// ReadTask streams a buffer through the fastest F32 dot kernel, each chunk
// dotted with itself so that the second operand is a cache hit: the bytes
// counted are the bytes read from memory. It measures read bandwidth, the
// bound on decode speed (every weight is read once per token).
type ReadTask struct {
	Buf   []byte
	Chunk int // bytes per work unit; a multiple of 4
	dot   quant.DotFunc
	sink  [8 * 8]float32 // per worker, a cache line apart
}

// NewReadTask prepares a pass over buf in chunks of chunk bytes.
func NewReadTask(buf []byte, chunk int) (*ReadTask, error) {
	dot, err := quant.Dot(quant.F32)
	if err != nil {
		return nil, err
	}
	return &ReadTask{Buf: buf, Chunk: chunk, dot: dot}, nil
}

// Units is the number of chunks, the n to give Pool.For.
func (r *ReadTask) Units() int { return len(r.Buf) / r.Chunk }

// Do reads chunks [lo, hi).
func (r *ReadTask) Do(w, lo, hi int) {
	var s float32
	for c := lo; c < hi; c++ {
		b := r.Buf[c*r.Chunk : (c+1)*r.Chunk]
		s += r.dot(r.Chunk/4, b, b)
	}
	r.sink[(w%8)*8] += s
}

// ReadBandwidth is the best of passes reads of buf on p, in bytes per second.
func ReadBandwidth(p *Pool, buf []byte, passes int) (float64, error) {
	t, err := NewReadTask(buf, 64<<10)
	if err != nil {
		return 0, err
	}
	best := 0.0
	for range passes {
		start := time.Now()
		p.For(t.Units(), 1, t)
		best = max(best, float64(t.Units()*t.Chunk)/time.Since(start).Seconds())
	}
	return best, nil
}
