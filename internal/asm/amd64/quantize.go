package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// actType is an activation type the AVX-512 quantizers write: Q8_0 (32
// elements: fp16 d, 32 int8) or Q8_K (256: float32 d, 256 int8, 16 int16
// sums of 16).
type actType struct {
	name   string
	elems  int
	bbytes int
}

var (
	actQ8_0 = actType{"Q8_0", 32, 34}
	actQ8_K = actType{"Q8_K", 256, 292}
)

// quantKernel emits quant<T>AVX512(dst *byte, src *float32, nb int), bit
// for bit the Go encoder (quantQ8_0, quantQ8_K): the same float32
// operations in the same order, with the vector forms of their roundings.
// Both start from the block's largest magnitude (absMax): VMAXPS returns
// its second operand, the running maximum, when the first is NaN, so NaNs
// are skipped as the Go code skips them.
func quantKernel(t actType) {
	text("quant"+t.name+"AVX512", NOSPLIT, "func(dst *byte, src *float32, nb int)")
	loadArgs("dst src nb", RDI, RSI, RCX)
	bcast32(0x7FFFFFFF, Z31)
	if t.elems == 32 {
		quantQ8_0()
	} else {
		quantQ8_K()
	}
	c.ADDQ(U32(4*t.elems), RSI)
	c.ADDQ(U32(t.bbytes), RDI)
	decJNZ(RCX, "block")
	c.VZEROUPPER()
	c.RET()
}

// absMax leaves max|v| over the Z registers vs in the low lane of acc's X
// form; Z31 holds 0x7FFFFFFF, t is scratch. The running maximum is
// VMAXPS's second operand, which it returns when the other is NaN.
func absMax(vs []VecPhysical, acc, t Register) {
	zero(acc)
	for _, v := range vs {
		c.VANDPS(Z31, v, t)
		c.VMAXPS(acc, t, acc)
	}
	c.VEXTRACTF64X4(U8(1), acc, asY(t))
	c.VMAXPS(asY(t), asY(acc), asY(acc))
	if idx(acc) >= 16 || idx(t) >= 16 {
		c.VEXTRACTF32X4(U8(1), asY(acc), asX(t))
	} else {
		c.VEXTRACTF128(U8(1), asY(acc), asX(t))
	}
	c.VMAXPS(asX(t), asX(acc), asX(acc))
	c.VPERMILPS(U8(0x4E), asX(acc), asX(t))
	c.VMAXPS(asX(t), asX(acc), asX(acc))
	c.VPERMILPS(U8(0xB1), asX(acc), asX(t))
	c.VMAXPS(asX(t), asX(acc), asX(acc))
}

// quantQ8_0: per block of 32, d = amax/127 as fp16, q =
// saturate8(round-to-even(x·(127/amax))), and 127/amax taken as 0 when amax
// is 0.
func quantQ8_0() {
	const32(0x42FE0000, X30) // 127.0
	c.VXORPS(X29, X29, X29)
	label("block")
	c.VMOVUPS(mem(RSI, 0), Z0)
	c.VMOVUPS(mem(RSI, 64), Z1)
	absMax([]VecPhysical{Z0, Z1}, Z4, Z5)
	c.VDIVSS(X30, X4, X6)
	c.VCVTPS2PH(U8(0), X6, X7)
	c.VPEXTRW(U8(0), X7, EAX)
	c.MOVW(AX, mem(RDI, 0))
	c.VDIVSS(X4, X30, X8)
	c.VBROADCASTSS(X4, Z9)
	c.VCMPPS(U8(4), Z29, Z9, K1)
	c.VBROADCASTSS_Z(X8, K1, Z8)
	c.VMULPS(Z8, Z0, Z0)
	c.VMULPS(Z8, Z1, Z1)
	c.VCVTPS2DQ_RN_SAE(Z0, Z0)
	c.VCVTPS2DQ_RN_SAE(Z1, Z1)
	c.VPMOVSDB(Z0, X0)
	c.VPMOVSDB(Z1, X1)
	c.VMOVDQU(X0, mem(RDI, 2))
	c.VMOVDQU(X1, mem(RDI, 18))
}

// quantQ8_K: per super-block of 256, the element of largest magnitude
// (the first one on ties) with its sign is max; iscale = -127/max, d =
// 1/iscale; q = int8(min(127, nearestInt(x·iscale))) with nearestInt done
// as ggml does, by adding 1.5·2^23 and keeping the low mantissa bits; the
// sixteen int16 sums of 16 quants follow. An all-zero (or all-NaN) block
// is all zero bytes.
//
// Z0-Z15 the block, Z16 iscale, Z17 1.5·2^23, Z18 0x7FFFFF, Z19 0x400000,
// Z20 127, Z22 bytes 0x80, Z23 zero, X24 words 2048, X25 -127, X26 1.
func quantQ8_K() {
	bcast32(0x4B400000, Z17)
	bcast32(0x007FFFFF, Z18)
	bcast32(0x00400000, Z19)
	bcast32(127, Z20)
	bcast32(0x80808080, Z22)
	c.VPXORD(Z23, Z23, Z23)
	c.MOVL(U32(0x08000800), EAX)
	c.VPBROADCASTD(EAX, X24)
	const32(0xC2FE0000, X25)
	const32(0x3F800000, X26)

	label("block")
	for i := 0; i < 16; i++ {
		c.VMOVUPS(mem(RSI, 64*i), zr(i))
	}
	absMax(zs[:16], Z28, Z21)
	c.VBROADCASTSS(X28, Z28)
	c.VXORPS(X21, X21, X21)
	c.VUCOMISS(X21, X28)
	c.JEQ(ref("zero"))

	// The first element whose magnitude is amax.
	c.XORQ(RBX, RBX)
	label("find")
	c.VMOVUPS(memx(RSI, 0, RBX, 4), Z21)
	c.VANDPS(Z31, Z21, Z21)
	c.VCMPPS(U8(0), Z28, Z21, K1)
	c.KMOVW(K1, EAX)
	c.TESTL(EAX, EAX)
	c.JNZ(ref("found"))
	c.ADDQ(U8(16), RBX)
	c.JMP(ref("find"))
	label("found")
	c.BSFL(EAX, EAX)
	c.ADDQ(RAX, RBX)
	c.VMOVSS(memx(RSI, 0, RBX, 4), X21)
	c.VDIVSS(X21, X25, X16)
	c.VDIVSS(X16, X26, X21)
	c.VMOVSS(X21, mem(RDI, 0))
	c.VBROADCASTSS(X16, Z16)
	for i := 0; i < 16; i++ {
		c.VMULPS(Z16, zr(i), Z21)
		c.VADDPS(Z17, Z21, Z21)
		c.VPANDD(Z18, Z21, Z21)
		c.VPSUBD(Z19, Z21, Z21)
		c.VPMINSD(Z20, Z21, Z21)
		c.VPMOVDB(Z21, mem(RDI, 4+16*i))
	}
	// The sums of four groups of 16 quants (64 bytes) as words, two per
	// group, offset by 8·128 each: the bytes go in as q XOR 0x80 (q+128
	// unsigned) to VPSADBW, which sums eight at a time into qwords.
	for i := 0; i < 4; i++ {
		c.VPXORD(mem(RDI, 4+64*i), Z22, zr(i))
		c.VPSADBW(Z23, zr(i), zr(i))
		c.VPMOVQW(zr(i), xs[i])
	}
	c.VPHADDW(X1, X0, X0)
	c.VPHADDW(X3, X2, X2)
	c.VPSUBW(X24, X0, X0)
	c.VPSUBW(X24, X2, X2)
	c.VMOVDQU(X0, mem(RDI, 260))
	c.VMOVDQU(X2, mem(RDI, 276))
	c.JMP(ref("next"))

	label("zero")
	c.VPXORD(Z21, Z21, Z21)
	for i := 0; i < 4; i++ {
		c.VMOVDQU64(Z21, mem(RDI, 64*i))
	}
	c.VMOVDQU64(Y21, mem(RDI, 256))
	c.MOVL(U32(0), mem(RDI, 288))
	label("next")
}
