package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Rows whose width is not a multiple of 256: the X8 kernels of the
// 32-element block types (Q4_0, Q8_0, IQ4_NL, MXFP4) take any nb from 1. Their
// loops walk eight blocks an iteration while eight are left, then the
// last nb%8 one at a time with the same per-block operations, so every
// block's arithmetic, and the order the rows' sums take it in, is the
// eight-block loop's (quant's twins go block by block too). The frame's
// per-block factors keep their layout, eight blocks to 64 bytes (d_x at
// 4b, the second factor at 32+4b): the one-block loops step R8 by 4
// within the last, partial group. Padding the layout to whole groups of
// eight blocks instead would stream the padding's bytes on every call
// (gpt-oss's 90 blocks a row to 96, Qwen2.5-0.5B's 28 to 32) and make
// every caller zero activations past the row.

// x8BlockLoops emits the block loops of an X8 kernel of 32-element
// blocks, nb in R13, the frame at R8: per iteration of blocks (8, then
// 1) blocks, top(blocks), then block(b, at) for each, b its slot in the
// frame's group of eight (the one-block loop's is always 0, R8 stepping
// by 4) and at its index past SI and DI as they stood at the top, then
// next(blocks).
func x8BlockLoops(top func(blocks int), block func(b, at int), next func(blocks int)) {
	c.MOVQ(R13, RCX)
	c.ANDQ(I8(-8), RCX)
	c.JZ(ref("tail"))
	label("loop")
	top(8)
	for b := 0; b < 8; b++ {
		block(b, b)
	}
	next(8)
	c.ADDQ(U8(64), R8)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
	label("tail")
	c.MOVQ(R13, RCX)
	c.ANDQ(U8(7), RCX)
	c.JZ(ref("done"))
	label("one")
	top(1)
	block(0, 0)
	next(1)
	c.ADDQ(U8(4), R8)
	decJNZ(RCX, "one")
	label("done")
}

// x8PreTail closes an X8 kernel's pre (its eight-block loop skipped
// when fewer than eight blocks are left, through ref("pretail")): the
// last nb%8 activation blocks of t one at a time, one(t) writing the
// block's factors to R8 and R8+32.
func x8PreTail(t *blockType, one func(t *blockType)) {
	label("pretail")
	c.MOVQ(R13, RCX)
	c.ANDQ(U8(7), RCX)
	c.JZ(ref("predone"))
	label("preone")
	one(t)
	c.ADDQ(U8(uint8(t.xb)), RDI)
	c.ADDQ(U8(4), R8)
	decJNZ(RCX, "preone")
	label("predone")
}

// x8PreMain starts an X8 pre's eight-block loop: RCX set to the blocks
// it takes, nb rounded down to eight, straight to the tail when none.
func x8PreMain() {
	c.MOVQ(R13, RCX)
	c.ANDQ(I8(-8), RCX)
	c.JZ(ref("pretail"))
}

// preScale writes d_x of the activation block at DI to R8 as a float,
// and leaves it in X3 (through AX).
func preScale() {
	c.MOVWLZX(mem(RDI, 0), EAX)
	c.VMOVD(EAX, X3)
	c.VCVTPH2PS(X3, X3)
	c.VMOVSS(X3, mem(R8, 0))
}

// preSum finishes one block's second factor from its dword sums in Y4
// (X5 scratch): their total, as the int32 or times d_x (asFloat, d_x in
// X3) and then times lane 0 of scale when it is not nil, as the
// eight-block loops do each lane, to R8+32.
func preSum(asFloat bool, scale Register) {
	hreduce(Y4, X5, c.VPADDD, c.VPADDD)
	if asFloat {
		c.VCVTDQ2PS(X4, X4)
		c.VMULSS(X3, X4, X4)
		if scale != nil {
			c.VMULSS(asX(scale), X4, X4)
		}
	}
	c.VMOVSS(X4, mem(R8, 32))
}
