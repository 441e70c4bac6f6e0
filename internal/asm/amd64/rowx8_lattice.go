package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The X8 kernels of the lattice types (quant's x8_lattice.go for the
// layout), AVX-512 VNNI only, one set per family of levels: IQ2 (IQ2_XXS,
// IQ2_XS, IQ2_S), IQ3_XXS and IQ1 (IQ1_S, IQ1_M):
//
//	row<F>X8VNNI[NTA<d>|PF<d>](w *byte, groups int, x *byte, nb int, out *float32)
//	row<F>X8VNNI[PF4096]T<n>(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)
//
// The layout is IQ4_XS's with a scale for each sixteen elements, so the
// kernels are IQ4_XS's (lutX8, iq4XSX8Multi) with the low- and
// high-nibble sums of a sub-block (its first and second sixteen
// elements) kept apart: each less 128·Σy of its sixteen activations,
// times its own scale (VPMULLD: |S| < 2^26). The family's levels plus 128
// come from a 16-byte table; the super-block's factor is d·d_x·f, f the
// family's power of two (1/8, IQ3_XXS's 1/4), exact.

// x8LatBytes is the lattice types' X8 block column (quant's x8LatBytes).
const x8LatBytes = 16 + 8*16 + 8*128

// latFamily is a family of lattice types that share X8 kernels: their
// name in the kernels', the magnitudes of codes 0..7 (code c stands for
// ±m[c&7], negative when c&8 is set) and the factor f's float32 bits.
type latFamily struct {
	name       string
	magnitudes []int8
	factor     uint32
}

var (
	x8IQ2    = latFamily{"IQ2", []int8{8, 25, 43}, 0x3E000000}
	x8IQ3XXS = latFamily{"IQ3_XXS", []int8{4, 12, 20, 28, 36, 44, 52, 62}, 0x3E800000}
	x8IQ1    = latFamily{"IQ1", []int8{1, 7, 9}, 0x3E000000}
)

// levels is the family's sixteen levels.
func (f latFamily) levels() *[16]int8 {
	var levels [16]int8
	for c := range levels {
		if c&7 < len(f.magnitudes) {
			levels[c] = f.magnitudes[c&7]
		}
		if c&8 != 0 {
			levels[c] = -levels[c]
		}
	}
	return &levels
}

// table is the VPSHUFB table of the family's levels plus 128.
func (f latFamily) table() Mem { return levelTable("lat"+f.name+"X8", f.levels(), true) }

// pre writes, per super-block, 128·Σy of its sixteen 16-element halves
// (the bsums) to the frame: 64 bytes a super-block. It leaves the level
// table in Y14 and f in every lane of Y12.
func (f latFamily) pre() {
	superSums(64, func() {
		c.VPMOVSXWD(mem(RDI, 260), Z1)
		c.VPSLLD(U8(7), Z1, Z1)
		c.VMOVDQU32(Z1, mem(R8, 0))
	})
	c.VBROADCASTI128(f.table(), Y14)
	bcast32(f.factor, Y12)
}

// x8 is the family's decode kernel. Registers: Y0 the rows' sums, Y1 S,
// Y3-Y6 a sub-block's partial sums (Y3 its first sixteen elements, Y5
// its second), Y7, Y8 the scales, Y10/Y13 the factors, Y12 f, Y14 the
// level table, Y15 the 0x0F mask, Y16-Y23 code chunks.
func (f latFamily) x8() x8Decoder {
	return x8Decoder{w: vnni, t: f.name, frame: 64 * 128, preStep: 64, count: 1, pre: f.pre, loop: latX8Loop}
}

// latX8Loop is the block-column loop of the lattice families' decode
// kernels.
func latX8Loop(pf x8Prefetch) {
	prefetchX8(pf, 0, x8LatBytes)
	zero(Y1)
	for j := 0; j < 8; j++ {
		lutSubBlock(144, j)
		for h, s := range []Register{Y3, Y5} {
			sc := yr(7 + h)
			c.VPSUBD_BCST(mem(R8, 4*(2*j+h)), s, s)
			c.VPMOVSXBD(mem(RSI, 16+8*(2*j+h)), sc)
			c.VPMULLD(s, sc, sc)
			c.VPADDD(sc, Y1, Y1)
		}
	}
	latFinish(Y13)
	nextColumn(x8LatBytes)
}

// chunkLevels loads the chunk of code nibbles at disp and leaves its low
// nibbles' levels (plus 128, with the biased table) in lo, its high
// nibbles' in hi (Y14 the table, Y15 0x0F): IQ4_XS's layout and the
// lattice types'.
func chunkLevels(disp int, lo, hi Register) { chunkLevelsOf(vnni, disp, lo, hi) }

// chunkLevelsOf is chunkLevels with AVX2's instructions (avx2: lo and hi
// below Y16) or AVX-512's.
func chunkLevelsOf(w width, disp int, lo, hi Register) {
	if w == avx2 {
		c.VMOVDQU(mem(RSI, disp), lo)
		c.VPSRLW(U8(4), lo, hi)
		c.VPAND(Y15, lo, lo)
		c.VPAND(Y15, hi, hi)
	} else {
		c.VMOVDQU32(mem(RSI, disp), lo)
		c.VPSRLW(U8(4), lo, hi)
		c.VPANDD(Y15, lo, lo)
		c.VPANDD(Y15, hi, hi)
	}
	c.VPSHUFB(lo, Y14, lo)
	c.VPSHUFB(hi, Y14, hi)
}

// x8Multi is the family's x8 for several tokens: each chunk's levels made once
// and faced with each token's activation dwords. Up to four tokens, both
// halves of a sub-block at once: S_k in Y4+k, the halves' sums in Y16+2k
// and Y17+2k, the levels in Y24-Y27, the scales in Y8, Y9. Eight tokens
// have no registers for sixteen sums, so they take a sub-block's halves
// one after the other, its chunks read twice (from L1): S_k in Y16+k,
// the half's sums in Y24+k, the levels in Y8, Y9, the scale in Y10.
func (f latFamily) x8Multi() x8Multi {
	return x8Multi{d: f.x8(), acc: x8Acc, step: x8LatBytes, loop: latX8MultiLoop}
}

// latX8MultiLoop is the block-column loop of the families' multi-token
// kernels (see x8Multi).
func latX8MultiLoop(tokens int) {
	wide := tokens > 4
	sAcc, levels, scales := lowS, []Register{Y24, Y25, Y26, Y27}, []Register{Y8, Y9}
	part := func(k, h int) Register { return yr(16 + 2*k + h) }
	halves := [][]int{{0, 1}}
	if wide {
		sAcc, levels, scales = func(k int) Register { return yr(16 + k) }, []Register{Y8, Y9}, []Register{Y10, Y10}
		part = func(k, _ int) Register { return yr(24 + k) }
		halves = [][]int{{0}, {1}}
	}
	for k := 0; k < tokens; k++ {
		zero(sAcc(k))
	}
	for j := 0; j < 8; j++ {
		for _, hs := range halves {
			for k := 0; k < tokens; k++ {
				for _, h := range hs {
					zero(part(k, h))
				}
			}
			for ch := 0; ch < 4; ch++ {
				if wide {
					v := levels[ch%2]
					c.VMOVDQU32(mem(RSI, 144+32*(4*j+ch)), v)
					if hs[0] == 1 {
						c.VPSRLW(U8(4), v, v)
					}
					c.VPANDD(Y15, v, v)
					c.VPSHUFB(v, Y14, v)
					for k := 0; k < tokens; k++ {
						VPDPBUSDBcast(xTok(k, 4+32*j+16*hs[0]+4*ch), v, part(k, 0))
					}
					continue
				}
				lo, hi := levels[ch%2*2], levels[ch%2*2+1]
				chunkLevels(144+32*(4*j+ch), lo, hi)
				for k := 0; k < tokens; k++ {
					VPDPBUSDBcast(xTok(k, 4+32*j+4*ch), lo, part(k, 0))
					VPDPBUSDBcast(xTok(k, 4+32*j+16+4*ch), hi, part(k, 1))
				}
			}
			for _, h := range hs {
				c.VPMOVSXBD(mem(RSI, 16+8*(2*j+h)), scales[h])
				for k := 0; k < tokens; k++ {
					p := part(k, h)
					c.VPSUBD_BCST(mem(R8, 64*128*k+4*(2*j+h)), p, p)
					c.VPMULLD(p, scales[h], p)
					c.VPADDD(p, sAcc(k), sAcc(k))
				}
			}
		}
	}
	d, dx, f := scales[0], levels[0], levels[1]
	c.VCVTPH2PS(mem(RSI, 0), d)
	c.VMULPS(Y12, d, d)
	for k := 0; k < tokens; k++ {
		c.VCVTDQ2PS(sAcc(k), sAcc(k))
		c.VBROADCASTSS(xTok(k, 0), dx)
		c.VMULPS(dx, d, f)
		c.VFMADD231PS(f, sAcc(k), x8Acc(k))
	}
	nextColumn(x8LatBytes)
}

// x8AVX2 is the family's decode kernel for cores without AVX-512, bit
// for bit x8's: without VPDPBUSD, and with signed levels, each chunk's
// levels (VPSHUFB of the signed table) give their signs to the
// activation dwords (VPSIGNB) and their magnitudes (VPABSB) to
// VPMADDUBSW; two chunks' words (four products of at most 62·127 each)
// add up before VPMADDWD with words 1 makes them the rows' dwords. No
// 128·Σy: the frame holds nothing.
//
// Registers: Y0 the rows' sums, Y1 S, Y3/Y4 the halves' words
// (pairWordSums), Y5 scales, Y6-Y9 a chunk's levels and activations,
// Y10/Y11 the halves' dwords, then the factors, Y12 f, Y13 words 1, Y14
// the signed table, Y15 the 0x0F mask.
func (f latFamily) x8AVX2() x8Decoder {
	return x8Decoder{w: avx2, t: f.name, frame: 8, count: 1,
		pre: func() {
			c.VBROADCASTI128(f.signedTable(), Y14)
			bcast32(f.factor, Y12)
			bcast32(0x00010001, Y13)
		},
		loop: latX8LoopAVX2,
	}
}

// signedTable is the VPSHUFB table of the family's levels.
func (f latFamily) signedTable() Mem {
	return levelTable("lat"+f.name+"X8", f.levels(), false)
}

// latX8LoopAVX2 is the block-column loop of x8AVX2.
func latX8LoopAVX2(pf x8Prefetch) {
	prefetchX8(pf, 0, x8LatBytes)
	zero(Y1)
	for j := 0; j < 8; j++ {
		for k := 0; k < 4; k++ {
			chunkLevelsOf(avx2, 144+32*(4*j+k), Y6, Y7)
			c.VPBROADCASTD(mem(RDI, 4+32*j+4*k), Y8)
			c.VPBROADCASTD(mem(RDI, 4+32*j+16+4*k), Y9)
			c.VPSIGNB(Y6, Y8, Y8)
			c.VPSIGNB(Y7, Y9, Y9)
			c.VPABSB(Y6, Y6)
			c.VPABSB(Y7, Y7)
			pairWordSums(k%2 == 0, Y8, Y6, Y9, Y7)
			if k%2 == 0 {
				continue
			}
			for h, d := range []Register{Y10, Y11} {
				w := []Register{Y3, Y4}[h]
				if k == 1 {
					c.VPMADDWD(Y13, w, d)
					continue
				}
				c.VPMADDWD(Y13, w, w)
				c.VPADDD(w, d, d)
			}
		}
		for h, d := range []Register{Y10, Y11} {
			c.VPMOVSXBD(mem(RSI, 16+8*(2*j+h)), Y5)
			c.VPMULLD(d, Y5, Y5)
			c.VPADDD(Y5, Y1, Y1)
		}
	}
	latFinish(Y11)
	nextColumn(x8LatBytes)
}

// latFinish adds S (Y1) times d·d_x·f to Y0: Y12 f, the d in Y10, d_x
// in dx.
func latFinish(dx Register) {
	c.VCVTDQ2PS(Y1, Y1)
	c.VCVTPH2PS(mem(RSI, 0), Y10)
	c.VBROADCASTSS(mem(RDI, 0), dx)
	c.VMULPS(dx, Y10, Y10)
	c.VMULPS(Y12, Y10, Y10)
	c.VFMADD231PS(Y10, Y1, Y0)
}
