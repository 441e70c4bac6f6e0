package ops

import (
	"time"

	"github.com/lowmem/llm/quant"
)

// ReadTask streams a buffer through the fastest F32 dot kernel: the bytes
// counted are the bytes read from memory. It measures read bandwidth, the
// bound on decode speed (every weight is read once per token). With one
// stream a worker dots each chunk with itself, so the second operand is a
// cache hit; with two (Streams 2) it dots a chunk of the buffer's first
// half with its twin in the second half, two sequential streams at once.
type ReadTask struct {
	Buf     []byte
	Chunk   int // bytes per work unit; a multiple of 4
	Streams int // 1 (or 0) or 2: sequential streams per worker
	dot     quant.DotFunc
	sink    [8 * 8]float32 // per worker, a cache line apart
}

// NewReadTask prepares a pass over buf in chunks of chunk bytes, one
// stream per worker.
func NewReadTask(buf []byte, chunk int) (*ReadTask, error) {
	dot, err := quant.Dot(quant.F32)
	if err != nil {
		return nil, err
	}
	return &ReadTask{Buf: buf, Chunk: chunk, Streams: 1, dot: dot}, nil
}

// streams is Streams, 1 or 2.
func (r *ReadTask) streams() int { return min(max(r.Streams, 1), 2) }

// Units is the number of work units, the n to give Pool.For.
func (r *ReadTask) Units() int { return len(r.Buf) / r.Chunk / r.streams() }

// Bytes is how many bytes a pass over all Units reads.
func (r *ReadTask) Bytes() int { return r.Units() * r.Chunk * r.streams() }

// Do reads units [lo, hi).
func (r *ReadTask) Do(w, lo, hi int) {
	var s float32
	half := r.Units() * r.Chunk
	for c := lo; c < hi; c++ {
		a := r.Buf[c*r.Chunk : (c+1)*r.Chunk]
		b := a
		if r.streams() == 2 {
			b = r.Buf[half+c*r.Chunk : half+(c+1)*r.Chunk]
		}
		s += r.dot(r.Chunk/4, a, b)
	}
	r.sink[(w%8)*8] += s
}

// ReadBandwidth is the best of passes reads of buf on p, in bytes per
// second, each pass read once with one stream per worker and once with
// two. Two streams matter on Intel's server cores, where one core reading
// one stream keeps too few reads in flight: on an Emerald Rapids VM, 2
// threads, 19.7 GB/s with one against 25.1 with two (the X8 decode
// kernels, which prefetch there, streamed 23-27 GB/s).
func ReadBandwidth(p *Pool, buf []byte, passes int) (float64, error) {
	best := 0.0
	for _, streams := range []int{1, 2} {
		t, err := NewReadTask(buf, 64<<10)
		if err != nil {
			return 0, err
		}
		t.Streams = streams
		for range passes {
			start := time.Now()
			p.For(t.Units(), 1, t)
			best = max(best, float64(t.Bytes())/time.Since(start).Seconds())
		}
	}
	return best, nil
}
