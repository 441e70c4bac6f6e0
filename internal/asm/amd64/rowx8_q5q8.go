package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// X8 kernels of Q8_0 and Q5_K (quant's x8.go), on the x8Decoder skeleton
// and the gemmLayout addressing as Q4_0's and Q4_K's are.

// x8Q5BlockBytes is the size of a Q5_K X8 block column: Q4_K's, plus the
// eight rows' 32 qh bytes.
const x8Q5BlockBytes = x8KBlockBytes + 8*32

// q80X8 is Q8_0's X8 decode kernel:
//
//	rowQ8_0X8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// over nb blocks (at least 1, at most rowMaxBlocks) of Q8_0 activations
// x. First d_x and 128·Σy of every activation block go to the frame
// (x8PreOf, eight blocks at a time, then one). Then per block and group: the
// eight 32-byte chunks of codes made unsigned (xor 0x80, folded into the
// load), VPDPBUSD against the activation dwords they face, 128·Σy
// subtracted, so the rows' integer sums are exact, converted, times d_x,
// and an FMA with the rows' eight scales.
//
// Registers: Y0 the rows' sums, Y1-Y8 the chunks, Y9-Y12 activation
// dwords, Y14 bytes 0x80, Y16-Y19 partial sums, Y20 d_x, Y22 the scales.
// General: as Q4_0's.
var q80X8 = x8Decoder{w: vnni, t: "Q8_0", frame: 8 * rowMaxBlocks,
	pre: func() {
		x8PreOf(blockQ8_0, 0x80808080, false)
		bcast32(0x80808080, Y14)
	},
	block: func(pf x8Prefetch, b int) {
		t := blockQ8_0
		prefetchX8(pf, 0, 8*t.wb)
		for _, a := range []Register{Y16, Y17, Y18, Y19} {
			zero(a)
		}
		for ch := 0; ch < 8; ch++ {
			u, x := yr(1+ch), yr(9+ch%4)
			c.VPXORD(mem(RSI, 16+32*ch), Y14, u)
			c.VPBROADCASTD(mem(RDI, t.qx+4*ch), x)
			VPDPBUSD(x, u, yr(16+ch%4))
		}
		addDwords4(Y16, Y17, Y18, Y19)
		c.VPSUBD_BCST(mem(R8, 32+4*b), Y16, Y16)
		c.VCVTDQ2PS(Y16, Y16)
		c.VBROADCASTSS(mem(R8, 4*b), Y20)
		c.VMULPS(Y20, Y16, Y16)
		x8AddBlock(t, Y16, Y22)
	},
}

// q5KX8 is Q5_K's X8 decode kernel:
//
//	rowQ5_KX8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// over nb super-blocks (at most 128) of Q8_K activations x. The frame is
// Q4_K's (Σy_j of the eight sub-blocks). Then per super-block and group,
// per group g of four elements (the order of the block column, one
// sequential stream): the qh chunk and the four code chunks of the
// sub-block pairs; each pair's low nibbles (sub-block 2p) and high ones
// (2p+1) get bits 2p and 2p+1 of qh as bit 4 (a shift and a VPTERNLOGD),
// and VPDPBUSD against the activation dwords they face adds them to the
// eight sub-blocks' sums; at the end S and M as Q4_K's.
//
// Registers: Y0 the rows' sums, Y1 S, Y2 M, Y3-Y10 the sub-blocks' sums,
// Y11-Y13 the factors, Y14 bytes 0x10, Y15 bytes 0x0F, Y16 the qh chunk,
// Y17-Y22 and Y23-Y28 a pair's values, shifted qh and activation dwords
// (two sets, alternating). General: as Q4_0's.
var q5KX8 = x8Decoder{w: vnni, t: "Q5_K", frame: 32 * 128, preStep: 32, count: 1,
	pre: func() {
		q4KX8.pre()
		bcast32(0x10101010, Y14)
	},
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, 160)
		for j := 0; j < 8; j++ {
			zero(yr(3 + j))
		}
		for g := 0; g < 8; g++ {
			at := 160 + 160*g
			prefetchX8(pf, at, at+160)
			c.VMOVDQU32(mem(RSI, at), Y16)
			for p := 0; p < 4; p++ {
				r := 17 + 6*(p%2)
				lo, hi, sl, sh, xl, xh := yr(r), yr(r+1), yr(r+2), yr(r+3), yr(r+4), yr(r+5)
				q5KX8Pair(at, p, Y16, lo, hi, sl, sh)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p)+4*g), xl)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p+1)+4*g), xh)
				VPDPBUSD(xl, lo, yr(3+2*p))
				VPDPBUSD(xh, hi, yr(4+2*p))
			}
		}
		q5KX8SM(func(j int) Register { return yr(3 + j) }, 0, Y1, Y2, Y11, Y12)
		x8FinishMin()
		nextColumn(x8Q5BlockBytes)
	},
}

// q5KX8Pair makes the values of sub-blocks 2p and 2p+1 in group g's
// column at SI+at: the chunk's low nibbles in lo, its high ones in hi,
// each with its bit of the qh chunk (in qh; shifted in sl and sh) as
// bit 4 (Y14 bytes 0x10, Y15 bytes 0x0F).
func q5KX8Pair(at, p int, qh, lo, hi, sl, sh Register) {
	c.VMOVDQU32(mem(RSI, at+32+32*p), hi)
	c.VPANDD(Y15, hi, lo)
	c.VPSRLW(U8(4), hi, hi)
	c.VPANDD(Y15, hi, hi)
	c.VPTERNLOGD(U8(0xF8), Y14, shiftTo4(qh, 2*p, sl), lo)
	c.VPTERNLOGD(U8(0xF8), Y14, shiftTo4(qh, 2*p+1, sh), hi)
}

// q5KX8SM sets S (s) = Σ_j sc_j·sum(j), the eight sub-blocks' scales at
// SI+32, and M (m) = Σ_j m_j·Σy_j, their mins at SI+96 and Σy_j in the
// frame at R8+off, with t and u scratch.
func q5KX8SM(sum func(j int) Register, off int, s, m, t, u Register) {
	zero(s)
	zero(m)
	for j := 0; j < 8; j++ {
		c.VPMOVZXBD(mem(RSI, 32+8*j), t)
		c.VPMULLD(sum(j), t, t)
		c.VPADDD(t, s, s)
		c.VPMOVZXBD(mem(RSI, 96+8*j), u)
		c.VPMULLD_BCST(mem(R8, off+4*j), u, u)
		c.VPADDD(u, m, m)
	}
}
