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
// included), then by the X8 layout's first GEMM over the rows repacked. cpuGMAC/s counts multiply-adds per second of thread CPU time.
func BenchmarkPrefill(b *testing.B) {
	for _, typ := range rowGemmTypes {
		p := newPrefillBench(typ)
		p.tile(b)
		for _, g := range Gemms(typ)[1:] {
			p.gemm(b, g.Name, g, func(r0 int, panel []byte, out []float32) {
				g.Mul(p.n, p.w[r0*p.rb:], p.rb, 16, panel, GemmCols, out, p.rows)
			})
		}
		// The X8 layout's GEMM, against panels of the chosen GEMM's packing.
		g, ok := Gemm(typ)
		if !ok || len(x8Variants(typ)) == 0 {
			continue
		}
		rp := make([]byte, X8Bytes(typ, p.rows, p.n))
		if err := RepackX8(typ, rp, p.w, p.rows, p.n); err != nil {
			b.Fatal(err)
		}
		xr := X8Bytes(typ, 8, p.n) / 8
		for _, k := range x8Variants(typ)[:min(1, len(x8Variants(typ)))] {
			p.gemm(b, k.Name, g, func(r0 int, panel []byte, out []float32) {
				k.Mul(p.n, rp[r0*xr:], 2, panel, GemmCols, out, p.rows)
			})
		}
	}
}

// prefillBench is the product BenchmarkPrefill measures for one type:
// rows of n elements of weights w (rb bytes a row) times cols columns of
// activations x (xb bytes a column) into out, column by column.
type prefillBench struct {
	typ                   Type
	n, rows, cols, rb, xb int
	w, x                  []byte
	out                   []float32
}

func newPrefillBench(typ Type) *prefillBench {
	const n, rows, cols = 2048, 1024, 128
	vt := typ.VecDotType()
	r := newRand(uint64(typ))
	return &prefillBench{
		typ: typ, n: n, rows: rows, cols: cols,
		rb:  n / typ.BlockElems() * typ.BlockBytes(),
		xb:  n / vt.BlockElems() * vt.BlockBytes(),
		w:   randBlocks(typ, n/typ.BlockElems()*rows, r, kindRandom),
		x:   randBlocks(vt, n/vt.BlockElems()*cols, r, kindRandom),
		out: make([]float32, rows*cols),
	}
}

// run runs pass, the whole product, on one locked thread and reports
// cpuGMAC/s, multiply-adds per second of thread CPU time.
func (p *prefillBench) run(b *testing.B, pass func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	for b.Loop() {
		pass()
	}
	if t1 := threadCPU(); t0 >= 0 && t1 > t0 {
		b.ReportMetric(float64(b.N)*float64(p.n*p.rows*p.cols)/float64(t1-t0), "cpuGMAC/s")
	}
}

// tile measures the product by the type's chosen tile kernel.
func (p *prefillBench) tile(b *testing.B) {
	k, _ := TileChoice(p.typ)
	b.Run(fmt.Sprintf("%v/tile-%s-%dx%d", p.typ, k.Name, k.Rows, k.Cols), func(b *testing.B) {
		p.run(b, func() {
			for r0 := 0; r0 < p.rows; r0 += k.Rows {
				for c0 := 0; c0 < p.cols; c0 += k.Cols {
					k.Tile(p.n, p.w[r0*p.rb:], p.rb, k.Rows, p.x[c0*p.xb:], p.xb, k.Cols, p.out[c0*p.rows+r0:], p.rows)
				}
			}
		})
	})
}

// gemm measures a GEMM product: the columns packed into panels by g
// (packing included), then mul of the 16 rows from r0 with each panel
// into out from that panel's first column.
func (p *prefillBench) gemm(b *testing.B, name string, g GemmKernel, mul func(r0 int, panel []byte, out []float32)) {
	pb := g.PanelBytes(p.n)
	pk := make([]byte, p.cols/GemmCols*pb)
	b.Run(fmt.Sprintf("%v/gemm-%s", p.typ, name), func(b *testing.B) {
		p.run(b, func() {
			for c0 := 0; c0 < p.cols; c0 += GemmCols {
				g.Pack(p.n, p.x[c0*p.xb:], p.xb, GemmCols, pk[c0/GemmCols*pb:])
			}
			for r0 := 0; r0 < p.rows; r0 += 16 {
				for c0 := 0; c0 < p.cols; c0 += GemmCols {
					mul(r0, pk[c0/GemmCols*pb:], p.out[c0*p.rows+r0:])
				}
			}
		})
	})
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

// BenchmarkX8Prefill is BenchmarkPrefill over the X8 layout, for 8, 16, 32
// and 128 tokens: the GEMM (Mul, packing included) against MatVecN (four
// tokens at a time), each over two groups of rows (16 rows, as ops
// multiplies a batch), one thread. ops.gemmFrom chooses between them.
func BenchmarkX8Prefill(b *testing.B) {
	for _, typ := range gemmTypes {
		ks := x8Variants(typ)
		if len(ks) == 0 {
			continue
		}
		kx := ks[0]
		p := newPrefillBench(typ)
		n, rows, xb, x, out := p.n, p.rows, p.xb, p.x, p.out
		rp := make([]byte, X8Bytes(typ, rows, n))
		if err := RepackX8(typ, rp, p.w, rows, n); err != nil {
			b.Fatal(err)
		}
		gb := X8Bytes(typ, 8, n)
		for _, cols := range []int{8, 16, 32, 128} {
			p.cols = cols
			if kx.Mul != nil {
				g, _ := Gemm(typ)
				pb := g.PanelBytes(n)
				panels := (cols + GemmCols - 1) / GemmCols
				pk := make([]byte, panels*pb)
				b.Run(fmt.Sprintf("%v/%d/gemm-%s", typ, cols, kx.Name), func(b *testing.B) {
					p.run(b, func() {
						for c0 := 0; c0 < cols; c0 += GemmCols {
							g.Pack(n, x[c0*xb:], xb, min(GemmCols, cols-c0), pk[c0/GemmCols*pb:])
						}
						for gr := 0; gr < rows/8; gr += 2 {
							for c0 := 0; c0 < cols; c0 += GemmCols {
								kx.Mul(n, rp[gr*gb:], 2, pk[c0/GemmCols*pb:], min(GemmCols, cols-c0), out[c0*rows+8*gr:], rows)
							}
						}
					})
				})
			}
			if kx.MatVecN != nil {
				b.Run(fmt.Sprintf("%v/%d/multi-%s", typ, cols, kx.Name), func(b *testing.B) {
					p.run(b, func() {
						for gr := 0; gr < rows/8; gr += 2 {
							kx.MatVecN(n, rp[gr*gb:], 2, x, xb, cols, out[8*gr:], rows)
						}
					})
				})
			}
		}
	}
}
