package quant

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// TestX8 checks every X8 kernel this CPU has against the pure-Go twins
// bit for bit, the GEMM also against the row layout's GEMM kernel (the
// same arithmetic at other addresses) bit for bit, or, for a type whose
// X8 GEMM takes the decode kernels' order, against MatVec's twin column by
// column bit for bit, and both against the row layout's dot products
// within float32 rounding.
func TestX8(t *testing.T) {
	for _, typ := range gemmTypes {
		// Without X8 assembly for typ (purego, arm64, 386, wasm) only the
		// pure-Go twins run, which the amd64 runs check whole: in -short
		// mode (under qemu-user in CI, minutes) a third of the shapes.
		sparse := raceEnabled || testing.Short() && len(x8Variants(typ)) == 0
		// Column counts of every GEMM loop width (4, 8, 16, 32), full and
		// partial; for the 32-element block types also widths of blocks
		// past the last eight (x8Widths).
		for i, tc := range x8Shapes(typ) {
			if !sampled(sparse, int(typ), i, 3) {
				continue
			}
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
				// tol bounds a float32 kernel's distance from the dot
				// product: random scales make terms that cancel, so a
				// bound relative to the result alone is too tight.
				tol := make([]float64, cols*rows)
				for c := 0; c < cols; c++ {
					for i := 0; i < rows; i++ {
						wi, xc := w[i*nb*wb:(i+1)*nb*wb], xs[c*xRow:(c+1)*xRow]
						want[c*rows+i] = dot(n, wi, xc)
						_, mag := refDot(typ, n, wi, xc)
						tol[c*rows+i] = 2 * dotTolerance(typ, n, mag)
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
				near := func(got, want float32, tol float64) bool {
					return math.Abs(float64(got-want)) <= max(tol, 2e-3*math.Max(1, math.Abs(float64(want))))
				}
				for i := range rows {
					if !near(twinVec[i], want[i], tol[i]) {
						t.Errorf("twin MatVec row %d: %v, dot product %v", i, twinVec[i], want[i])
					}
				}
				for i := range twinMul {
					if !near(twinMul[i], want[i], tol[i]) {
						t.Errorf("twin Mul column %d row %d: %v, dot product %v", i/rows, i%rows, twinMul[i], want[i])
					}
					if !x8GemmDecodeOrder(typ) && rowGemm != nil && twinMul[i] != rowGemm[i] {
						t.Errorf("twin Mul column %d row %d: %v, row layout GEMM %v", i/rows, i%rows, twinMul[i], rowGemm[i])
					}
				}
				if x8GemmDecodeOrder(typ) {
					for c := 0; c < cols; c++ {
						matVecX8Go(typ, n, rp, rows/8, xs[c*xRow:(c+1)*xRow], twinVec)
						for i := range rows {
							if twinMul[c*rows+i] != twinVec[i] {
								t.Errorf("twin Mul column %d row %d: %v, twin MatVec %v", c, i, twinMul[c*rows+i], twinVec[i])
							}
						}
					}
					matVecX8Go(typ, n, rp, rows/8, xs[:xRow], twinVec)
				}
				for _, k := range x8Variants(typ) {
					got := make([]float32, rows)
					k.MatVec(n, rp, rows/8, xs[:xRow], got)
					for i := range rows {
						if got[i] != twinVec[i] {
							t.Errorf("%s MatVec row %d: %v, twin %v", k.Name, i, got[i], twinVec[i])
						}
					}
					if k.Mul == nil {
						// Only AVX2's k-quant kernels have none: Q5_K and
						// Q6_K have no AVX2 GEMM in the row layout either,
						// and Q4_K's MatVecN beat its GEMM at every batch.
						if !strings.HasPrefix(k.Name, "avx2-") || !x8GemmDecodeOrder(typ) {
							t.Errorf("%s: no Mul", k.Name)
						}
						continue
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

// x8Shapes are TestX8's widths and column counts for t: the GEMM's loop
// widths at multiples of 256, and for a type of 32-element blocks the
// widths of x8Widths with a few column counts.
func x8Shapes(t Type) []struct{ n, cols int } {
	shapes := []struct{ n, cols int }{{256, 5}, {256, 32}, {2048, 3}, {2048, 8}, {2048, 12}, {2048, 20}, {5632, 4}, {5632, 16}, {5632, 31}}
	for i, n := range x8Widths(t) {
		if n%256 != 0 {
			shapes = append(shapes, struct{ n, cols int }{n, []int{1, 4, 9, 17, 32}[i%5]})
		}
	}
	return shapes
}

// x8Widths are the row widths the X8 tests take for t: multiples of 256,
// and for the types of 32-element blocks widths whose blocks past the
// last eight the kernels take one at a time: fewer than eight blocks
// (32, 96, 224), and those of real models (Qwen2.5-0.5B's 896,
// SmolLM2-360M's 960, Gemma 3 1B's 1152, gpt-oss's 2880).
func x8Widths(t Type) []int {
	ns := []int{256, 2048, 5632}
	if t.BlockElems() == QK {
		ns = append(ns, 32, 96, 224, 288, 896, 960, 1152, 2880)
	}
	return ns
}

// x8GemmDecodeOrder reports whether t's X8 GEMM computes in the decode
// kernels' order (each column equals MatVec bit for bit) rather than the
// row layout GEMM's.
func x8GemmDecodeOrder(t Type) bool { return t == Q4_K || t == Q5_K || t == Q6_K }

func TestX8Choice(t *testing.T) {
	for _, c := range []struct {
		t  Type
		n  int
		ok bool
	}{{Q4_1, 2048, false}, {Q4_0, 2048 + 16, false}, {Q4_0, 65536, false}, {Q4_0, 32768 + 32, false}, {Q5_1, 2048, false},
		{Q8_0, 0, false}, {Q5_K, 65536, false}, {Q4_K, 2048 + 32, false}, {IQ4_XS, 2048 + 32, false}} {
		if _, ok := X8(c.t, c.n); ok != c.ok {
			t.Errorf("X8(%v, %d): ok %v, want %v", c.t, c.n, ok, c.ok)
		}
	}
	// The 32-element block types: any whole number of blocks, as a
	// multiple of 256 does.
	for _, typ := range []Type{Q4_0, Q8_0, IQ4_NL, MXFP4, Q5_0} {
		_, want := X8(typ, 2048)
		for _, n := range []int{32, 96, 2048 + 32, 2880, 32768} {
			if _, ok := X8(typ, n); ok != want {
				t.Errorf("X8(%v, %d): ok %v, want %v as for 2048", typ, n, ok, want)
			}
		}
	}
	for _, typ := range gemmTypes {
		k, ok := X8(typ, 2048)
		ks := x8Variants(typ)
		if ok != (len(ks) > 0 && x8Pays(ks[x8Default(ks)])) {
			t.Errorf("X8(%v): ok %v with %d variants", typ, ok, len(x8Variants(typ)))
		}
		// The default: the plain kernel, or on Intel's AVX-512 cores its
		// twin prefetching into L2 (x8Default).
		if _, named := kernelEnv[typ]; ok && !named {
			want := ks[0].Name
			if cpu.CPU().IntelAVX512() {
				want += "-pf"
			}
			if k.Name != want {
				t.Errorf("X8(%v) = %q, want %q on %v", typ, k.Name, want, cpu.CPU())
			}
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
		{Q4_1, 8, 32, 8 * 20},
		{Q8_0, 12, 32, 12 * 34},
		{Q8_0, 8, 32, 8*34 - 1},
		{Q5_K, 8, 256, 8*176 - 1},
		{Q5_K, 4, 256, 4 * 176},
		{Q4_0, 7, 32, 7 * 18},
		{Q4_0, 8, 33, 8 * 18},
		{Q4_0, 16, 32, 8 * 18},
		{Q4_K, 8, 128, 8 * 144},
		{Q5_0, 8, 32, 8*22 - 1},
		{Q5_0, 4, 32, 4 * 22},
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
func BenchmarkX8(b *testing.B) { benchX8(b, gemmTypes, true, 2048) }

// BenchmarkX8Tail is BenchmarkX8 at gpt-oss's width, 2880 (90 blocks:
// the kernels take the last two one at a time), for the types of
// 32-element blocks, whose rows of that width the X8 layout takes: each
// X8 kernel beside the row layout's, which takes the last two blocks
// with its dot product.
//
//	go test -run XXX -bench 'X8Tail/Q8_0' -benchtime 200ms -count 3 ./quant/
func BenchmarkX8Tail(b *testing.B) { benchX8(b, []Type{Q8_0, Q4_0, IQ4_NL, MXFP4, Q5_0}, true, 2880) }

// x8BenchMatrix is a random matrix of LLM_BENCH_MB megabytes of rows of n
// elements of a type, in its row layout (mat, rb bytes a row) and the X8
// layout (rp, xb bytes a row), and activation rows for tokens tokens (x,
// xRow bytes each).
type x8BenchMatrix struct {
	rb, xb, xRow, rows int
	mat, rp, x         []byte
}

func newX8BenchMatrix(b *testing.B, typ Type, n, tokens int) x8BenchMatrix {
	vt := typ.VecDotType()
	m := x8BenchMatrix{rb: n / typ.BlockElems() * typ.BlockBytes(), xb: X8Bytes(typ, 8, n) / 8,
		xRow: n / vt.BlockElems() * vt.BlockBytes()}
	r := newRand(3)
	m.rows = (benchMB() << 20) / m.rb / 16 * 16
	m.mat = randBlocks(typ, m.rows*n/typ.BlockElems(), r, kindRandom)
	m.rp = make([]byte, X8Bytes(typ, m.rows, n))
	if err := RepackX8(typ, m.rp, m.mat, m.rows, n); err != nil {
		b.Fatal(err)
	}
	m.x = randBlocks(vt, tokens*n/vt.BlockElems(), r, kindRandom)
	return m
}

// benchX8 runs BenchmarkX8 over types at rows of n elements; withRow
// adds the row layout's kernel (TileChoice) over the rows in place beside
// the X8 kernels.
func benchX8(b *testing.B, types []Type, withRow bool, n int) {
	for _, typ := range types {
		bm := newX8BenchMatrix(b, typ, n, 1)
		rb, xb, xRow, rows, mat, rp, x := bm.rb, bm.xb, bm.xRow, bm.rows, bm.mat, bm.rp, bm.x
		out := make([]float32, rows)
		for _, size := range benchSizes(rows, rb) {
			if withRow {
				row, _ := TileChoice(typ)
				b.Run(fmt.Sprintf("%v/%s/row-%s", typ, size.name, row.Name), func(b *testing.B) {
					benchStream(b, int64(size.rows*rb), func() {
						for r0 := 0; r0 < size.rows; r0 += row.Rows {
							row.Tile(n, mat[r0*rb:], rb, min(row.Rows, size.rows-r0), x, xRow, 1, out[r0:], rows)
						}
					})
				})
			}
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

// unrepackX8 is RepackX8's inverse: the rows of the groups in src, row
// after row, to dst.
func unrepackX8(t Type, dst, src []byte, rows, n int) {
	nb, wb, bb := n/t.BlockElems(), t.BlockBytes(), X8BlockBytes(t)
	for g := 0; g < rows/8; g++ {
		for b := 0; b < nb; b++ {
			o := src[(g*nb+b)*bb : (g*nb+b+1)*bb]
			for r := 0; r < 8; r++ {
				blk := dst[((8*g+r)*nb+b)*wb : ((8*g+r)*nb+b+1)*wb]
				switch t {
				case Q4_0, Q8_0:
					copy(blk, o[2*r:2*r+2])
					for c := 0; c < (wb-2)/4; c++ {
						copy(blk[2+4*c:2+4*c+4], o[16+32*c+4*r:])
					}
				case Q6_K:
					copy(blk[208:210], o[2*r:])
					for j := 0; j < 16; j++ {
						blk[192+j] = o[16+8*j+r]
					}
					for i := 0; i < 128; i++ {
						blk[i] = o[x8Q6Low(r, i)]
					}
					for i := 0; i < 64; i++ {
						blk[128+i] = o[x8Q6High(r, i)]
					}
				default:
					copy(blk[:4], o[4*r:])
					// Q4_K's 6-bit packing of the scales and mins.
					sc := func(j int) byte { return o[32+8*j+r] }
					mn := func(j int) byte { return o[96+8*j+r] }
					for j := 0; j < 4; j++ {
						blk[4+j] = sc(j) | sc(j+4)>>4<<6
						blk[8+j] = mn(j) | mn(j+4)>>4<<6
						blk[12+j] = sc(j+4)&0xF | mn(j+4)<<4
					}
					if t == Q5_K {
						for i := 0; i < 32; i++ {
							blk[16+i] = o[x8Q5High(r, i)]
						}
						for i := 0; i < 128; i++ {
							blk[48+i] = o[x8Q5Low(r, i)]
						}
						continue
					}
					for i := 0; i < 128; i++ {
						blk[16+i] = o[160+32*(i/4)+4*r+i%4]
					}
				}
			}
		}
	}
}

// TestRepackX8RoundTrip: repacking and unrepacking gives back the rows
// byte for byte, so the layout holds all of them and nothing else (the
// random blocks' scale bytes use all 96 bits of the k-quants' packing).
func TestRepackX8RoundTrip(t *testing.T) {
	for _, typ := range gemmTypes {
		for _, c := range []struct{ rows, n int }{{8, 256}, {24, 512}, {16, 5632}, {8, 32}, {16, 2880}} {
			if c.n%typ.BlockElems() != 0 {
				continue
			}
			nb := c.n / typ.BlockElems()
			w := randBlocks(typ, c.rows*nb, newRand(uint64(c.n)^uint64(typ)<<40), kindRandom)
			rp := make([]byte, X8Bytes(typ, c.rows, c.n))
			if err := RepackX8(typ, rp, w, c.rows, c.n); err != nil {
				t.Fatal(err)
			}
			back := make([]byte, len(w))
			unrepackX8(typ, back, rp, c.rows, c.n)
			for i := range w {
				if back[i] != w[i] {
					t.Errorf("%v, %d rows of %d: byte %d (row %d) %#x after the round trip, was %#x", typ, c.rows, c.n, i, i/(nb*typ.BlockBytes()), back[i], w[i])
					break
				}
			}
		}
	}
}

// TestX8Multi checks every MatVecN this CPU has against the pure-Go twin
// of MatVec a token at a time, bit for bit, for batches of 1 to 11 tokens
// (every mix of the four-, two- and one-token kernels), with strides
// wider than a row so that a kernel reading or writing another token's
// place shows: the types with a GEMM and the low-bit types, whose twin
// is matVecX8LowGo.
func TestX8Multi(t *testing.T) {
	for _, typ := range append(append([]Type{}, gemmTypes...), x8LowTypes...) {
		twinOf := matVecX8Go
		if slices.Contains(x8LowTypes, typ) {
			twinOf = matVecX8LowGo
		}
		for _, n := range x8Widths(typ) {
			const rows = 24
			nb := n / typ.BlockElems()
			vt := typ.VecDotType()
			xRow := n / vt.BlockElems() * vt.BlockBytes()
			r := newRand(uint64(n) + uint64(typ)<<32 + 7)
			w := randBlocks(typ, rows*nb, r, kindRandom)
			rp := make([]byte, X8Bytes(typ, rows, n))
			if err := RepackX8(typ, rp, w, rows, n); err != nil {
				t.Fatal(err)
			}
			const maxTok = 11
			xStride, outStride := xRow+vt.BlockBytes(), rows+5
			xs := randBlocks(vt, maxTok*xStride/vt.BlockBytes(), r, kindRandom)
			twin := make([]float32, maxTok*rows)
			for k := 0; k < maxTok; k++ {
				twinOf(typ, n, rp, rows/8, xs[k*xStride:k*xStride+xRow], twin[k*rows:(k+1)*rows])
			}
			for _, k := range x8Variants(typ) {
				if k.MatVecN == nil {
					continue
				}
				for tokens := 1; tokens <= maxTok; tokens++ {
					got := make([]float32, tokens*outStride)
					for i := range got {
						got[i] = float32(math.NaN())
					}
					k.MatVecN(n, rp, rows/8, xs, xStride, tokens, got, outStride)
					for tk := 0; tk < tokens; tk++ {
						for i := 0; i < outStride; i++ {
							g := got[tk*outStride+i]
							if i >= rows {
								if !math.IsNaN(float64(g)) {
									t.Errorf("%v/%d %s MatVecN of %d tokens: wrote %v past token %d's rows", typ, n, k.Name, tokens, g, tk)
								}
								continue
							}
							if g != twin[tk*rows+i] {
								t.Errorf("%v/%d %s MatVecN of %d tokens: token %d row %d: %v, twin %v", typ, n, k.Name, tokens, tk, i, g, twin[tk*rows+i])
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkX8Batch is MatVecN on a small batch (1, 2 and 4 tokens) of
// every X8 kernel of Q4_0, Q4_K, Q8_0 and Q6_K, one thread, over a
// matrix of LLM_BENCH_MB megabytes and one the L2 cache holds: MB/s is
// weight bytes, each read once for the batch. Prompts of a few tokens
// (a chat turn) run these, so on a core that keeps too few reads in
// flight they stream the weights as slowly as decode does without
// software prefetch (see x8Default).
//
//	LLM_BENCH_MB=512 go test -run XXX -bench 'X8Batch/.*/dram' ./quant/
func BenchmarkX8Batch(b *testing.B) {
	const n = 2048
	for _, typ := range []Type{Q4_0, Q4_K, Q8_0, Q6_K} {
		bm := newX8BenchMatrix(b, typ, n, 4)
		rb, xb, xRow, rows, rp, x := bm.rb, bm.xb, bm.xRow, bm.rows, bm.rp, bm.x
		out := make([]float32, 4*rows)
		for _, size := range benchSizes(rows, rb) {
			for _, k := range x8Variants(typ) {
				for _, tokens := range []int{1, 2, 4} {
					b.Run(fmt.Sprintf("%v/%s/%s/T%d", typ, size.name, k.Name, tokens), func(b *testing.B) {
						benchStream(b, int64(size.rows*rb), func() {
							for r0 := 0; r0 < size.rows; r0 += 16 {
								k.MatVecN(n, rp[r0*xb:], 2, x, xRow, tokens, out[r0:], rows)
							}
						})
					})
				}
			}
		}
	}
}

// BenchmarkRepackX8 measures the repack at load, per type, over a
// 4096 × 4096 matrix that is already in memory (bytes: the file's).
func BenchmarkRepackX8(b *testing.B) {
	const rows, n = 4096, 4096
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_NL, MXFP4, Q5_0, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M} {
		src := randBlocks(typ, rows*n/typ.BlockElems(), newRand(uint64(typ)), kindRandom)
		dst := make([]byte, X8Bytes(typ, rows, n))
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if err := RepackX8(typ, dst, src, rows, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
