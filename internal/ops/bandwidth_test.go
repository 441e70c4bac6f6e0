package ops

import (
	"fmt"
	"testing"
)

// BenchmarkMemoryRead measures read bandwidth from DRAM with 1 and 2
// threads: the bound on decode speed, which reads every weight once per
// token (tokens/s ≤ bandwidth ÷ model bytes).
func BenchmarkMemoryRead(b *testing.B) {
	const size = 512 << 20
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			p := NewPool(threads)
			defer p.Close()
			t, err := NewReadTask(buf, 64<<10)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			for b.Loop() {
				p.For(t.Units(), 1, t)
			}
		})
	}
}
