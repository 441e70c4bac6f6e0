package quant

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"testing"
)

func TestQ4_0x8(t *testing.T) {
	const n, rows = 2048, 64
	nb := n / 32
	r := newRand(7)
	w := randBlocks(Q4_0, rows*nb, r, kindRandom)
	x := randBlocks(Q8_0, nb, r, kindRandom)
	rp := make([]byte, len(w))
	RepackQ4_0x8(rp, w, rows, nb)
	xq := make([]byte, nb*32)
	pre := make([]float32, 2*nb)
	x8Pre(xq, pre, x, nb)
	got := make([]float32, rows)
	rowQ4_0x8VNNI(&rp[0], rows/8, &xq[0], &pre[0], nb, &got[0])
	twin := make([]float32, rows)
	rowQ4_0x8Go(rp, rows/8, xq, pre, nb, twin)
	dot, _ := Dot(Q4_0)
	for i := range rows {
		want := dot(n, w[i*nb*18:(i+1)*nb*18], x)
		if math.Abs(float64(got[i]-want)) > 1e-3*math.Max(1, math.Abs(float64(want))) || math.Abs(float64(got[i]-twin[i])) > 1e-4*math.Max(1, math.Abs(float64(want))) {
			t.Errorf("row %d: asm %v twin %v dot %v", i, got[i], twin[i], want)
		}
	}
}

func BenchmarkDecodeX8(b *testing.B) {
	mb := 128
	if s := os.Getenv("LLM_BENCH_MB"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			mb = v
		}
	}
	const n = 2048
	nb := n / 32
	rb := nb * 18
	r := newRand(3)
	rows := (mb << 20) / rb / 16 * 16
	mat := make([]byte, rows*rb)
	for i := 0; i < rows; i += 16 {
		copy(mat[i*rb:], randBlocks(Q4_0, nb*16, r, kindRandom))
	}
	rp := make([]byte, len(mat))
	RepackQ4_0x8(rp, mat, rows, nb)
	x := randBlocks(Q8_0, nb, r, kindRandom)
	xq := make([]byte, nb*32)
	pre := make([]float32, 2*nb)
	x8Pre(xq, pre, x, nb)
	out := make([]float32, rows)
	for _, size := range []struct {
		name string
		rows int
	}{{"dram", rows}, {"l2", min(rows, (256<<10)/rb/16*16)}} {
		for _, k := range []struct {
			name string
			f    func(w *byte, groups int, xq *byte, pre *float32, nb int, out *float32)
		}{{"x8", rowQ4_0x8VNNI}, {"x8-nta", rowQ4_0x8VNNINTA4096}} {
			b.Run(fmt.Sprintf("%s/%s", size.name, k.name), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(size.rows * rb))
				t0 := threadCPU()
				for b.Loop() {
					for r0 := 0; r0 < size.rows; r0 += 16 {
						k.f(&rp[r0*rb], 2, &xq[0], &pre[0], nb, &out[r0])
					}
				}
				if t1 := threadCPU(); t0 >= 0 && t1 > t0 {
					b.ReportMetric(float64(b.N)*float64(size.rows*rb)/float64(t1-t0)*1e3, "cpuMB/s")
				}
			})
		}
	}
}
