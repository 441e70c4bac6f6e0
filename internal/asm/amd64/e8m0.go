package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The E8M0 scales of MXFP4 blocks: one byte e a block, whose value in
// ggml's kernels is ggml_e8m0_to_fp32_half(e) = 2^(e−128), made from bits:
// (e−1)<<23 for e ≥ 2, the subnormals 0x00200000<<e below. The kernels
// make it without a branch or a blend from the dwords e (0..255): of
// (e−1)<<23 and (e+1)<<21, the signed maximum is the right one, because
// for e ≥ 2 the first is at least 4(e−1)/(e+1) ≥ 4/3 times the second,
// and for e < 2 it is 0 or negative while the second is 0x00200000<<e.

// e8m0Float turns the dwords e of X, Y or Z register e into the floats
// 2^(e−128), in place; tmp (of e's size) is scratch.
func e8m0Float(e, tmp Register) {
	ones := dwordsTable("e8m0Ones", []uint32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	c.VPADDD(ones, e, tmp)
	c.VPSLLD(U8(21), tmp, tmp)
	c.VPSUBD(ones, e, e)
	c.VPSLLD(U8(23), e, e)
	c.VPMAXSD(tmp, e, e)
}

// wScale sets lane 0 of X register dst to the scale of t's weight block
// at m: its fp16 d, or its E8M0 exponent's 2^(e−128) (the four bytes at
// m widened, so tmp's other lanes and dst's hold the first codes'
// garbage); tmp is scratch.
func wScale(t *blockType, m Mem, dst, tmp Register) {
	if !t.e8m0 {
		c.VCVTPH2PS(m, dst)
		return
	}
	c.VPMOVZXBD(m, dst)
	e8m0Float(dst, tmp)
}

// wScales8 is scales8 of t's weight blocks: for E8M0 scales the same
// VPERMT2W gathers the words that hold each block's exponent byte, which
// halvesToFloats takes out, with tb (which one window leaves unused) as
// its scratch.
func wScales8(t *blockType, base Register, dst, za, zb, ta, tb Register) {
	if !t.e8m0 {
		scales8(base, t.wb, dst, za, zb, ta, tb)
		return
	}
	if 7*t.wb+2 > 128 {
		panic("wScales8: E8M0 blocks past one window")
	}
	c.VMOVDQU64(mem(base, 0), ta)
	c.VPERMT2W(mem(base, 64), za, ta)
	halvesToFloats(t, 0, asX(ta), dst, asY(tb))
}

// halvesToFloats converts the eight words in X register h, those VPERMT2W
// picked with scaleIdx(t.wb, first, 8, 1), into the eight block scales
// in Y register dst: fp16 words, or for E8M0 the words holding each
// block's exponent byte — the low byte where the block starts at an even
// offset, else the high one. tmp is scratch (Y), not dst; h may be dst's
// X form.
func halvesToFloats(t *blockType, first int, h, dst, tmp Register) {
	if !t.e8m0 {
		c.VCVTPH2PS(h, dst)
		return
	}
	shifts := make([]uint32, 8)
	for i := range shifts {
		shifts[i] = uint32(8 * ((first + i*t.wb) % 2))
	}
	c.VPMOVZXWD(h, dst)
	c.VPSRLVD(dwordsTable(fmt.Sprintf("e8m0Shifts%d_%d", t.wb, first), shifts), dst, dst)
	c.VPANDD(dwordsTable("e8m0Low", []uint32{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), dst, dst)
	e8m0Float(dst, tmp)
}

// gatherE8M0 is gatherScales8 (AVX2) of E8M0 scales: the dwords at the
// eight blocks' offsets, their low bytes, as floats in Y register dst;
// mask is the gather mask, then scratch.
func gatherE8M0(base, offs, dst, mask Register) {
	c.VPCMPEQD(mask, mask, mask)
	c.VPXOR(dst, dst, dst)
	c.VPGATHERDD(mask, memx(base, 0, offs, 1), dst)
	c.VPAND(dwordsTable("e8m0Low", []uint32{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), dst, dst)
	e8m0Float(dst, mask)
}
