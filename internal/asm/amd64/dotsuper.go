package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// superType describes a k-quant weight type: 256-element super-blocks
// against Q8_K activations (292 bytes: float32 d at 0, qs[256] at 4, int16
// bsums[16] at 260).
type superType struct {
	name string
	wb   int // bytes per super-block
	qs   int // offset of the low nibbles
	// hbits: a fifth bit per element in qh[32] at 16 (Q5_K): bit 2j of
	// qh[l] for element 64j+l, bit 2j+1 for 64j+32+l.
	hbits bool
	six   bool // Q6_K's layout rather than Q4_K's
}

var (
	superQ4_K = &superType{name: "Q4_K", wb: 144, qs: 16}
	superQ5_K = &superType{name: "Q5_K", wb: 176, qs: 48, hbits: true}
	superQ6_K = &superType{name: "Q6_K", wb: 210, six: true}
)

// dotSuper emits dot<T><W>Asm(w, x *byte, nb int) float32 for a k-quant.
//
// Q4_K and Q5_K (fp16 d at 0, fp16 dmin at 2, 12 bytes of 6-bit scales
// and mins at 4, quants after): Σ d·sc·q·y − dmin·m·y per 32-element
// sub-block; the first part multiplies the unsigned quants by y
// (VPMADDUBSW) and then by the sub-block scales (VPMADDWD, or VPDPWSSD
// with VNNI), the second needs only the block sums, Σ m_j·(bsums[2j] +
// bsums[2j+1]). AVX2 takes 32 elements a register; VNNI broadcasts 32
// nibble bytes to both halves of a Z register and shifts them by 0 and 4,
// so one load of y serves 64 elements.
//
// Q6_K (ql[128] at 0, qh[64] at 128, int8 scales[16] at 192, fp16 d at
// 208): the 6-bit values are used unsigned and the −32 is taken off as
// 32·Σ scale·bsums.
func dotSuper(t *superType, w width) {
	text("dot"+t.name+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	loadArgs("w x nb", RSI, RDI, RCX)
	if t.six {
		dotQ6_K(w)
	} else {
		dotQ45_K(t, w)
	}
}

// kScales unpacks the 6-bit scales and mins of the super-block at base
// into out: bytes 0-7 the scales, 8-15 the mins. For j < 4 both are the
// low 6 bits of bytes j and j+4; for j >= 4 the low 4 bits come from the
// nibbles of byte j+4 and the top 2 from bits 6-7 of bytes j-4 and j. Both
// halves are built side by side in the 64-bit registers lo and hi (t, t2
// scratch); m3f, m03, m0f are bytes 0x3F, 0x03, 0x0F (registers or memory).
func kScales(base, out, lo, hi, t, t2 Register, m3f, m03, m0f Op) {
	c.MOVQ(mem(base, 4), lo)
	c.MOVL(mem(base, 12), hi.(GPPhysical).As32())
	c.MOVQ(lo, t)
	c.SHRQ(U8(6), t)
	c.ANDQ(m03, t)
	c.SHLQ(U8(4), t)
	c.MOVQ(hi, t2)
	c.SHLQ(U8(28), t2)
	c.ORQ(t2, hi)
	c.ANDQ(m0f, hi)
	c.ORQ(t, hi)
	c.ANDQ(m3f, lo)
	c.VMOVQ(lo, out)
	c.VPINSRQ(U8(1), hi, out, out)
	c.VPSHUFD(U8(0xD8), out, out)
}

// kScaleConsts loads the masks kScales needs.
func kScaleConsts() {
	c.MOVQ(U64(0x3F3F3F3F3F3F3F3F), R8)
	c.MOVQ(U64(0x0303030303030303), R9)
	c.MOVQ(U64(0x0F0F0F0F0F0F0F0F), R10)
}

// kBlockStart opens the Q4_K/Q5_K dot product's loop over super-blocks:
// the scales as words in X1, which spread copies to every 128-bit lane of
// the width's register, and the mins' sum (kMins).
func kBlockStart(spread func()) {
	label("loop")
	kScales(RSI, X0, RAX, RBX, RDX, R11, R8, R9, R10)
	c.VPMOVZXBW(X0, X1)
	spread()
	kMins()
}

// kMins leaves Σ m_j·(bsums[2j]+bsums[2j+1]) as 8 dwords in Y2, from the
// mins in X0.
func kMins() {
	c.VPSRLDQ(U8(8), X0, X2)
	c.VPUNPCKLBW(X2, X2, X2)
	c.VPMOVZXBW(X2, Y2)
	c.VPMADDWD(mem(RDI, 260), Y2, Y2)
}

// kBlockEnd closes a super-block of the dot product: the two integer sums
// s and s2 added, as floats times the scales (kFloats into d) into acc,
// the mins' sum in Y2 times theirs (Y6) into macc; then on to the next
// block of the weights (RSI) and of Q8_K (RDI, 292 bytes).
func kBlockEnd(t *superType, s, s2, d, acc, macc VecPhysical) {
	c.VPADDD(s2, s, s)
	c.VCVTDQ2PS(s, s)
	c.VCVTDQ2PS(Y2, Y2)
	kFloats(d, Y6)
	c.VFMADD231PS(d, s, acc)
	c.VFMADD231PS(Y6, Y2, macc)
	nextSuper(t.wb)
}

// nextSuper steps the dot products to the next super-block: wb bytes of
// the weights (RSI), one Q8_K block of the activations (RDI, 292 bytes),
// and loops while CX counts blocks left.
func nextSuper(wb int) {
	c.ADDQ(U32(wb), RSI)
	c.ADDQ(U32(292), RDI)
	decJNZ(RCX, "loop")
}

// kFloats broadcasts d·y.d into dsc and dmin·y.d into msc.
func kFloats(dsc, msc Register) { kFloatsAt(RSI, X3, X4, dsc, msc) }

// kFloatsAt is kFloats for the weights' block at row, with X registers
// t0 and t1 scratch.
func kFloatsAt(row, t0, t1, dsc, msc Register) {
	c.VCVTPH2PS(mem(row, 0), t0)
	c.VBROADCASTSS(mem(RDI, 0), t1)
	c.VMULPS(t1, t0, t0)
	c.VBROADCASTSS(t0, dsc)
	c.VMOVSHDUP(t0, t0)
	c.VBROADCASTSS(t0, msc)
}

// wordShuf is a VPSHUFB table of masks of size bytes each; mask k repeats,
// in 128-bit lane l, word pick(k, l).
func wordShuf(name string, masks, size int, pick func(k, lane int) int) Mem {
	b := make([]byte, masks*size)
	for k := 0; k < masks; k++ {
		for i := 0; i < size; i++ {
			wd := pick(k, i/16)
			b[k*size+i] = byte(2*wd + i%2)
		}
	}
	return bytesTable(name, b)
}

// kShuf: AVX2, mask k repeats word k of each lane (the scale of sub-block
// k). kShufZ: AVX-512, mask j repeats word 2j in lanes 0-1 and 2j+1 in
// lanes 2-3.
func kShuf() Mem { return wordShuf("kShuf", 8, 32, func(k, _ int) int { return k }) }
func kShufZ() Mem {
	return wordShuf("kShufZ", 4, 64, func(j, l int) int { return 2*j + l/2 })
}

// kChunkAVX2 adds the 64 elements of chunk j of the super-block at base
// times the activations at x to acc0 (the low nibbles) and acc1 (the high
// ones), as dwords: the unsigned quants (with the fifth bits, already at
// bit 4 of Y8 and Y9, for Q5_K) through VPMADDUBSW, then VPMADDWD with the
// scales (words in sc) picked by the kShuf table shuf. lo, hi, t scratch;
// Y15 bytes 0x0F.
func kChunkAVX2(t *superType, base, x Register, j int, sc, lo, hi, tmp, acc0, acc1 Register, shuf Mem) {
	kChunkAVX2Bits(t, base, x, j, sc, lo, hi, tmp, acc0, acc1, shuf, Y8, Y9)
}

// kChunkAVX2Bits is kChunkAVX2 with the fifth bits in h0 and h1.
func kChunkAVX2Bits(t *superType, base, x Register, j int, sc, lo, hi, tmp, acc0, acc1 Register, shuf Mem, h0, h1 Register) {
	splitNibbles(mem(base, t.qs+32*j), lo, hi)
	if t.hbits {
		c.VPOR(h0, lo, lo)
		c.VPOR(h1, hi, hi)
	}
	c.VPMADDUBSW(mem(x, 4+64*j), lo, lo)
	c.VPMADDUBSW(mem(x, 36+64*j), hi, hi)
	c.VPSHUFB(shuf.Offset(64*j), sc, tmp)
	c.VPMADDWD(tmp, lo, lo)
	c.VPSHUFB(shuf.Offset(64*j+32), sc, tmp)
	c.VPMADDWD(tmp, hi, hi)
	c.VPADDD(lo, acc0, acc0)
	c.VPADDD(hi, acc1, acc1)
}

// kHighBits puts the fifth bits of AVX2 chunk j's low (dst0) and high
// (dst1) halves at bit 4 of each byte, from qh in Y4: the byte's bit 2j
// (2j+1) is shifted to bit 4 by a word shift, whose spill into the
// neighbouring byte is masked off (Y14: bytes 0x10).
func kHighBits(j int, dst0, dst1 Register) {
	kHighBitsOf(j, dst0, dst1, Y4, Y14)
}

// kHighBitsOf is kHighBits from qh in qh, bytes 0x10 in b10.
func kHighBitsOf(j int, dst0, dst1, qh, b10 Register) {
	for i, dst := range []Register{dst0, dst1} {
		switch s := 4 - (2*j + i); {
		case s > 0:
			c.VPSLLW(U8(s), qh, dst)
			c.VPAND(b10, dst, dst)
		case s == 0:
			c.VPAND(b10, qh, dst)
		default:
			c.VPSRLW(U8(-s), qh, dst)
			c.VPAND(b10, dst, dst)
		}
	}
}

func dotQ45_K(t *superType, w width) {
	kScaleConsts()
	if w == avx2 {
		bcast32(0x0F0F0F0F, Y15)
		if t.hbits {
			bcast32(0x10101010, Y14)
		}
		zero(Y10)
		zero(Y11)
		shuf := kShuf()
		kBlockStart(func() { c.VINSERTI128(U8(1), X1, Y1, Y1) })
		c.VPXOR(Y12, Y12, Y12)
		c.VPXOR(Y13, Y13, Y13)
		if t.hbits {
			c.VMOVDQU(mem(RSI, 16), Y4)
		}
		for j := 0; j < 4; j++ {
			// Y7 the low nibbles (y[64j:]), Y6 (Q5_K) or Y8 the high ones
			// (y[64j+32:]).
			hi := Y8
			if t.hbits {
				kHighBits(j, Y8, Y9)
				hi = Y6
			}
			kChunkAVX2(t, RSI, RDI, j, Y1, Y7, hi, Y9, Y12, Y13, shuf)
		}
		kBlockEnd(t, Y12, Y13, Y5, Y10, Y11)
		c.VSUBPS(Y11, Y10, Y0)
		retSum()
		return
	}
	// Z20: qword shifts 0 and 4 per 256-bit half; Z21 bytes 0x0F; Z22
	// bytes 0x10; Z24-Z27: bytes 1<<2j in the low half and 1<<(2j+1) in
	// the high one, the fifth bits of chunk j.
	kmask(0xF0, K1)
	underMask(4, Z20, K1, true)
	bcast32(0x0F0F0F0F, Z21)
	if t.hbits {
		bcast32(0x10101010, Z22)
		bcast32(0x01010101, Z24)
		kmask(0xFF00, K3)
		c.MOVL(U32(0x02020202), EAX)
		c.VPBROADCASTD(EAX, K3, Z24)
		c.VPSLLW(U8(2), Z24, Z25)
		c.VPSLLW(U8(2), Z25, Z26)
		c.VPSLLW(U8(2), Z26, Z27)
	}
	zero(Z16)
	zero(Z17)
	shuf := kShufZ()
	kBlockStart(func() { c.VSHUFI32X4(U8(0), Z1, Z1, Z1) })
	if t.hbits {
		c.VBROADCASTI64X4(mem(RSI, 16), Z18)
	}
	zero(Z12)
	zero(Z13)
	for j := 0; j < 4; j++ {
		acc := []Register{Z12, Z13}[j%2]
		c.VBROADCASTI64X4(mem(RSI, t.qs+32*j), Z7)
		c.VPSRLVQ(Z20, Z7, Z7)
		c.VPANDD(Z21, Z7, Z7)
		if t.hbits {
			c.VPTESTMB(zr(24+j), Z18, K2)
			c.VPADDB(Z22, Z7, K2, Z7)
		}
		c.VPMADDUBSW(mem(RDI, 4+64*j), Z7, Z7)
		c.VPSHUFB(shuf.Offset(64*j), Z1, Z9)
		VPDPWSSD(Z9, Z7, acc)
	}
	kBlockEnd(t, Z12, Z13, Z5, Z16, Y17)
	fold512(Z16, Y1)
	c.VSUBPS(Y17, Y16, Y0)
	retSum()
}

// q6BlockAVX2 leaves in s, as floats, the scaled integer dot product of
// the Q6_K block at row with the Q8_K block at RDI: -32·Σ scale·bsums (b
// and t hold the partial steps) plus the two halves' products. s2 and r
// are scratch.
func q6BlockAVX2(row, b, t, s, s2 Register, r [8]Register, shuf Mem) {
	q6Bias(row, b, b, t, s2, s)
	for h := 0; h < 2; h++ {
		q6HalfAVX2(row, RDI, h, r, s, s2, shuf)
	}
	c.VPADDD(s2, s, s)
	c.VCVTDQ2PS(s, s)
}

// q6Bias sets s to -32·Σ scale·bsums for the Q6_K block at row and clears
// s2: the scales widened in b, their products with bsums in p, shifted in
// t (its Z form when s is a Z register).
func q6Bias(row, b, p, t, s2, s Register) {
	c.VPMOVSXBW(mem(row, 192), b)
	c.VPMADDWD(mem(RDI, 260), b, p)
	c.VPSLLD(U8(5), p, t)
	if isZ(s) {
		c.VPXORD(s2, s2, s2)
		t = asZ(t)
	} else {
		c.VPXOR(s2, s2, s2)
	}
	c.VPSUBD(t, s2, s)
}

// q6HalfAVX2 adds half h (128 elements) of the Q6_K super-block at base
// times the activations at x to acc0 and acc1 as dwords. r holds the
// registers it uses: the half's scales as words, ql (two), qh, the
// shifted qh, and two scratch. Y15 bytes 0x0F, Y14 bytes 0x30.
func q6HalfAVX2(base, x Register, h int, r [8]Register, acc0, acc1 Register, shuf Mem) {
	sc, l0, l1, qh, sh, t0, t1 := r[0], r[1], r[2], r[3], r[4], r[5], r[6]
	// piece: 32 elements, lo holding the low nibbles in its low 4 bits, hi
	// the two high bits in bits 4-5 (garbage elsewhere is masked).
	piece := func(lo, hi Register, yoff, k int, acc Register) {
		c.VPAND(Y15, lo, t0)
		c.VPAND(Y14, hi, t1)
		c.VPOR(t1, t0, t0)
		c.VPMADDUBSW(mem(x, yoff+128*h), t0, t0)
		c.VPSHUFB(shuf.Offset(32*k), sc, t1)
		c.VPMADDWD(t1, t0, t0)
		c.VPADDD(t0, acc, acc)
	}
	c.VPMOVSXBW(mem(base, 192+8*h), asX(sc))
	c.VINSERTI128(U8(1), asX(sc), sc, sc)
	c.VMOVDQU(mem(base, 64*h), l0)
	c.VMOVDQU(mem(base, 64*h+32), l1)
	c.VMOVDQU(mem(base, 128+32*h), qh)
	c.VPSLLW(U8(4), qh, sh)
	piece(l0, sh, 4, 0, acc0)
	c.VPSLLW(U8(2), qh, sh)
	piece(l1, sh, 36, 1, acc1)
	c.VPSRLW(U8(4), l0, l0)
	piece(l0, qh, 68, 2, acc0)
	c.VPSRLW(U8(4), l1, l1)
	c.VPSRLW(U8(2), qh, sh)
	piece(l1, sh, 100, 3, acc1)
}

// halfScale broadcasts d·y.d into dst (its X form is xd), d the fp16 at
// m. It is loaded alone rather than with VCVTPH2PS's 8-byte read: Q6_K's
// d is the last two bytes of the block.
func halfScale(m Mem, xd, dst Register) {
	c.MOVWLZX(m, EAX)
	c.VMOVD(EAX, xd)
	c.VCVTPH2PS(xd, xd)
	c.VMULSS(mem(RDI, 0), xd, xd)
	c.VBROADCASTSS(xd, dst)
}

// q6Shuf: AVX2, mask k repeats word 2k in the low lane and 2k+1 in the
// high one. q6Idx: AVX-512 VPERMW indexes, index p repeats word 4p+i in
// 128-bit lane i, the scale of the 16 elements that lane meets.
func q6Shuf() Mem { return wordShuf("q6Shuf", 4, 32, func(k, l int) int { return 2*k + l }) }
func q6Idx() Mem  { return wordsTable("q6Idx", spreadIdx[uint16](128, 32, 4, 8)) }

func dotQ6_K(w width) {
	if w == avx2 {
		bcast32(0x0F0F0F0F, Y15)
		bcast32(0x30303030, Y14)
		zero(Y10)
		shuf := q6Shuf()
		label("loop")
		// 32·Σ scale·bsums, to subtract.
		q6BlockAVX2(RSI, Y2, Y12, Y12, Y13, [8]Register{Y1, Y3, Y4, Y5, Y8, Y6, Y7}, shuf)
		halfScale(mem(RSI, 208), X3, Y3)
		c.VFMADD231PS(Y3, Y12, Y10)
		nextSuper(210)
		c.VMOVAPS(Y10, Y0)
		retSum()
		return
	}
	// Z26/Z27: qword shift counts 4,2 (left) and 0,2 (right) for the two
	// 256-bit halves; Z29 bytes 0x30, Z30 bytes 0x0F; Z20-Z23 q6Idx.
	kmask(0xF0, K1)
	bcastq(U32(4), Z26, nil)
	bcastq(U32(2), Z26, K1)
	c.VPXORD(Z27, Z27, Z27)
	c.VPBROADCASTQ(RAX, K1, Z27)
	bcast32(0x30303030, Z29)
	bcast32(0x0F0F0F0F, Z30)
	idx := q6Idx()
	for p := 0; p < 4; p++ {
		c.VMOVDQU64(idx.Offset(64*p), zr(20+p))
	}
	zero(Z16)
	// piece: 64 elements; VPTERNLOGD $0xF8 computes hi | (lo & 0x0F).
	piece := func(lo, hi Register, y Mem, ix, acc Register) {
		c.VPANDD(Z29, hi, hi)
		c.VPTERNLOGD(U8(0xF8), Z30, lo, hi)
		c.VPMADDUBSW(y, hi, hi)
		c.VPERMW(Z1, ix, Z7)
		VPDPWSSD(Z7, hi, acc)
	}
	label("loop")
	q6Bias(RSI, Y1, Y2, Y2, Z13, Z12)
	for h := 0; h < 2; h++ {
		// Z3 = ql[64h:64h+64]; Z5 = qh[32h:] in both halves, shifted per
		// 256 bits so that bits 4-5 hold the high bits each element needs.
		c.VMOVDQU64(mem(RSI, 64*h), Z3)
		c.VBROADCASTI64X4(mem(RSI, 128+32*h), Z5)
		c.VPSLLVQ(Z26, Z5, Z6)
		piece(Z3, Z6, mem(RDI, 4+128*h), zr(20+2*h), Z12)
		c.VPSRLQ(U8(4), Z3, Z3)
		c.VPSRLVQ(Z27, Z5, Z5)
		piece(Z3, Z5, mem(RDI, 68+128*h), zr(21+2*h), Z13)
	}
	c.VPADDD(Z13, Z12, Z12)
	c.VCVTDQ2PS(Z12, Z12)
	halfScale(mem(RSI, 208), X3, Z3)
	c.VFMADD231PS(Z3, Z12, Z16)
	nextSuper(210)
	c.VEXTRACTF64X4(U8(1), Z16, Y1)
	c.VADDPS(Y1, Y16, Y0)
	retSum()
}
