package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The X8 kernels of the 2-bit lattice types IQ2_XXS, IQ2_XS and IQ2_S,
// one set for the three (quant's x8_iq2.go for the layout), AVX-512 VNNI
// only:
//
//	rowIQ2X8VNNI[NTA<d>|PF<d>](w *byte, groups int, x *byte, nb int, out *float32)
//	rowIQ2X8VNNI[PF4096]T<n>(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)
//
// The layout is IQ4_XS's with a scale for each sixteen elements, so the
// kernels are IQ4_XS's (lutX8, iq4XSX8Multi) with the low- and
// high-nibble sums of a sub-block (its first and second sixteen
// elements) kept apart: each less 128·Σy of its sixteen
// activations, times its own scale (VPMULLD: |S| < 2^27). The levels
// ±8, ±25, ±43 plus 128 come from a 16-byte table; the super-block's
// factor is d·d_x/8, the power of two exact.

// x8IQ2Bytes is the IQ2 types' X8 block column (quant's x8IQ2Bytes).
const x8IQ2Bytes = 16 + 8*16 + 8*128

// iq2X8Table is the VPSHUFB table of the IQ2 codes' levels plus 128:
// code c stands for ±{8, 25, 43}[c&3], negative when c&8 is set.
func iq2X8Table() Mem {
	var levels [16]int8
	for c := range levels {
		levels[c] = [4]int8{8, 25, 43, 0}[c&3]
		if c&8 != 0 {
			levels[c] = -levels[c]
		}
	}
	return levelTable("iq2X8", &levels, true)
}

// iq2X8Pre writes, per super-block, 128·Σy of its sixteen 16-element
// halves (the bsums) to the frame: 64 bytes a super-block. It leaves the
// level table in Y14 and 0.125 in every lane of Y12.
func iq2X8Pre() {
	superSums(64, func() {
		c.VPMOVSXWD(mem(RDI, 260), Z1)
		c.VPSLLD(U8(7), Z1, Z1)
		c.VMOVDQU32(Z1, mem(R8, 0))
	})
	c.VBROADCASTI128(iq2X8Table(), Y14)
	bcast32(0x3E000000, Y12)
}

// iq2X8 is the decode kernel. Registers: Y0 the rows' sums, Y1 S, Y3-Y6
// a sub-block's partial sums (Y3, Y4 its first sixteen elements, Y5, Y6
// its second), Y7, Y8 the scales, Y10/Y13 the factors, Y12 0.125, Y14
// the level table, Y15 the 0x0F mask, Y16-Y23 code chunks.
var iq2X8 = x8Decoder{w: vnni, t: "IQ2", frame: 64 * 128, preStep: 64, count: 1,
	pre: iq2X8Pre,
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, x8IQ2Bytes)
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
		c.VCVTDQ2PS(Y1, Y1)
		c.VCVTPH2PS(mem(RSI, 0), Y10)
		c.VBROADCASTSS(mem(RDI, 0), Y13)
		c.VMULPS(Y13, Y10, Y10)
		c.VMULPS(Y12, Y10, Y10)
		c.VFMADD231PS(Y10, Y1, Y0)
		nextColumn(x8IQ2Bytes)
	},
}

// chunkLevels loads the chunk of code nibbles at disp and leaves its low
// nibbles' levels plus 128 in lo, its high nibbles' in hi (Y14 the
// table, Y15 0x0F): IQ4_XS's layout and the IQ2 types'.
func chunkLevels(disp int, lo, hi Register) {
	c.VMOVDQU32(mem(RSI, disp), lo)
	c.VPSRLW(U8(4), lo, hi)
	c.VPANDD(Y15, lo, lo)
	c.VPANDD(Y15, hi, hi)
	c.VPSHUFB(lo, Y14, lo)
	c.VPSHUFB(hi, Y14, hi)
}

// iq2X8Multi is iq2X8 for several tokens: each chunk's levels made once
// and faced with each token's activation dwords. Up to four tokens, both
// halves of a sub-block at once: S_k in Y4+k, the halves' sums in Y16+2k
// and Y17+2k, the levels in Y24-Y27, the scales in Y8, Y9. Eight tokens
// have no registers for sixteen sums, so they take a sub-block's halves
// one after the other, its chunks read twice (from L1): S_k in Y16+k,
// the half's sums in Y24+k, the levels in Y8, Y9, the scale in Y10.
var iq2X8Multi = x8Multi{d: iq2X8, acc: x8Acc, step: x8IQ2Bytes,
	loop: func(tokens int) {
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
						c.VPSUBD_BCST(mem(R8, iq2X8.frame*k+4*(2*j+h)), p, p)
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
		nextColumn(x8IQ2Bytes)
	},
}
