package ops

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// BenchmarkMemoryRead measures read bandwidth from DRAM with 1 and 2
// threads: the bound on decode speed, which reads every weight once per
// token (tokens/s ≤ bandwidth ÷ model bytes).
func BenchmarkMemoryRead(b *testing.B) {
	const size = 512 << 20
	buf := onesF32(size)
	for _, threads := range []int{1, 2} {
		for _, streams := range []int{1, 2} {
			b.Run(fmt.Sprintf("threads=%d/streams=%d", threads, streams), func(b *testing.B) {
				p := NewPool(threads)
				defer p.Close()
				t, err := NewReadTask(buf, 64<<10)
				if err != nil {
					b.Fatal(err)
				}
				t.Streams = streams
				b.SetBytes(int64(t.Bytes()))
				for b.Loop() {
					p.For(t.Units(), 1, t)
				}
			})
		}
	}
}

// TestReadTaskCoversBuffer: with one stream or two, a pass reads every
// chunk once; over a buffer of float32 ones each chunk's dot product is
// its element count, so the workers' sums add up to the buffer's.
func TestReadTaskCoversBuffer(t *testing.T) {
	const chunk = 4 << 10
	buf := onesF32(6 * chunk)
	p := NewPool(2)
	defer p.Close()
	for _, streams := range []int{1, 2} {
		r, err := NewReadTask(buf, chunk)
		if err != nil {
			t.Fatal(err)
		}
		r.Streams = streams
		p.For(r.Units(), 1, r)
		var sum float32
		for _, v := range r.sink {
			sum += v
		}
		if r.Bytes() != len(buf) || r.Units() != 6/streams || sum != float32(r.Units()*chunk/4) {
			t.Errorf("streams %d: %d units, %d bytes, sum %v; want %d, %d, %d", streams, r.Units(), r.Bytes(), sum, 6/streams, len(buf), 6/streams*chunk/4)
		}
	}
}

// onesF32 is n bytes of float32 ones for ReadTask to read. Not a byte
// pattern: bytes read as float32 include subnormals, for which the FMAs
// of Intel cores take a slow path (BenchmarkMemoryRead 2 GB/s instead of
// 20 on Emerald Rapids).
func onesF32(n int) []byte {
	buf := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(1))
	}
	return buf
}
