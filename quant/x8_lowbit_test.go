package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

var x8LowTypes = []Type{IQ4_XS, Q3_K, Q2_K, IQ4_NL, MXFP4, Q5_0, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M}

// x8LowRow rebuilds row r's block of the block column gb of the X8 layout
// of low-bit type t, in the file's layout: the repack's inverse.
func x8LowRow(t Type, gb []byte, r int) []byte {
	blk := make([]byte, t.BlockBytes())
	switch t {
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M:
		x8LatRow(t, gb, r, blk)
	case IQ4_XS:
		blk[0], blk[1] = gb[2*r], gb[2*r+1]
		var sh uint16
		for j := 0; j < 8; j++ {
			u := byte(int8(gb[16+8*j+r]) + 32)
			blk[4+j/2] |= u & 0xF << (4 * (j % 2))
			sh |= uint16(u>>4) << (2 * j)
		}
		blk[2], blk[3] = byte(sh), byte(sh>>8)
		for k := 0; k < 32; k++ {
			copy(blk[8+4*k:8+4*k+4], gb[80+32*k+4*r:])
		}
	case IQ4_NL:
		blk[0], blk[1] = gb[2*r], gb[2*r+1]
		for c := 0; c < 4; c++ {
			copy(blk[2+4*c:2+4*c+4], gb[16+32*c+4*r:])
		}
	case Q5_0:
		blk[0], blk[1] = gb[2*r], gb[2*r+1]
		var qh uint32
		for e := 0; e < QK; e++ {
			c := byte(x8LowCode(t, gb, r, e))
			qh |= uint32(c>>4) << e
			blk[6+e%16] |= c & 0xF << (4 * (e / 16))
		}
		binary.LittleEndian.PutUint32(blk[2:], qh)
	case MXFP4:
		blk[0] = gb[r]
		for c := 0; c < 4; c++ {
			copy(blk[1+4*c:1+4*c+4], gb[8+32*c+4*r:])
		}
	case IQ3_S:
		blk[0], blk[1] = gb[2*r], gb[2*r+1]
		for j := 0; j < 8; j++ {
			blk[106+j/2] |= (gb[16+8*j+r] - 1) / 2 << (4 * (j % 2))
			for k := 0; k < 8; k++ {
				// The grid entry from its four magnitudes, the signs as
				// they are.
				var u uint16
				for e := 0; e < 4; e++ {
					c := x8LowCode(t, gb, r, 32*j+4*k+e)
					u |= uint16(c&7) << (3 * e)
					blk[74+4*j+k/2] |= byte(c>>3) << (4*(k%2) + e)
				}
				i := iq3sTables().index[u]
				blk[2+8*j+k] = byte(i)
				blk[66+j] |= byte(i>>8) << k
			}
		}
	case Q2_K:
		copy(blk[80:84], gb[4*r:])
		for i := 0; i < 16; i++ {
			blk[i] = gb[x8PairScale(32, r, i)]
		}
		for k := 0; k < 16; k++ {
			copy(blk[16+4*k:16+4*k+4], gb[160+32*k+4*r:])
		}
	case Q3_K:
		blk[108], blk[109] = gb[2*r], gb[2*r+1]
		for i := 0; i < 16; i++ {
			u := byte(int8(gb[x8PairScale(16, r, i)]) + 32)
			blk[96+i%8] |= u & 0xF << (4 * (i / 8))
			blk[104+i%4] |= u >> 4 << (2 * (i / 4))
		}
		// The codes back from x8LowCode, which the twin reads.
		for e := 0; e < QKK; e++ {
			u := byte(x8LowCode(t, gb, r, e))
			h, j, l := e/128, e%128/32, e%32
			blk[32+32*h+l] |= u & 3 << (2 * j)
			blk[l] |= u >> 2 << (4*h + j)
		}
	}
	return blk
}

// TestX8Lowbit checks the low-bit types' X8 layouts: the repack round
// trip, the pure-Go twin (so its reading of the codes)
// against the row layout's dot product within float32 rounding, and every
// kernel this CPU has against the twin bit for bit.
func TestX8Lowbit(t *testing.T) {
	for _, typ := range x8LowTypes {
		for _, kind := range []blockKind{kindRandom, kindMixed} {
			for _, n := range x8Widths(typ) {
				t.Run(fmt.Sprintf("%v/%d/%d", typ, kind, n), func(t *testing.T) {
					const rows = 24
					nb := n / typ.BlockElems()
					wb := typ.BlockBytes()
					bb := X8BlockBytes(typ)
					vt := typ.VecDotType()
					r := newRand(uint64(n) + uint64(typ)<<32 + uint64(kind)<<40)
					w := randBlocks(typ, rows*nb, r, kind)
					rp := make([]byte, X8Bytes(typ, rows, n))
					if err := RepackX8(typ, rp, w, rows, n); err != nil {
						t.Fatal(err)
					}
					for g := 0; g < rows/8; g++ {
						for b := 0; b < nb; b++ {
							gb := rp[(g*nb+b)*bb : (g*nb+b+1)*bb]
							for i := 0; i < 8; i++ {
								src := w[((8*g+i)*nb+b)*wb : ((8*g+i)*nb+b+1)*wb]
								if got := x8LowRow(typ, gb, i); string(got) != string(src) {
									t.Fatalf("row %d block %d: round trip gives %x, the file has %x", 8*g+i, b, got, src)
								}
							}
						}
					}
					x := randBlocks(vt, n/vt.BlockElems(), r, kindRandom)
					// The pure-Go dot product: the random activations hold
					// −128, which quantized ones never do and the lattice
					// types' assembly sign flips assume away.
					dot := Kernels(typ)[0].Dot
					twin := make([]float32, rows)
					matVecX8LowGo(typ, n, rp, rows/8, x, twin)
					for i := range rows {
						want := dot(n, w[i*nb*wb:(i+1)*nb*wb], x)
						if math.Abs(float64(twin[i]-want)) > 2e-3*math.Max(1, math.Abs(float64(want))) {
							t.Errorf("twin row %d: %v, dot product %v", i, twin[i], want)
						}
					}
					for _, k := range x8Variants(typ) {
						if k.Mul != nil {
							t.Errorf("%s: a GEMM for a type without one in the row layout", k.Name)
						}
						got := make([]float32, rows)
						k.MatVec(n, rp, rows/8, x, got)
						for i := range rows {
							if got[i] != twin[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(twin[i]))) {
								t.Errorf("%s row %d: %v, twin %v", k.Name, i, got[i], twin[i])
							}
						}
					}
				})
			}
		}
	}
}

func TestX8LowbitChoice(t *testing.T) {
	for _, typ := range x8LowTypes {
		k, ok := X8(typ, 2048)
		if ok != (len(x8Variants(typ)) > 0) {
			t.Errorf("X8(%v): ok %v with %d variants", typ, ok, len(x8Variants(typ)))
		}
		// Whole blocks: IQ4_NL's are 32 elements.
		if _, ok2080 := X8(typ, 2048+32); ok2080 != (ok && typ.BlockElems() == QK) {
			t.Errorf("X8(%v, 2080): ok %v", typ, ok2080)
		}
		t.Logf("X8(%v): %q %v", typ, k.Name, ok)
		for _, c := range []struct{ rows, n, src int }{
			{7, 256, 7}, {12, 256, 12}, {8, 128, 8}, {16, 256, 8},
		} {
			src := make([]byte, c.src*typ.BlockBytes())
			dst := make([]byte, 2*X8Bytes(typ, 16, 256))
			if err := RepackX8(typ, dst, src, c.rows, c.n); err == nil {
				t.Errorf("RepackX8(%v, %d rows, n %d, %d blocks): no error", typ, c.rows, c.n, c.src)
			}
		}
	}
}

// BenchmarkX8Lowbit is BenchmarkX8 for the low-bit types, with the row
// layout's kernel (TileChoice) beside the X8 ones; bytes are those of the
// rows in place.
func BenchmarkX8Lowbit(b *testing.B) { benchX8(b, x8LowTypes, true, 2048) }

// BenchmarkX8LowbitPrefill is BenchmarkPrefill for the low-bit types:
// the row layout's tile kernel against the X8 decode kernel a token at a
// time and the multi-token kernel (MatVecN, the batch's path in ops) over
// two groups of rows (16 rows, as ops multiplies a batch), one thread.
func BenchmarkX8LowbitPrefill(b *testing.B) {
	for _, typ := range x8LowTypes {
		p := newPrefillBench(typ)
		n, rows, cols, xb, x, out := p.n, p.rows, p.cols, p.xb, p.x, p.out
		rp := make([]byte, X8Bytes(typ, rows, n))
		if err := RepackX8(typ, rp, p.w, rows, n); err != nil {
			b.Fatal(err)
		}
		gb := X8Bytes(typ, 8, n)
		p.tile(b)
		for _, kx := range x8Variants(typ)[:min(1, len(x8Variants(typ)))] {
			b.Run(fmt.Sprintf("%v/%s", typ, kx.Name), func(b *testing.B) {
				p.run(b, func() {
					for g := 0; g < rows/8; g += 2 {
						for c := 0; c < cols; c++ {
							kx.MatVec(n, rp[g*gb:], 2, x[c*xb:(c+1)*xb], out[c*rows+8*g:])
						}
					}
				})
			})
			if kx.MatVecN == nil {
				continue
			}
			b.Run(fmt.Sprintf("%v/%s-multi", typ, kx.Name), func(b *testing.B) {
				p.run(b, func() {
					for g := 0; g < rows/8; g += 2 {
						kx.MatVecN(n, rp[g*gb:], 2, x, xb, cols, out[8*g:], rows)
					}
				})
			})
		}
	}
}

// TestX8MXFP4AllExponents: MXFP4's X8 kernels, which make the E8M0
// exponents floats themselves, agree with the twin (e8m0Half's
// 2^(e−128), TestE8M0Half) bit for bit at every exponent byte, the
// subnormal scales and 0xFF included, a row's blocks each at its own:
// one block a row, and nine (the eight-block loop, then one). A NaN
// (where products overflow and meet as Inf − Inf) agrees with a NaN.
func TestX8MXFP4AllExponents(t *testing.T) {
	for _, n := range []int{32, 288} {
		const rows = 256
		nb := n / QK
		r := newRand(uint64(n) + 4242)
		w := randBlocks(MXFP4, rows*nb, r, kindRandom)
		for i := 0; i < rows; i++ {
			for b := 0; b < nb; b++ {
				w[(i*nb+b)*mxfp4Bytes] = byte(i + 29*b)
			}
		}
		rp := make([]byte, X8Bytes(MXFP4, rows, n))
		if err := RepackX8(MXFP4, rp, w, rows, n); err != nil {
			t.Fatal(err)
		}
		const tokens = 3
		xRow := nb * q8_0Bytes
		x := randBlocks(Q8_0, tokens*nb, r, kindRandom)
		twin := make([]float32, tokens*rows)
		for k := 0; k < tokens; k++ {
			matVecX8LowGo(MXFP4, n, rp, rows/8, x[k*xRow:(k+1)*xRow], twin[k*rows:(k+1)*rows])
		}
		same := func(a, b float32) bool { return a == b || math.IsNaN(float64(a)) && math.IsNaN(float64(b)) }
		for _, k := range x8Variants(MXFP4) {
			got := make([]float32, tokens*rows)
			k.MatVec(n, rp, rows/8, x, got)
			k.MatVecN(n, rp, rows/8, x[xRow:], xRow, tokens-1, got[rows:], rows)
			for i, g := range got {
				if !same(g, twin[i]) {
					t.Errorf("%s, n %d, token %d, row %d (e = %d): %g, twin %g", k.Name, n, i/rows, i%rows, i%rows, g, twin[i])
				}
			}
		}
	}
}

// x8LatRow is x8LowRow for the lattice types: each group's grid index
// found from its levels (the IQ1 types' with its offset's sign), its
// signs from the codes' sign bits (the eighth, IQ2_XXS's, IQ2_XS's and
// IQ3_XXS's parity, dropped), its scale code from the half sub-blocks'
// 2s+1.
func x8LatRow(t Type, gb []byte, r int, blk []byte) {
	var grid []uint64
	switch t {
	case IQ2_XXS:
		grid = iq2xxsGrid[:]
	case IQ2_XS:
		grid = iq2xsGrid[:]
	case IQ2_S:
		grid = iq2sGrid[:]
	case IQ3_XXS:
		for _, g := range iq3xxsGrid {
			grid = append(grid, uint64(g))
		}
	default:
		grid = iq1sGrid[:]
	}
	index := map[uint64]int{}
	for i, g := range grid {
		index[g] = i
	}
	d := le16(gb[2*r:])
	binary.LittleEndian.PutUint16(blk, d)
	lv := latX8Levels(t)
	var iq1m [4]uint16
	for g := 0; g < 32; g++ {
		var point uint64
		var signs uint32
		neg := false // an IQ1 group's offset −1/8
		for e := 0; e < 8; e++ {
			c := x8LowCode(t, gb, r, 8*g+e)
			v := lv[c]
			if t == IQ1_S || t == IQ1_M {
				// 8·grid + 1, or 8·grid − 1 for the offset −1/8.
				p := map[int8]struct {
					grid int8
					neg  bool
				}{9: {1, false}, 7: {1, true}, 1: {0, false}, -1: {0, true}, -7: {-1, false}, -9: {-1, true}}[v]
				neg = p.neg
				point |= uint64(uint8(p.grid)) << (8 * e)
				continue
			}
			if v < 0 {
				signs |= 1 << e
				v = -v
			}
			point |= uint64(v) << (8 * e)
		}
		s := uint32(gb[16+8*(g/2)+r]-1) / 2
		j, k := g/4, g%4
		switch t {
		case IQ2_XXS:
			blk[2+8*j+k] = byte(index[point])
			aux := le32(blk[2+8*j+4:]) | (signs&127)<<(7*uint(k)) | s<<28
			binary.LittleEndian.PutUint32(blk[2+8*j+4:], aux)
		case IQ2_XS:
			binary.LittleEndian.PutUint16(blk[2+2*g:], uint16(index[point]|int(signs&127)<<9))
			blk[66+j] |= byte(s) << (4 * (k / 2))
		case IQ2_S:
			i := index[point]
			blk[2+g] = byte(i)
			blk[66+j] |= byte(i>>8) << (2 * k)
			blk[34+g] = byte(signs)
			blk[74+j] |= byte(s) << (4 * (k / 2))
		case IQ3_XXS:
			blk[2+8*j+2*k] = byte(index[point&0xFFFFFFFF])
			blk[2+8*j+2*k+1] = byte(index[point>>32])
			aux := le32(blk[66+4*j:]) | (signs&127)<<(7*uint(k)) | s<<28
			binary.LittleEndian.PutUint32(blk[66+4*j:], aux)
		case IQ1_S:
			i := index[point]
			blk[2+g] = byte(i)
			qh := uint32(le16(blk[34+2*j:])) | uint32(i>>8)<<(3*uint(k)) | s<<12
			if neg {
				qh |= 0x8000
			}
			binary.LittleEndian.PutUint16(blk[34+2*j:], uint16(qh))
		case IQ1_M:
			i := index[point]
			blk[g] = byte(i)
			h := byte(i>>8) & 7
			if neg {
				h |= 8
			}
			blk[32+2*j+k/2] |= h << (4 * (k % 2))
			iq1m[j/2] |= uint16(s) << (6*(j%2) + 3*(k/2))
		}
	}
	if t == IQ1_M {
		for i := range iq1m {
			iq1m[i] |= (d >> (4 * i) & 0xF) << 12
			binary.LittleEndian.PutUint16(blk[48+2*i:], iq1m[i])
		}
	}
}
