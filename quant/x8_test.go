package quant

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestX8 checks the X8 kernels this CPU has against the row layout's dot
// products and the pure-Go twins, decode and GEMM.
func TestX8(t *testing.T) {
	for _, n := range []int{256, 2048, 5632} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			const rows = 24
			nb := n / QK
			r := newRand(uint64(n))
			w := randBlocks(Q4_0, rows*nb, r, kindRandom)
			rp := make([]byte, len(w))
			if err := RepackX8(Q4_0, rp, w, rows, n); err != nil {
				t.Fatal(err)
			}
			dot, _ := Dot(Q4_0)
			const cols = 5
			xs := randBlocks(Q8_0, cols*nb, r, kindRandom)
			xRow := nb * q8_0Bytes
			want := make([]float32, cols*rows)
			for c := 0; c < cols; c++ {
				for i := 0; i < rows; i++ {
					want[c*rows+i] = dot(n, w[i*nb*q4_0Bytes:(i+1)*nb*q4_0Bytes], xs[c*xRow:(c+1)*xRow])
				}
			}
			g, _ := Gemm(Q4_0)
			if len(Gemms(Q4_0)) > 0 {
				g = Gemms(Q4_0)[0]
			}
			p := make([]byte, g.PanelBytes(n))
			g.Pack(n, xs, xRow, cols, p)
			kernels := append([]X8Kernel{{Name: "generic", Type: Q4_0, MatVec: matVecX8Q4_0, Mul: mulX8Q4_0}}, x8Variants()...)
			twinVec := make([]float32, rows)
			matVecX8Q4_0(n, rp, rows/8, xs[:xRow], twinVec)
			twinMul := make([]float32, cols*rows)
			mulX8Q4_0(n, rp, rows/8, p, cols, twinMul, rows)
			for _, k := range kernels {
				got := make([]float32, rows)
				k.MatVec(n, rp, rows/8, xs[:xRow], got)
				for i := range rows {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-3*math.Max(1, math.Abs(float64(want[i]))) || got[i] != twinVec[i] {
						t.Errorf("%s MatVec row %d: %v, twin %v, dot product %v", k.Name, i, got[i], twinVec[i], want[i])
					}
				}
				gm := make([]float32, cols*rows)
				k.Mul(n, rp, rows/8, p, cols, gm, rows)
				for i := range gm {
					if d := math.Abs(float64(gm[i] - want[i])); d > 1e-3*math.Max(1, math.Abs(float64(want[i]))) || gm[i] != twinMul[i] {
						t.Errorf("%s Mul column %d row %d: %v, twin %v, dot product %v", k.Name, i/rows, i%rows, gm[i], twinMul[i], want[i])
					}
				}
			}
		})
	}
}

func TestRepackX8Refuses(t *testing.T) {
	buf := make([]byte, 8*18)
	for _, c := range []struct {
		t       Type
		rows, n int
	}{{Q8_0, 8, 32}, {Q4_0, 7, 32}, {Q4_0, 8, 33}, {Q4_0, 16, 32}} {
		if err := RepackX8(c.t, buf, buf[:0:0], c.rows, c.n); err == nil {
			t.Errorf("RepackX8(%v, %d rows, n %d): no error", c.t, c.rows, c.n)
		}
	}
}

// BenchmarkX8 is BenchmarkDecode for the X8 layout: decode down a matrix
// of LLM_BENCH_MB megabytes ("dram") or of 256 KB ("l2"), 16 rows a call,
// one thread; the Q4_0 row kernels' figures are BenchmarkDecode/Q4_0.
func BenchmarkX8(b *testing.B) {
	mb := 128
	if s := os.Getenv("LLM_BENCH_MB"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			mb = v
		}
	}
	const n = 2048
	nb := n / QK
	rb := nb * q4_0Bytes
	r := newRand(3)
	rows := (mb << 20) / rb / 16 * 16
	mat := make([]byte, rows*rb)
	for i := 0; i < rows; i += 16 {
		copy(mat[i*rb:], randBlocks(Q4_0, nb*16, r, kindRandom))
	}
	rp := make([]byte, len(mat))
	if err := RepackX8(Q4_0, rp, mat, rows, n); err != nil {
		b.Fatal(err)
	}
	x := randBlocks(Q8_0, nb, r, kindRandom)
	out := make([]float32, rows)
	for _, size := range []struct {
		name string
		rows int
	}{{"dram", rows}, {"l2", min(rows, (256<<10)/rb/16*16)}} {
		for _, k := range x8Variants() {
			b.Run(size.name+"/"+k.Name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(size.rows * rb))
				t0 := threadCPU()
				for b.Loop() {
					for r0 := 0; r0 < size.rows; r0 += 16 {
						k.MatVec(n, rp[r0*rb:], 2, x, out[r0:])
					}
				}
				if t1 := threadCPU(); t0 >= 0 && t1 > t0 {
					b.ReportMetric(float64(b.N)*float64(size.rows*rb)/float64(t1-t0)*1e3, "cpuMB/s")
				}
			})
		}
	}
}
