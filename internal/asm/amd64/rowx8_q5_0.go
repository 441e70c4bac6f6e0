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
