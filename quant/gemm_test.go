package quant

import (
	"fmt"
	"math"
	"testing"
)

// gemmTypes are the types with GEMM kernels, in the row layout and in
// the X8 one.
var gemmTypes = []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K}

// TestGemmsAgree checks every GEMM kernel, the pure-Go one included,
// against the generic dot product on random blocks, for row counts around
// the kernels' four and column counts that fill and part-fill each of the
// assembly's loop widths (4, 8, 16 and 32 columns).
func TestGemmsAgree(t *testing.T) {
	for _, typ := range gemmTypes {
		ks := Gemms(typ)
		if len(ks) == 0 || ks[0].Name != "generic" {
			t.Fatalf("%v: Gemms does not start with the generic kernel: %v", typ, ks)
		}
		for _, k := range ks {
			nbs := []int{1, 2, 3, 8, 13}
			if typ.BlockElems() == QKK {
				nbs = []int{1, 2, 3}
			}
			for _, nb := range nbs {
				for _, rows := range []int{1, 3, 4, 5, 8, 11} {
					for _, cols := range []int{1, 2, 3, 4, 5, 8, 9, 12, 16, 17, 24, 31, 32} {
						seed := uint64(typ)<<40 | uint64(nb)<<16 | uint64(rows)<<8 | uint64(cols)
						r := newRand(seed)
						c := newTileCase(r, typ, nb, rows, cols, r.IntN(8), r.IntN(8), r.IntN(9))
						name := fmt.Sprintf("%v/%s %d blocks %d×%d", typ, k.Name, nb, rows, cols)
						c.check(t, name, func(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
							p := make([]byte, k.PanelBytes(n))
							for i := range p {
								p[i] = 0xA5 // Pack must write every byte it is read by
							}
							k.Pack(n, x, xStride, cols, p)
							k.Mul(n, w, wStride, rows, p, cols, out, outStride)
						})
					}
				}
			}
		}
	}
}

func TestGemmNoAllocs(t *testing.T) {
	for _, typ := range gemmTypes {
		for _, k := range Gemms(typ)[1:] {
			r := newRand(uint64(typ))
			c := newTileCase(r, typ, 2048/typ.BlockElems(), 16, GemmCols, 0, 0, 0)
			p := make([]byte, k.PanelBytes(c.n))
			out := make([]float32, GemmCols*c.outStride)
			if a := testing.AllocsPerRun(10, func() {
				k.Pack(c.n, c.x, c.xStride, c.cols, p)
				k.Mul(c.n, c.w, c.wStride, c.rows, p, c.cols, out, c.outStride)
			}); a != 0 {
				t.Errorf("%v/%s allocates %v times", typ, k.Name, a)
			}
		}
	}
}

// TestGemmNarrowExact checks that a GEMM kernel's narrow loops, which the
// kernel runs for panels of at most 4, 8 or 16 columns, give the bits its
// 32-column loop gives those columns: every column count of a panel, the
// wide loop run on the same panel with cols = 32.
func TestGemmNarrowExact(t *testing.T) {
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K} {
		for _, k := range Gemms(typ)[1:] {
			r := newRand(uint64(typ) << 8)
			nb := 3
			if typ.BlockElems() != QKK {
				nb = 9
			}
			c := newTileCase(r, typ, nb, 5, GemmCols, 0, 0, 0)
			wide := make([]float32, GemmCols*c.outStride)
			narrow := make([]float32, GemmCols*c.outStride)
			p := make([]byte, k.PanelBytes(c.n))
			for cols := 1; cols <= GemmCols; cols++ {
				k.Pack(c.n, c.x, c.xStride, cols, p)
				k.Mul(c.n, c.w, c.wStride, c.rows, p, GemmCols, wide, c.outStride)
				clear(narrow)
				k.Mul(c.n, c.w, c.wStride, c.rows, p, cols, narrow, c.outStride)
				for i := range narrow {
					col, row := i/c.outStride, i%c.outStride
					want := wide[i]
					if col >= cols || row >= c.rows {
						want = 0
					}
					if math.Float32bits(narrow[i]) != math.Float32bits(want) {
						t.Errorf("%v/%s %d columns: row %d col %d: %v, the 32-column loop %v", typ, k.Name, cols, row, col, narrow[i], want)
					}
				}
			}
		}
	}
}
