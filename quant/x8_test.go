package quant

import (
	"fmt"
	"math"
	"testing"
)

// TestX8 checks every X8 kernel this CPU has against the pure-Go twins
// bit for bit, the GEMM also against the row layout's GEMM kernel (the
// same arithmetic at other addresses) bit for bit, and both against the
// row layout's dot products within float32 rounding.
func TestX8(t *testing.T) {
	for _, typ := range []Type{Q4_0, Q4_K, Q6_K} {
		// Column counts of every GEMM loop width (4, 8, 16, 32), full and
		// partial.
		for _, tc := range []struct{ n, cols int }{{256, 5}, {256, 32}, {2048, 3}, {2048, 8}, {2048, 12}, {2048, 20}, {5632, 4}, {5632, 16}, {5632, 31}} {
			n, cols := tc.n, tc.cols
			t.Run(fmt.Sprintf("%v/%d/%d", typ, n, cols), func(t *testing.T) {
				const rows = 24
				nb := n / typ.BlockElems()
				wb := typ.BlockBytes()
				vt := typ.VecDotType()
				xRow := n / vt.BlockElems() * vt.BlockBytes()
				r := newRand(uint64(n) + uint64(typ)<<32)
				w := randBlocks(typ, rows*nb, r, kindRandom)
				rp := make([]byte, X8Bytes(typ, rows, n))
				if err := RepackX8(typ, rp, w, rows, n); err != nil {
					t.Fatal(err)
				}
				xs := randBlocks(vt, cols*n/vt.BlockElems(), r, kindRandom)
				dot, _ := Dot(typ)
				want := make([]float32, cols*rows)
				for c := 0; c < cols; c++ {
					for i := 0; i < rows; i++ {
						want[c*rows+i] = dot(n, w[i*nb*wb:(i+1)*nb*wb], xs[c*xRow:(c+1)*xRow])
					}
				}
				g := Gemms(typ)[0]
				p := make([]byte, g.PanelBytes(n))
				g.Pack(n, xs, xRow, cols, p)
				rowGemm := make([]float32, cols*rows)
				if ga, ok := Gemm(typ); ok {
					ga.Mul(n, w, nb*wb, rows, p, cols, rowGemm, rows)
				} else {
					rowGemm = nil
				}
				twinVec := make([]float32, rows)
				matVecX8Go(typ, n, rp, rows/8, xs[:xRow], twinVec)
				twinMul := make([]float32, cols*rows)
				mulX8Go(typ, n, rp, rows/8, p, cols, twinMul, rows)
				near := func(got, want float32) bool {
					return math.Abs(float64(got-want)) <= 2e-3*math.Max(1, math.Abs(float64(want)))
				}
				for i := range rows {
					if !near(twinVec[i], want[i]) {
						t.Errorf("twin MatVec row %d: %v, dot product %v", i, twinVec[i], want[i])
					}
				}
				for i := range twinMul {
					if !near(twinMul[i], want[i]) || rowGemm != nil && twinMul[i] != rowGemm[i] {
						t.Errorf("twin Mul column %d row %d: %v, row layout GEMM %v, dot product %v", i/rows, i%rows, twinMul[i], rowGemm[i], want[i])
					}
				}
				for _, k := range x8Variants(typ) {
					got := make([]float32, rows)
					k.MatVec(n, rp, rows/8, xs[:xRow], got)
					for i := range rows {
						if got[i] != twinVec[i] {
							t.Errorf("%s MatVec row %d: %v, twin %v", k.Name, i, got[i], twinVec[i])
						}
					}
					gm := make([]float32, cols*rows)
					k.Mul(n, rp, rows/8, p, cols, gm, rows)
					for i := range gm {
						if gm[i] != twinMul[i] {
							t.Errorf("%s Mul column %d row %d: %v, twin %v", k.Name, i/rows, i%rows, gm[i], twinMul[i])
						}
					}
				}
			})
		}
	}
}

func TestX8Choice(t *testing.T) {
	for _, c := range []struct {
		t  Type
		n  int
		ok bool
	}{{Q8_0, 2048, false}, {Q4_0, 2048 + 32, false}, {Q4_0, 65536, false}, {Q5_K, 2048, false}} {
		if _, ok := X8(c.t, c.n); ok != c.ok {
			t.Errorf("X8(%v, %d): ok %v, want %v", c.t, c.n, ok, c.ok)
		}
	}
	for _, typ := range []Type{Q4_0, Q4_K, Q6_K} {
		k, ok := X8(typ, 2048)
		if ok != (len(x8Variants(typ)) > 0) {
			t.Errorf("X8(%v): ok %v with %d variants", typ, ok, len(x8Variants(typ)))
		}
		t.Logf("X8(%v): %q %v", typ, k.Name, ok)
	}
}

func TestRepackX8Refuses(t *testing.T) {
	for _, c := range []struct {
		t       Type
		rows, n int
		src     int
	}{
		{Q8_0, 8, 32, 8 * 34},
		{Q4_0, 7, 32, 7 * 18},
		{Q4_0, 8, 33, 8 * 18},
		{Q4_0, 16, 32, 8 * 18},
		{Q4_K, 8, 128, 8 * 144},
	} {
		src := make([]byte, c.src)
		dst := make([]byte, 2*c.src+64)
		if err := RepackX8(c.t, dst, src, c.rows, c.n); err == nil {
			t.Errorf("RepackX8(%v, %d rows, n %d, %d source bytes): no error", c.t, c.rows, c.n, c.src)
		}
	}
}

// BenchmarkX8 is BenchmarkDecode for the X8 layout: decode down a matrix
// of LLM_BENCH_MB megabytes ("dram") or of 256 KB ("l2"), 16 rows a call,
// one thread; bytes are those of the rows in place, so the MB/s compare
// with BenchmarkDecode's.
func BenchmarkX8(b *testing.B) {
	mb := benchMB()
	const n = 2048
	for _, typ := range []Type{Q4_0, Q4_K, Q6_K} {
		nb := n / typ.BlockElems()
		rb := nb * typ.BlockBytes()
		xb := X8Bytes(typ, 8, n) / 8
		vt := typ.VecDotType()
		r := newRand(3)
		rows := (mb << 20) / rb / 16 * 16
		mat := randBlocks(typ, rows*nb, r, kindRandom)
		rp := make([]byte, X8Bytes(typ, rows, n))
		if err := RepackX8(typ, rp, mat, rows, n); err != nil {
			b.Fatal(err)
		}
		x := randBlocks(vt, n/vt.BlockElems(), r, kindRandom)
		out := make([]float32, rows)
		for _, size := range []struct {
			name string
			rows int
		}{{"dram", rows}, {"l2", min(rows, (256<<10)/rb/16*16)}} {
			for _, k := range x8Variants(typ) {
				b.Run(fmt.Sprintf("%v/%s/%s", typ, size.name, k.Name), func(b *testing.B) {
					benchStream(b, int64(size.rows*rb), func() {
						for r0 := 0; r0 < size.rows; r0 += 16 {
							k.MatVec(n, rp[r0*xb:], 2, x, out[r0:])
						}
					})
				})
			}
		}
	}
}
