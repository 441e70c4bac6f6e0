package quant

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// tileCase is one tile product laid out in memory with gaps between rows
// and columns, so that a kernel reading or writing outside its rows shows.
type tileCase struct {
	n                    int
	rows, cols           int
	w, x                 []byte
	wStride, xStride     int
	outStride            int
	want, tol            []float32 // per (column, row), from the generic kernel
	wantMag              []float64
	generic              TileFunc
	wOff, xOff, gapBytes int
}

// newTileCase builds rows weight rows and cols activation columns of nb
// blocks each at byte offsets wOff and xOff, gap random bytes apart.
func newTileCase(r *rand.Rand, typ Type, nb, rows, cols, wOff, xOff, gap int) *tileCase {
	vt := typ.VecDotType()
	n := nb * typ.BlockElems()
	rb := nb * typ.BlockBytes()
	xb := n / vt.BlockElems() * vt.BlockBytes()
	c := &tileCase{n: n, rows: rows, cols: cols, wStride: rb + gap, xStride: xb + gap, outStride: rows + 3}
	c.w = make([]byte, wOff+rows*c.wStride)
	c.x = make([]byte, xOff+cols*c.xStride)
	for i := range c.w {
		c.w[i] = byte(r.Uint32())
	}
	for i := range c.x {
		c.x[i] = byte(r.Uint32())
	}
	for i := 0; i < rows; i++ {
		copy(c.w[wOff+i*c.wStride:], randBlocks(typ, nb, r, kindMixed))
	}
	for i := 0; i < cols; i++ {
		copy(c.x[xOff+i*c.xStride:], randBlocks(vt, n/vt.BlockElems(), r, kindMixed))
	}
	c.w = c.w[wOff:]
	c.x = c.x[xOff:]
	// The last row and column end their slices, so reading past them would
	// be caught by the bounds the kernels slice to.
	c.w = c.w[:(rows-1)*c.wStride+rb]
	c.x = c.x[:(cols-1)*c.xStride+xb]
	dot := Kernels(typ)[0].Dot
	c.want = make([]float32, rows*cols)
	c.tol = make([]float32, rows*cols)
	// refDot's magnitude, from per-element magnitudes decoded once per row
	// and column rather than once per product.
	mags := func(t Type, b []byte) []float64 {
		m := make([]float64, n)
		for i := range m {
			_, m[i] = refElem(t, b, i)
		}
		return m
	}
	wm, xm := make([][]float64, rows), make([][]float64, cols)
	for ri := range wm {
		wm[ri] = mags(typ, c.w[ri*c.wStride:ri*c.wStride+rb])
	}
	for ci := range xm {
		xm[ci] = mags(vt, c.x[ci*c.xStride:ci*c.xStride+xb])
	}
	for ci := 0; ci < cols; ci++ {
		for ri := 0; ri < rows; ri++ {
			wr := c.w[ri*c.wStride : ri*c.wStride+rb]
			xc := c.x[ci*c.xStride : ci*c.xStride+xb]
			var mag float64
			for i := range wm[ri] {
				mag += wm[ri][i] * xm[ci][i]
			}
			if typ == Q4_1 || typ == Q5_1 { // the m·s term, as refDot adds it
				for b := 0; b < n/QK; b++ {
					m := FP16ToFP32(binary.LittleEndian.Uint16(wr[b*typ.BlockBytes()+2:]))
					s := FP16ToFP32(binary.LittleEndian.Uint16(xc[b*q8_1Bytes+2:]))
					mag += math.Abs(float64(m) * float64(s))
				}
			}
			c.want[ci*rows+ri] = dot(n, wr, xc)
			c.tol[ci*rows+ri] = float32(2 * dotTolerance(typ, n, mag))
		}
	}
	return c
}

// check runs f on the case and reports results off by more than the
// tolerance and writes outside the tile.
func (c *tileCase) check(t *testing.T, name string, f TileFunc) {
	t.Helper()
	const sentinel = -12345.5
	out := make([]float32, c.cols*c.outStride+5)
	for i := range out {
		out[i] = sentinel
	}
	f(c.n, c.w, c.wStride, c.rows, c.x, c.xStride, c.cols, out, c.outStride)
	bad := 0
	for i, v := range out {
		ci, ri := i/c.outStride, i%c.outStride
		if ci >= c.cols || ri >= c.rows {
			if v != sentinel {
				t.Errorf("%s: out[%d] written outside the tile: %v", name, i, v)
			}
			continue
		}
		want, tol := c.want[ci*c.rows+ri], c.tol[ci*c.rows+ri]
		same := math.IsNaN(float64(want)) && math.IsNaN(float64(v)) || want == v
		if !same && !(math.Abs(float64(v-want)) <= float64(tol)) {
			if bad++; bad <= 3 {
				t.Errorf("%s: row %d col %d: got %g, generic %g (tolerance %g)", name, ri, ci, v, want, tol)
			}
		}
	}
}

func TestTilesAgree(t *testing.T) {
	counts := []int{1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40, 63, 64}
	for _, typ := range dotTypes {
		tiles := Tiles(typ)
		if len(tiles) == 0 || tiles[0].Name != "generic" {
			t.Fatalf("%v: Tiles does not start with the generic kernel: %v", typ, tiles)
		}
		f, rows, cols := Tile(typ)
		k, why := TileChoice(typ)
		if f == nil || rows != k.Rows || cols != k.Cols || !slices.ContainsFunc(tiles, func(c TileKernel) bool { return c.Name == k.Name }) {
			t.Errorf("%v: Tile returns %d×%d, not its choice %s (%s) among Tiles", typ, rows, cols, k.Name, why)
		}
		nbs := counts
		switch typ.BlockElems() {
		case 1:
			nbs = []int{1, 2, 7, 16, 33, 64, 100}
		case QKK:
			nbs = []int{1, 2, 3, 5, 8, 13}
		}
		for ki, k := range tiles[1:] {
			if k.Type != typ {
				t.Errorf("%v/%s: kernel says it is for %v", typ, k.Name, k.Type)
			}
			i := 0
			for _, nb := range nbs {
				for _, rows := range tileRowCounts(k.Rows) {
					if rows > 32 && nb > 3 {
						continue // tall tiles only need their row loops covered
					}
					for cols := 1; cols <= k.Cols; cols++ {
						if i++; !sampled(raceEnabled, ki, i-1, 16) {
							continue
						}
						seed := uint64(typ)<<40 | uint64(nb)<<16 | uint64(rows)<<8 | uint64(cols)
						r := newRand(seed)
						wOff, xOff, gap := r.IntN(8), r.IntN(8), r.IntN(9)
						c := newTileCase(r, typ, nb, rows, cols, wOff, xOff, gap)
						c.check(t, fmt.Sprintf("%v/%s %d blocks %d×%d offsets %d,%d gap %d", typ, k.Name, nb, rows, cols, wOff, xOff, gap), k.Tile)
					}
				}
			}
		}
	}
}

// tileRowCounts returns row counts up to max that cover one and several
// kernel tiles of 4 and every remainder.
func tileRowCounts(max int) []int {
	var rs []int
	for _, r := range []int{1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 17, 32, 45, 63, 64} {
		if r <= max {
			rs = append(rs, r)
		}
	}
	return rs
}

// TestTileSizes checks tiles on the row lengths of real models, which run
// the assembly loops many times.
func TestTileSizes(t *testing.T) {
	for _, typ := range dotTypes {
		for _, n := range []int{2048, 5632} {
			nb := n / typ.BlockElems()
			for ki, k := range Tiles(typ)[1:] {
				if !sampled(raceEnabled, n/2048, ki, 4) {
					continue
				}
				r := newRand(uint64(typ)<<32 | uint64(n))
				c := newTileCase(r, typ, nb, k.Rows, k.Cols, 3, 5, 4)
				c.check(t, fmt.Sprintf("%v/%s n=%d", typ, k.Name, n), k.Tile)
			}
		}
	}
}

func TestTileEmpty(t *testing.T) {
	for _, typ := range dotTypes {
		for _, k := range Tiles(typ) {
			out := []float32{7}
			k.Tile(0, nil, 0, 0, nil, 0, 0, out, 1)
			k.Tile(typ.BlockElems(), nil, 0, 0, nil, 0, 1, out, 1)
			if out[0] != 7 {
				t.Errorf("%v/%s: wrote an empty tile", typ, k.Name)
			}
		}
	}
}

// TestTileUnsupported: Q8_1, an activation type, decodes but has no dot
// product, so no tile either.
func TestTileUnsupported(t *testing.T) {
	if f, _, _ := Tile(Q8_1); f != nil {
		t.Errorf("Tile(Q8_1) is not nil")
	}
	if ts := Tiles(Q8_1); len(ts) != 0 {
		t.Errorf("Tiles(Q8_1) = %v", ts)
	}
}

func TestTileNoAllocs(t *testing.T) {
	for _, typ := range dotTypes {
		for _, k := range Tiles(typ) {
			r := newRand(uint64(typ))
			c := newTileCase(r, typ, 2048/typ.BlockElems(), k.Rows, k.Cols, 0, 0, 0)
			out := make([]float32, k.Cols*c.outStride)
			if a := testing.AllocsPerRun(10, func() {
				k.Tile(c.n, c.w, c.wStride, c.rows, c.x, c.xStride, c.cols, out, c.outStride)
			}); a != 0 {
				t.Errorf("%v/%s allocates %v times", typ, k.Name, a)
			}
		}
	}
}

// BenchmarkTile measures every tile on 2048-element rows: "L1" runs
// one tile over and over; "matrix" a 16 MB matrix as the decode (one
// column) and prefill (full tiles) matrix products do. Bytes are weight
// bytes.
func BenchmarkTile(b *testing.B) {
	const n = 2048
	for _, typ := range []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, MXFP4, F16, F32} {
		nb := n / typ.BlockElems()
		rb := nb * typ.BlockBytes()
		vt := typ.VecDotType()
		xb := n / vt.BlockElems() * vt.BlockBytes()
		r := newRand(uint64(typ))
		rows := (16 << 20) / rb
		mat := make([]byte, rows*rb)
		for i := 0; i < rows; i += 64 {
			copy(mat[i*rb:], randBlocks(typ, nb, r, kindRandom))
		}
		x := randBlocks(vt, 16*n/vt.BlockElems(), r, kindRandom)
		for _, k := range Tiles(typ) {
			out := make([]float32, 16*rows)
			for _, cols := range []int{1, k.Cols} {
				b.Run(fmt.Sprintf("%v/%s/L1/%dx%d", typ, k.Name, k.Rows, cols), func(b *testing.B) {
					b.SetBytes(int64(k.Rows * cols * rb))
					for b.Loop() {
						k.Tile(n, mat, rb, k.Rows, x, xb, cols, out, rows)
					}
				})
				b.Run(fmt.Sprintf("%v/%s/matrix/%dx%d", typ, k.Name, k.Rows, cols), func(b *testing.B) {
					b.SetBytes(int64(cols * len(mat)))
					for b.Loop() {
						for r0 := 0; r0+k.Rows <= rows; r0 += k.Rows {
							k.Tile(n, mat[r0*rb:], rb, k.Rows, x, xb, cols, out[r0:], rows)
						}
					}
				})
			}
		}
	}
}

func TestParseKernelEnv(t *testing.T) {
	var errs strings.Builder
	m := parseKernelEnv(" q4_0=avx512vnni-row, Q6_K=avx2 ,bogus,q9_9=x,q8_0=", &errs)
	want := map[Type]string{Q4_0: "avx512vnni-row", Q6_K: "avx2"}
	if !maps.Equal(m, want) {
		t.Errorf("parseKernelEnv = %v, want %v", m, want)
	}
	if n := strings.Count(errs.String(), "ignored"); n != 3 {
		t.Errorf("want 3 notes on bad entries, got %q", errs.String())
	}
}

// TestTileChoice checks that the choice is one of Tiles and is stable.
func TestTileChoice(t *testing.T) {
	for _, typ := range dotTypes {
		k, why := TileChoice(typ)
		k2, why2 := TileChoice(typ)
		if k.Name != k2.Name || why != why2 || why == "" {
			t.Errorf("%v: TileChoice %s (%s) then %s (%s)", typ, k.Name, why, k2.Name, why2)
		}
		// On Intel's AVX-512 cores decode takes the four-row tiles
		// (tilePrefs).
		_, named := kernelEnv[typ]
		if intelTiles := cpu.CPU().IntelAVX512() && cpu.Has(cpu.AVX512VNNI) && !named; intelTiles &&
			slices.Contains([]Type{Q4_0, Q8_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K}, typ) && k.Name != "avx512vnni" {
			t.Errorf("%v: TileChoice %s on %v, want avx512vnni", typ, k.Name, cpu.CPU())
		}
		t.Logf("%v: %s (%s)", typ, k.Name, why)
	}
}

// sampled reports whether case i of a kernel comparison's sweep runs:
// every case unless sparse, and when sparse one in every, the first one
// of each kernel's included, shifted by key so that neighbouring kernels
// cover different cases. Sweeps are sparse under the race detector, which
// makes the pure-Go references ten times slower (minutes for the tile
// sweep) and has nothing to find in these single-goroutine comparisons;
// the plain runs of CI (go test ./..., -tags purego) run them whole.
func sampled(sparse bool, key, i, every int) bool { return !sparse || (i+key)%every == 0 }

// A token's products are the same bits in a batch and alone for the float
// types: sessions promise that evaluating tokens in one batch or one at a
// time gives the same logits for F16 and F32 weights (every column of the
// 4×4 tiles is computed as the 4×1 tile computes it, and the rows and
// elements left over take the dot product in both).
func TestFloatTileColumnsAlone(t *testing.T) {
	for _, typ := range []Type{F16, F32} {
		f, _, maxCols := Tile(typ)
		for _, n := range []int{16, 64, 1024, 100} {
			for _, rows := range []int{4, 16, 7} {
				r := newRand(uint64(typ)<<20 | uint64(n)<<8 | uint64(rows))
				c := newTileCase(r, typ, n, rows, maxCols, 0, 0, 0)
				batch := make([]float32, maxCols*c.outStride)
				f(c.n, c.w, c.wStride, rows, c.x, c.xStride, maxCols, batch, c.outStride)
				for col := 0; col < maxCols; col++ {
					alone := make([]float32, rows)
					f(c.n, c.w, c.wStride, rows, c.x[col*c.xStride:], c.xStride, 1, alone, 1)
					for row, v := range alone {
						if b := batch[col*c.outStride+row]; math.Float32bits(b) != math.Float32bits(v) {
							t.Errorf("%v n=%d rows=%d: column %d row %d is %v in a batch, %v alone", typ, n, rows, col, row, b, v)
						}
					}
				}
			}
		}
	}
}
