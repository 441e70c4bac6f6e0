package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// blockType describes a weight type of 32-element blocks and its
// activation type (Q8_0, or Q8_1 for Q4_1): the block layouts and how a
// block's quants become bytes the integer dot products take.
type blockType struct {
	name   string
	wb, xb int // bytes per weight and activation block
	qw, qx int // offset of the quants in a weight and an activation block
	nibble bool
	// bias is what the kernels subtract from the unsigned quants (8, 16)
	// or, for Q8_0, the 0x80 that makes signed weights unsigned for
	// VPDPBUSD; 0 for none (Q4_1, whose offset is the block's m).
	bias uint32
	// hbits: bit j of the uint32 qh, just before the quants (at qw-4), is
	// bit 4 of element j (Q5_0, Q5_1).
	hbits bool
	// withMin: the block has an fp16 m after d and the activation an fp16
	// s = d·Σy after its d; the block adds m·s (Q4_1).
	withMin bool
	// run8: the AVX2 kernel takes runs of eight blocks whose scales are
	// converted together and parked on the stack (Q4_0).
	run8 bool
	// lut: a nibble is an index into levels (IQ4_NL's iq4nlValues,
	// MXFP4's doubled E2M1 values), tables named after lutName. With VNNI
	// the table holds the levels plus 128 (bias 0x80, taken off as
	// 128·Σy); AVX2, whose VPMADDUBSW would saturate on those, looks up
	// the signed levels and multiplies as Q8_0 does, |w| by y with w's
	// sign.
	lut     bool
	levels  *[16]int8
	lutName string
	// e8m0: the weight block's scale is one E8M0 byte at offset 0
	// (MXFP4), 2^(e−128) as ggml's ggml_e8m0_to_fp32_half makes it (see
	// e8m0Float), instead of an fp16.
	e8m0 bool
}

var (
	blockQ8_0  = &blockType{name: "Q8_0", wb: 34, xb: 34, qw: 2, qx: 2, bias: 0x80808080}
	blockQ4_0  = &blockType{name: "Q4_0", wb: 18, xb: 34, qw: 2, qx: 2, nibble: true, bias: 0x08080808, run8: true}
	blockQ4_1  = &blockType{name: "Q4_1", wb: 20, xb: 36, qw: 4, qx: 4, nibble: true, withMin: true}
	blockQ5_0  = &blockType{name: "Q5_0", wb: 22, xb: 34, qw: 6, qx: 2, nibble: true, bias: 0x10101010, hbits: true}
	blockQ5_1  = &blockType{name: "Q5_1", wb: 24, xb: 36, qw: 8, qx: 4, nibble: true, hbits: true, withMin: true}
	blockIQ4NL = &blockType{name: "IQ4_NL", wb: 18, xb: 34, qw: 2, qx: 2, nibble: true, bias: 0x80808080, run8: true,
		lut: true, levels: &iq4nlLevels, lutName: "iq4nl"}
	// MXFP4 is IQ4_NL with other levels and an E8M0 scale.
	blockMXFP4 = &blockType{name: "MXFP4", wb: 17, xb: 34, qw: 1, qx: 2, nibble: true, bias: 0x80808080, run8: true,
		lut: true, levels: &mxfp4Levels, lutName: "mxfp4", e8m0: true}
)

// mxfp4Levels is ggml's kvalues_mxfp4, the E2M1 values doubled.
var mxfp4Levels = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// iq4nlLevels is ggml's kvalues_iq4nl, the level of each 4-bit code.
var iq4nlLevels = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// iq4nlTable is a 16-byte VPSHUFB table of IQ4_NL's levels, signed or
// plus 128 (biased).
func iq4nlTable(biased bool) Mem { return levelTable("iq4nl", &iq4nlLevels, biased) }

// lutTable is levelTable of t's levels.
func (t *blockType) lutTable(biased bool) Mem { return levelTable(t.lutName, t.levels, biased) }

// levelTable is a 16-byte VPSHUFB table of sixteen levels, signed or plus
// 128 (biased), named after name.
func levelTable(name string, levels *[16]int8, biased bool) Mem {
	b := make([]byte, 16)
	kind := "Signed"
	if biased {
		kind = "Biased"
	}
	for i, v := range levels {
		b[i] = byte(v)
		if biased {
			b[i] = byte(int(v) + 128)
		}
	}
	return bytesTable(name+kind, b)
}

// iq4nlBiased64 is IQ4_NL's biased levels as a 64-byte VPERMB table.
func iq4nlBiased64() Mem { return blockIQ4NL.lutBiased64() }

// lutBiased64 is t's biased levels as a 64-byte VPERMB table.
func (t *blockType) lutBiased64() Mem {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(int(t.levels[i%16]) + 128)
	}
	return bytesTable(t.lutName+"Biased64", b)
}

// signedMul leaves in dst the word sums of pairs of products of the
// signed bytes w and y (Y registers): |w| times y with w's sign (VPSIGNB,
// into ys), exact while y holds no −128; t is scratch.
func signedMul(w, y, ys, t, dst Register) {
	c.VPSIGNB(w, w, t)
	c.VPSIGNB(w, y, ys)
	c.VPMADDUBSW(ys, t, dst)
}

// dotBlock emits dot<T><W>Asm(w, x *byte, nb int) float32 for a type of
// 32-element blocks.
//
// AVX2, one block per Y register: the weights as unsigned bytes (|w| with
// the activations taking their signs for Q8_0; nibbles, less bias·Σy,
// otherwise) go through VPMADDUBSW and VPMADDWD to eight dword sums, then
// float, times d_w·d_x, into two accumulators (Y12, Y13) by alternate
// blocks. Y14 words 1, Y11 bytes 0x0F, Y10 the bias.
//
// AVX-512 VNNI, two blocks per Z register: VPDPBUSD sums the unsigned
// weight bytes times the signed activations, and bias·Σy (a second
// VPDPBUSD on the bias bytes) is subtracted. Runs of eight blocks gather
// their sixteen fp16 scales with VPERMT2W and VPERMPS spreads each pair's
// products d_w·d_x over its two halves; then pairs, then one block in a Y
// register. Accumulators Z16, Z17. K1 dwords 8-15, Z20 qword shifts
// 0,0,4,4 per 256 bits, Z22 bytes 0x0F, Z23 bias bytes, Z24-Z27 the pair
// spreading indexes, Z31 (IQ4_NL) the biased levels; AVX2 keeps the
// signed levels in Y10.
func dotBlock(t *blockType, w width) {
	text("dot"+t.name+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	if w == avx2 {
		dotBlockAVX2(t)
	} else {
		dotBlockVNNI(t, w == vbmi)
	}
}

// blockAVX2Ints leaves the 16 word sums of pairs of products of the block
// at woff(SI) with the activation block at xoff(DI) in Y0.
func blockAVX2Ints(t *blockType, woff, xoff int) {
	if !t.nibble {
		c.VMOVDQU(mem(RSI, woff+t.qw), Y0)
		c.VMOVDQU(mem(RDI, xoff+t.qx), Y1)
		c.VPSIGNB(Y0, Y0, Y2)
		c.VPSIGNB(Y0, Y1, Y1)
		c.VPMADDUBSW(Y1, Y2, Y0)
		return
	}
	c.VMOVDQU(mem(RSI, woff+t.qw), X0)
	c.VPSRLW(U8(4), X0, X1)
	c.VINSERTI128(U8(1), X1, Y0, Y0)
	c.VPAND(Y11, Y0, Y0)
	if t.lut {
		c.VPSHUFB(Y0, Y10, Y0)
		c.VMOVDQU(mem(RDI, xoff+t.qx), Y1)
		signedMul(Y0, Y1, Y1, Y2, Y0)
		return
	}
	if t.hbits {
		// The 32 high bits become bytes 0x10 or 0: spread the four bytes
		// over eight each, test one bit per byte, compare.
		bits, spread, b10 := hbitsRegs(t)
		c.VPBROADCASTD(mem(RSI, woff+t.qw-4), Y5)
		c.VPSHUFB(spread, Y5, Y5)
		c.VPAND(bits, Y5, Y5)
		c.VPCMPEQB(bits, Y5, Y5)
		c.VPAND(b10, Y5, Y5)
		c.VPOR(Y5, Y0, Y0)
	}
	if t.bias == 0 {
		c.VPMADDUBSW(mem(RDI, xoff+t.qx), Y0, Y0)
		return
	}
	c.VMOVDQU(mem(RDI, xoff+t.qx), Y1)
	c.VPMADDUBSW(Y1, Y0, Y0)
	c.VPMADDUBSW(Y1, Y10, Y2)
	c.VPSUBW(Y2, Y0, Y0)
}

// blockAVX2 adds one block to acc (and its m·s to macc for Q4_1); scale,
// when given, is where the block's d_w·d_x already is.
func blockAVX2(t *blockType, woff, xoff int, acc, macc Register, scale Op) {
	blockAVX2Ints(t, woff, xoff)
	c.VPMADDWD(Y14, Y0, Y0)
	c.VCVTDQ2PS(Y0, Y0)
	switch {
	case scale != nil:
		c.VBROADCASTSS(scale, Y3)
		c.VFMADD231PS(Y3, Y0, acc)
	case t.withMin:
		// (d, m)·(d_x, s) side by side: lane 0 scales the sums, lane 1
		// (m·s) goes alone to macc (VINSERTPS $0x5D zeroes the rest).
		c.VCVTPH2PS(mem(RSI, woff), X3)
		c.VCVTPH2PS(mem(RDI, xoff), X4)
		c.VMULPS(X4, X3, X3)
		c.VBROADCASTSS(X3, Y5)
		c.VFMADD231PS(Y5, Y0, acc)
		c.VINSERTPS(U8(0x5D), X3, X3, X5)
		c.VADDPS(Y5, macc, macc)
	default:
		wScale(t, mem(RSI, woff), X3, X4)
		c.VCVTPH2PS(mem(RDI, xoff), X4)
		c.VMULSS(X4, X3, X3)
		c.VBROADCASTSS(X3, Y3)
		c.VFMADD231PS(Y3, Y0, acc)
	}
}

func dotBlockAVX2(t *blockType) {
	var stack Mem
	if t.run8 {
		stack = c.AllocLocal(32)
	}
	loadArgs("w x nb", RSI, RDI, RCX)
	bcast32(0x00010001, Y14)
	if t.nibble {
		bcast32(0x0F0F0F0F, Y11)
	}
	if t.lut {
		c.VBROADCASTI128(t.lutTable(false), Y10)
	} else if t.bias != 0 && t.nibble {
		bcast32(t.bias, Y10)
	}
	if t.hbits {
		bits, spread, b10 := hbitsRegs(t)
		c.MOVQ(U64(0x8040201008040201), RAX)
		c.VMOVQ(RAX, asX(bits))
		c.VPBROADCASTQ(asX(bits), bits)
		c.VMOVDQU(bytesTable("spread4", spreadBytes()), spread)
		if t.bias == 0 {
			bcast32(0x10101010, b10)
		}
	}
	zero(Y12)
	zero(Y13)
	if t.withMin {
		zero(Y10)
		zero(Y9)
	}
	if t.run8 {
		if t.e8m0 {
			c.VMOVDQU(blockOffsets(t.wb), Y6)
		}
		c.CMPQ(RCX, U8(8))
		c.JLT(ref("loop2"))
		label("loop8")
		// The sixteen fp16 scales through general registers into two
		// VCVTPH2PS (E8M0 ones by VPGATHERDD at the offsets in Y6); the
		// eight products to the stack.
		if t.e8m0 {
			gatherE8M0(RSI, Y6, Y4, Y7)
		} else {
			gather4(RSI, 0, t.wb, RAX, RBX)
			gather4(RSI, 4*t.wb, t.wb, RDX, R8)
			c.VMOVQ(RAX, X4)
			c.VPINSRQ(U8(1), RDX, X4, X4)
			c.VCVTPH2PS(X4, Y4)
		}
		gather4(RDI, 0, t.xb, R9, R10)
		gather4(RDI, 4*t.xb, t.xb, R11, R12)
		c.VMOVQ(R9, X5)
		c.VPINSRQ(U8(1), R11, X5, X5)
		c.VCVTPH2PS(X5, Y5)
		c.VMULPS(Y5, Y4, Y4)
		c.VMOVUPS(Y4, stack)
		for i := 0; i < 8; i++ {
			blockAVX2(t, i*t.wb, i*t.xb, []Register{Y12, Y13}[i%2], nil, stack.Offset(4*i))
		}
		nextChunk(RSI, U32(8*t.wb), RDI, U32(8*t.xb), 8, "loop8")
		label("loop2")
		c.CMPQ(RCX, U8(2))
		c.JLT(ref("tail"))
		blockAVX2(t, 0, 0, Y12, Y10, nil)
		blockAVX2(t, t.wb, t.xb, Y13, Y9, nil)
		c.ADDQ(U8(2*t.wb), RSI)
		c.ADDQ(U8(2*t.xb), RDI)
		c.SUBQ(U8(2), RCX)
		c.JMP(ref("loop2"))
	} else {
		c.CMPQ(RCX, U8(2))
		c.JLT(ref("tail"))
		label("loop")
		blockAVX2(t, 0, 0, Y12, Y10, nil)
		blockAVX2(t, t.wb, t.xb, Y13, Y9, nil)
		nextChunk(RSI, U8(2*t.wb), RDI, U8(2*t.xb), 2, "loop")
	}
	label("tail")
	jumpIfZero(RCX, "done")
	blockAVX2(t, 0, 0, Y12, Y10, nil)
	label("done")
	if t.withMin {
		c.VADDPS(Y13, Y12, Y12)
		c.VADDPS(Y9, Y10, Y10)
		c.VADDPS(Y10, Y12, Y0)
	} else {
		c.VADDPS(Y13, Y12, Y0)
	}
	retSum()
}

// hbitsRegs are the AVX2 dot product's registers of the fifth bits: the
// bit of each byte, the spreading mask, bytes 0x10 (Q5_0's bias); Q5_1's
// min sums take Y9 and Y10.
func hbitsRegs(t *blockType) (bits, spread, b10 Register) {
	if t.withMin {
		return Y6, Y7, Y15
	}
	return Y8, Y9, Y10
}

// addBytes is t's bias bytes, or for Q5_1 (no bias) the 0x10 the fifth
// bits add.
func addBytes(t *blockType) uint32 {
	if t.bias == 0 && t.hbits {
		return 0x10101010
	}
	return t.bias
}

// spreadBytes is the VPSHUFB mask that copies byte k of each dword to
// bytes 8k..8k+7.
func spreadBytes() []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(i / 8)
	}
	return b
}

// gather4 packs the four halves at base+off, base+off+stride, … into dst;
// t is a scratch register.
func gather4(base Register, off, stride int, dst, t Register) {
	c.MOVWQZX(mem(base, off), dst)
	for i := 1; i < 4; i++ {
		c.MOVWQZX(mem(base, off+i*stride), t)
		c.SHLQ(U8(16*i), t)
		c.ORQ(t, dst)
	}
}

// scaleIdx returns the VPERMT2W word indexes (a 64-byte table) that pick
// halves 0..halves-1 of n blocks of bb bytes, the first block first bytes
// into the 128 bytes loaded.
func scaleIdx(bb, first, n, halves int) Mem {
	var h []uint16
	for i := 0; i < n; i++ {
		for k := 0; k < halves; k++ {
			h = append(h, uint16((first+i*bb)/2+k))
		}
	}
	h = append(h, make([]uint16, 32-len(h))...)
	return wordsTable(fmt.Sprintf("scaleIdx%d_%d_%d_%d", bb, first, n, halves), h)
}

// scales8 converts the fp16 scales of the eight blocks of bb bytes at base
// to floats in Y register dst, with VPERMT2W over 128 bytes (once when the
// eighth scale lies in the first 128 bytes, else twice, the second window
// ending at the eighth block so as not to read past it). za, zb hold the
// index tables (zb unused when one window does), ta, tb are scratch.
func scales8(base Register, bb int, dst, za, zb, ta, tb Register) {
	c.VMOVDQU64(mem(base, 0), ta)
	c.VPERMT2W(mem(base, 64), za, ta)
	if 7*bb+2 <= 128 {
		c.VCVTPH2PS(asX(ta), dst)
		return
	}
	second := min(4*bb, 8*bb-128)
	c.VMOVDQU64(mem(base, second), tb)
	c.VPERMT2W(mem(base, second+64), zb, tb)
	c.VPUNPCKLQDQ(asX(tb), asX(ta), asX(ta))
	c.VCVTPH2PS(asX(ta), dst)
}

// scaleTables loads the index tables scales8 needs for blocks of bb bytes
// into za and zb.
func scaleTables(bb int, za, zb Register) {
	c.VMOVDQU64(scaleIdx(bb, 0, 4+4*b2i(7*bb+2 <= 128), 1), za)
	if 7*bb+2 > 128 && zb != za {
		c.VMOVDQU64(scaleIdx(bb, 4*bb-min(4*bb, 8*bb-128), 4, 1), zb)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// vnniWeights loads a pair of weight blocks (at woff and woff+wb) as
// unsigned bytes into Z0, laid out against the activation pair: nibbles of
// block 0 in 128-bit lanes 0 (low) and 1 (high), block 1 in lanes 2 and 3
// (a merge-masked broadcast, a per-lane shift of 0 or 4, a mask).
func vnniWeights(t *blockType, woff int) {
	weightPair(t, RSI, woff, Z0, Z20, Z22, Z23)
	if t.hbits {
		// The pair's 64 high bits, in element order, are a byte mask
		// under which 0x10 is added.
		c.MOVL(mem(RSI, woff+t.qw-4), EAX)
		c.MOVL(mem(RSI, woff+t.wb+t.qw-4), EBX)
		c.SHLQ(U8(32), RBX)
		c.ORQ(RBX, RAX)
		c.KMOVQ(RAX, K2)
		c.VPADDB(Z23, Z0, K2, Z0)
	}
}

// weightPair loads the weight blocks at woff and woff+wb of row into the
// halves of Z register dst as unsigned bytes: nibbles broadcast to each
// 128-bit lane (K1 the upper half), shifted by shift (0 or 4 per lane),
// masked by mask and, for t.lut, looked up in Z31; signed bytes flipped
// by bias (bytes 0x80).
func weightPair(t *blockType, row Register, woff int, dst, shift, mask, bias Register) {
	if !t.nibble {
		if idx(dst) < 16 {
			c.VMOVDQU(mem(row, woff+t.qw), asY(dst))
		} else {
			c.VMOVDQU64(mem(row, woff+t.qw), asY(dst))
		}
		c.VINSERTI64X4(U8(1), mem(row, woff+t.wb+t.qw), dst, dst)
		c.VPXORD(bias, dst, dst)
		return
	}
	c.VBROADCASTI32X4(mem(row, woff+t.qw), dst)
	c.VBROADCASTI32X4(mem(row, woff+t.wb+t.qw), K1, dst)
	c.VPSRLVQ(shift, dst, dst)
	c.VPANDD(mask, dst, dst)
	if t.lut {
		c.VPSHUFB(dst, Z31, dst)
	}
}

// vnniInts sums the unsigned weight bytes in v (Z0 or Y0) times the
// activations (in x, or at xm when x is nil) into float dwords in Z2/Y2,
// less bias·Σy.
func vnniInts(t *blockType, v, x Register, xm Op) {
	var src Op = x
	if x == nil {
		src = xm
	}
	acc, corr, bias := Z2, Z3, Z23
	if !isZ(v) {
		acc, corr, bias = Y2, Y3, Y23
	}
	c.VPXORD(acc, acc, acc)
	VPDPBUSD(src, v, acc)
	if t.bias != 0 {
		c.VPXORD(corr, corr, corr)
		VPDPBUSD(src, bias, corr)
		c.VPSUBD(corr, acc, acc)
	}
	c.VCVTDQ2PS(acc, acc)
}

// vnniPair leaves the float dword sums of the block pair at woff/xoff in Z2.
func vnniPair(t *blockType, woff, xoff int) {
	vnniWeights(t, woff)
	vnniXPair(t, xoff)
	vnniInts(t, Z0, Z1, nil)
}

// vnniXPair loads the activation pair at xoff into Z1.
func vnniXPair(t *blockType, xoff int) {
	c.VMOVDQU(mem(RDI, xoff+t.qx), Y1)
	c.VINSERTI64X4(U8(1), mem(RDI, xoff+t.xb+t.qx), Z1, Z1)
}

func dotBlockVNNI(t *blockType, vbmiUnpack bool) {
	loadArgs("w x nb", RSI, RDI, RCX)
	kmask(0xFF00, K1)
	if t.nibble {
		kmask(0xCC, K2)
		underMask(4, Z20, K2, true)
		bcast32(0x0F0F0F0F, Z22)
	}
	if t.bias != 0 || t.hbits {
		bcast32(addBytes(t), Z23)
	}
	if t.lut {
		// Z31: the biased levels in every 128-bit lane.
		c.VBROADCASTI32X4(t.lutTable(true), Z31)
	}
	if t.withMin {
		// Z24: dword 0 in lanes 0-7, 2 in lanes 8-15; Z25: 4 and 6 (the
		// d·d_x of (d·d_x, m·s) pairs).
		underMask(2, Z24, K1, false)
		c.MOVL(U32(4), EAX)
		c.VPBROADCASTD(EAX, Z25)
		c.VPADDD(Z24, Z25, Z25)
		// (d, m) of blocks 0-3 from offset 0, of blocks 4-7 from the
		// 128 bytes that end the eighth; (d, s) of four activation blocks.
		c.VMOVDQU64(scaleIdx(t.wb, 0, 4, 2), Z28)
		c.VMOVDQU64(scaleIdx(t.wb, 4*t.wb-(8*t.wb-128), 4, 2), Z29)
		c.VMOVDQU64(scaleIdx(t.xb, 0, 4, 2), Z30)
		zero(Z18)
	} else {
		// Z24-Z27: dword indexes 2p in lanes 0-7 and 2p+1 in lanes 8-15.
		underMask(1, Z24, K1, false)
		c.MOVL(U32(2), EAX)
		c.VPBROADCASTD(EAX, Z28)
		c.VPADDD(Z28, Z24, Z25)
		c.VPADDD(Z28, Z25, Z26)
		c.VPADDD(Z28, Z26, Z27)
		scaleTables(t.wb, Z29, Z28)
		if t.xb != t.wb {
			scaleTables(t.xb, Z30, Z30)
		}
	}
	zero(Z16)
	zero(Z17)
	if vbmiUnpack {
		// Z19: GF(2) bit matrices, identity on bits 0-3 in lanes 0 and 2,
		// bits 4-7 to 0-3 in lanes 1 and 3.
		bcastq(U64(0x0102040800000000), Z19, nil)
		bcastq(U64(0x1020408000000000), Z19, K2)
		c.VMOVDQU64(vbmiIdx(t, 0), Z12)
		c.VMOVDQU64(vbmiIdx(t, 3), Z13)
	}
	c.CMPQ(RCX, U8(8))
	c.JLT(ref("pair"))

	label("loop8")
	if t.withMin {
		// (d·d_x, m·s) of blocks 0-3 in Y6, 4-7 in Y7; the m·s sum in Y18.
		for h, r := range []Register{Z6, Z7} {
			widx := []Register{Z28, Z29}[h]
			woff := []int{0, 8*t.wb - 128}[h]
			tt := []Register{Z8, Z9}[h]
			c.VMOVDQU64(mem(RSI, woff), r)
			c.VPERMT2W(mem(RSI, woff+64), widx, r)
			c.VCVTPH2PS(asX(r), asY(r))
			c.VMOVDQU64(mem(RDI, 4*h*t.xb), tt)
			c.VPERMT2W(mem(RDI, 4*h*t.xb+64), Z30, tt)
			c.VCVTPH2PS(asX(tt), asY(tt))
			c.VMULPS(asY(tt), asY(r), asY(r))
			c.VADDPS(asY(r), Y18, Y18)
		}
	} else {
		wz := Z29
		wScales8(t, RSI, Y6, wz, Z28, Z6, Z8)
		xz, xz2 := Z29, Z28
		if t.xb != t.wb {
			xz, xz2 = Z30, Z30
		}
		scales8(RDI, t.xb, Y7, xz, xz2, Z7, Z9)
		c.VMULPS(Y7, Y6, Y4)
	}
	for p := 0; p < 4; p++ {
		woff, xoff := 2*p*t.wb, 2*p*t.xb
		if vbmiUnpack {
			// One 64-byte load and VPERMB place both blocks' nibble
			// bytes; VGF2P8AFFINEQB keeps the low nibbles in lanes 0 and
			// 2 and moves the high ones down in lanes 1 and 3.
			load := min(woff+t.qw, 8*t.wb-64)
			c.VPERMB(mem(RSI, load), []Register{Z12, Z13}[b2i(load != woff+t.qw)], Z0)
			VGF2P8AFFINEQB(U8(0), Z19, Z0, Z0)
			if t.lut {
				c.VPSHUFB(Z0, Z31, Z0)
			}
			vnniXPair(t, xoff)
			vnniInts(t, Z0, Z1, nil)
		} else {
			vnniPair(t, woff, xoff)
		}
		acc := []Register{Z16, Z17}[p%2]
		if t.withMin {
			c.VPERMPS([]Register{Z6, Z7}[p/2], []Register{Z24, Z25}[p%2], Z5)
		} else {
			c.VPERMPS(Z4, zr(24+p), Z5)
		}
		c.VFMADD231PS(Z5, Z2, acc)
	}
	nextChunk(RSI, U32(8*t.wb), RDI, U32(8*t.xb), 8, "loop8")

	label("pair")
	c.CMPQ(RCX, U8(2))
	c.JLT(ref("single"))
	vnniPair(t, 0, 0)
	wScale(t, mem(RSI, 0), X4, X6)
	wScale(t, mem(RSI, t.wb), X5, X6)
	c.VCVTPH2PS(mem(RDI, 0), X6)
	c.VCVTPH2PS(mem(RDI, t.xb), X7)
	if t.withMin {
		c.VMULPS(X6, X4, X4)
		c.VMULPS(X7, X5, X5)
		c.VUNPCKLPD(X5, X4, X4)
		c.VADDPS(Y4, Y18, Y18)
	} else {
		c.VMULSS(X6, X4, X4)
		c.VMULSS(X7, X5, X5)
		c.VINSERTPS(U8(0x10), X5, X4, X4)
	}
	c.VPERMPS(Z4, Z24, Z4)
	c.VFMADD231PS(Z4, Z2, Z16)
	c.ADDQ(U8(2*t.wb), RSI)
	c.ADDQ(U8(2*t.xb), RDI)
	c.SUBQ(U8(2), RCX)
	c.JMP(ref("pair"))

	label("single")
	c.VADDPS(Z17, Z16, Z16)
	fold512(Z16, Y1)
	jumpIfZero(RCX, "done")
	// One block in a Y register.
	if t.nibble {
		c.VMOVDQU(mem(RSI, t.qw), X0)
		c.VPSRLW(U8(4), X0, X1)
		c.VINSERTI128(U8(1), X1, Y0, Y0)
		c.VPANDD(Y22, Y0, Y0)
		if t.lut {
			c.VPSHUFB(Y0, Y31, Y0)
		}
		if t.hbits {
			c.MOVL(mem(RSI, t.qw-4), EAX)
			c.KMOVD(EAX, K2)
			c.VPADDB(Y23, Y0, K2, Y0)
		}
	} else {
		c.VMOVDQU(mem(RSI, t.qw), Y0)
		c.VPXORD(Y23, Y0, Y0)
	}
	vnniInts(t, Y0, nil, mem(RDI, t.qx))
	wScale(t, mem(RSI, 0), X4, X6)
	c.VCVTPH2PS(mem(RDI, 0), X6)
	if t.withMin {
		c.VMULPS(X6, X4, X4)
		c.VINSERTPS(U8(0x5D), X4, X4, X5)
		c.VADDPS(Y5, Y18, Y18)
	} else {
		c.VMULSS(X6, X4, X4)
	}
	c.VBROADCASTSS(X4, Y4)
	c.VFMADD231PS(Y4, Y2, Y16)

	label("done")
	if t.withMin {
		// Lanes 1, 3, 5, 7 of Y18 hold m·s sums; VMOVSHDUP doubles each
		// into the even lane below, so half of its sum is theirs.
		c.VMOVSHDUP(Y18, Y1)
		const32(0x3F000000, X2)
		c.VBROADCASTSS(X2, Y2)
		c.VFMADD231PS(Y2, Y1, Y16)
	}
	c.VMOVAPS(Y16, Y0)
	retSum()
}

// vbmiIdx is the VPERMB index table that, from 64 bytes loaded at pair p's
// first nibble byte (or earlier, for the last pair, so as not to read past
// the eighth block), puts the nibble bytes of the pair's first block in
// 128-bit lanes 0-1 and those of its second in lanes 2-3.
func vbmiIdx(t *blockType, p int) Mem {
	at := 2*p*t.wb + t.qw
	shift := at - min(at, 8*t.wb-64)
	b := make([]byte, 64)
	for i := range b {
		lane, k := i/16, i%16
		b[i] = byte(shift + k + t.wb*(lane/2))
	}
	return bytesTable(fmt.Sprintf("vbmiIdx%s_%d", t.name, shift), b)
}
