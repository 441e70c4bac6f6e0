package quant

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkPrefill measures a prefill matrix product on one thread: 1024
// rows of 2048 elements times 128 activation
// columns, by the chosen tile kernel (16-row tiles times its columns)
// and by each GEMM kernel (the columns packed into panels first, packing
// included). cpuGMAC/s counts multiply-adds per second of thread CPU time.
func BenchmarkPrefill(b *testing.B) {
	const n, rows, cols = 2048, 1024, 128
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K} {
		nb := n / typ.BlockElems()
		rb := nb * typ.BlockBytes()
		vt := typ.VecDotType()
		xb := n / vt.BlockElems() * vt.BlockBytes()
		r := newRand(uint64(typ))
		w := randBlocks(typ, nb*rows, r, kindRandom)
		x := randBlocks(vt, n/vt.BlockElems()*cols, r, kindRandom)
		out := make([]float32, rows*cols)
		run := func(b *testing.B, f func()) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0 := threadCPU()
			for b.Loop() {
				f()
			}
			if t1 := threadCPU(); t0 >= 0 && t1 > t0 {
				b.ReportMetric(float64(b.N)*float64(n*rows*cols)/float64(t1-t0), "cpuGMAC/s")
			}
		}
		k, _ := TileChoice(typ)
		b.Run(fmt.Sprintf("%v/tile-%s-%dx%d", typ, k.Name, k.Rows, k.Cols), func(b *testing.B) {
			run(b, func() {
				for r0 := 0; r0 < rows; r0 += k.Rows {
					for c0 := 0; c0 < cols; c0 += k.Cols {
						k.Tile(n, w[r0*rb:], rb, k.Rows, x[c0*xb:], xb, k.Cols, out[c0*rows+r0:], rows)
					}
				}
			})
		})
		for _, g := range Gemms(typ)[1:] {
			p := make([]byte, cols/GemmCols*g.PanelBytes(n))
			pb := g.PanelBytes(n)
			b.Run(fmt.Sprintf("%v/gemm-%s", typ, g.Name), func(b *testing.B) {
				run(b, func() {
					for c0 := 0; c0 < cols; c0 += GemmCols {
						g.Pack(n, x[c0*xb:], xb, GemmCols, p[c0/GemmCols*pb:])
					}
					for r0 := 0; r0 < rows; r0 += 16 {
						for c0 := 0; c0 < cols; c0 += GemmCols {
							g.Mul(n, w[r0*rb:], rb, 16, p[c0/GemmCols*pb:], GemmCols, out[c0*rows+r0:], rows)
						}
					}
				})
			})
		}
	}
}

// BenchmarkGemmPack measures packing one panel of 32 columns of 2048
// elements.
func BenchmarkGemmPack(b *testing.B) {
	const n = 2048
	for _, typ := range []Type{Q4_0, Q4_K, Q6_K} {
		vt := typ.VecDotType()
		xb := n / vt.BlockElems() * vt.BlockBytes()
		x := randBlocks(vt, n/vt.BlockElems()*GemmCols, newRand(1), kindRandom)
		g, _ := Gemm(typ)
		p := make([]byte, g.PanelBytes(n))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(x)))
			for b.Loop() {
				g.Pack(n, x, xb, GemmCols, p)
			}
		})
	}
}
