package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The X8 kernels of Q5_0 (quant's x8.go for the layout): Q4_0's block
// column plus the eight rows' fifth bits, 32 bytes at 16 (row r's dword
// at 16+4r), the codes' chunks after them at 48. The repack orders each
// row's 32 fifth bits so that chunk ch takes them with two shifts: byte
// i of the row's dword holds, at bit 2ch+h, the bit of element
// 16h+4ch+i, the element whose nibble is in byte i of the row's dword of
// chunk ch (low nibble h 0, high 1). So the values 0..31 are a chunk's
// nibbles with the dword shifted to put bit 2ch (or 2ch+1) at bit 4,
// ORed in under a 0x10 mask (VPTERNLOGD), as Q5_K's kernels do.
//
// The rest is IQ4_NL's kernels (blockX8) with these values where its
// levels are: VPDPBUSD against the activation dwords, 16·Σy (x8PreOf
// with bytes 16) taken off so each block's sum is Σ(q−16)·y exactly,
// then d_x and an FMA with the rows' eight scales.
//
// Registers beyond blockX8's: Y10 the fifth bits, Y11 and Y12 them
// shifted, Y14 bytes 0x10.
var q50X8Values = x8Values{bias: 0x10101010,
	consts: func() { bcast32(0x10101010, Y14) },
	chunk: func(w, ch int, lo, hi Register) {
		if ch == 0 {
			c.VMOVDQU(mem(RSI, w+16), Y10)
		}
		splitNibbles(mem(RSI, w+48+32*ch), lo, hi)
		c.VPTERNLOGD(U8(0xF8), Y14, shiftTo4(Y10, 2*ch, Y11), lo)
		c.VPTERNLOGD(U8(0xF8), Y14, shiftTo4(Y10, 2*ch+1, Y12), hi)
	},
}

// q50X8 and q50X8Multi are Q5_0's decode kernel and its kernels for two,
// four and eight tokens.
var (
	q50X8      = blockX8(blockQ5_0, q50X8Values)
	q50X8Multi = blockX8Multi(q50X8, blockQ5_0, q50X8Values)
)

// q50X8AVX2 is q50X8 with AVX2: q40X8AVX2's steps on the same block
// column, each nibble given its fifth bit by VPAND under bytes 0x10 and
// VPOR (AVX2 has no VPTERNLOGD), and 16·d_x·Σy taken off. A chunk's low
// and high word sums added reach 2·2·31·128, so two chunks, not four,
// add up in words before VPMADDWD (Y14 words 1) makes them dwords.
//
// Registers: Y1/Y2 the values, Y3/Y4 activation dwords, Y5 the fifth
// bits, Y6 them shifted, Y7 bytes 0x10, Y9/Y10 the chunk pairs' sums,
// then q40X8AVX2's Y11-Y13.
var q50X8AVX2 = x8Decoder{w: avx2, t: "Q5_0", frame: 8 * rowMaxBlocks,
	pre: func() { rowPreAVX2(blockQ5_0, 0x41800000) },
	block: func(pf x8Prefetch, b int) {
		t := blockQ5_0
		prefetchX8(pf, 0, 8*t.wb)
		bcast32(0x10101010, Y7)
		c.VMOVDQU(mem(RSI, 16), Y5)
		for ch := 0; ch < 4; ch++ {
			acc := yr(9 + ch/2)
			splitNibbles(mem(RSI, 48+32*ch), Y1, Y2)
			q50FifthBits(ch, Y1, Y2, Y5, Y7, Y6)
			c.VPBROADCASTD(mem(RDI, t.qx+4*ch), Y3)
			c.VPBROADCASTD(mem(RDI, t.qx+16+4*ch), Y4)
			c.VPMADDUBSW(Y3, Y1, Y1)
			c.VPMADDUBSW(Y4, Y2, Y2)
			sumInto(ch%2 == 0, acc, Y1, c.VPADDW, func(dst Register) { c.VPADDW(Y2, Y1, dst) })
			if ch%2 == 1 {
				c.VPMADDWD(Y14, acc, acc)
			}
		}
		c.VPADDD(Y10, Y9, Y9)
		q40Scale(Y9, 4*b, Y11, Y12)
		x8AddBlock(t, Y9, Y13)
	},
}

// q50FifthBits ORs into chunk ch's low and high nibbles (lo, hi) their
// fifth bits from qh (the block column's dwords at 16) under mask (bytes
// 0x10), shifted through tmp.
func q50FifthBits(ch int, lo, hi, qh, mask, tmp Register) {
	for h, v := range []Register{lo, hi} {
		c.VPAND(mask, shiftTo4(qh, 2*ch+h, tmp), tmp)
		c.VPOR(tmp, v, v)
	}
}

// q50X8AVX2Multi is q50X8AVX2 for two and four tokens, as
// q40X8AVX2Multi is q40X8AVX2's: each chunk's values (Y8, Y9: the
// fifth bits from Y12 under Y13, shifted through Y10) once, then per
// token its activation dwords (Y10, Y11), the chunk's words made dwords
// at once (VPMADDWD) and added to the token's block sum (Y4-Y7).
// Accumulators: Y0-Y3.
var q50X8AVX2Multi = x8Multi{d: q50X8AVX2,
	acc:   func(k int) Register { return yr(k) },
	setup: func() { bcast32(0x10101010, Y13) },
	block: func(tokens, b, _ int) {
		t := blockQ5_0
		blockX8AVX2Multi(t, 48, tokens, b, 4, func(ch int) {
			if ch == 0 {
				c.VMOVDQU(mem(RSI, 16), Y12)
			}
			splitNibblesY8()
			q50FifthBits(ch, Y8, Y9, Y12, Y13, Y10)
		}, func(k, ch int, dst Register) {
			nibbleWordsAVX2(t, k, ch, Y10)
			c.VPMADDWD(Y14, Y10, dst)
		}, c.VPADDD, func(k, b int, s Register) {
			q40Scale(s, q50X8AVX2.frame*k+4*b, Y10, Y11)
		})
	},
}
