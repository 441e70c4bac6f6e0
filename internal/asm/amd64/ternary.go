package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The ternary types against Q8_K (see quant/tq.go for the layouts): every
// weight is d·(c−1) with a code c in {0, 1, 2}. The codes are unsigned
// bytes, VPMADDUBSW's and VPDPBUSD's first operand, and the −1 is taken
// off once a block as Σ y, the sum of the Q8_K block sums. Per block the
// integer sum is reduced to a scalar and then scaled, as the pure-Go
// kernels (and ggml's reference) do, sum += float32(isum)·(d·d_y): the
// results are theirs bit for bit.
//
// Registers: RSI the weights, RDI the activations, RCX blocks left; X0
// the float sum; Y4 (Z4) the block's integer sum.

// dotTQ2_0 emits dotTQ2_0<W>Asm. AVX2: the 32 bytes of each half, shifted
// by 2j and masked, times the 32 activations of run j (VPMADDUBSW) into
// words, which start at −bsums (|word| ≤ 8·2·3·128 + 16·128, inside
// int16). VNNI: each half's 32 bytes in both halves of a Z register,
// shifted by 0 and 2 (then 4 and 6) per 256 bits, so that one VPDPBUSD
// takes 64 contiguous activations.
func dotTQ2_0(w width) {
	text("dotTQ2_0"+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	loadArgs("w x nb", RSI, RDI, RCX)
	c.VXORPS(X0, X0, X0)
	if w == avx2 {
		bcast32(0x03030303, Y15)
		bcast32(0x00010001, Y14)
		label("loop")
		c.VPXOR(Y4, Y4, Y4)
		c.VPSUBW(mem(RDI, 260), Y4, Y4)
		for h := 0; h < 2; h++ {
			c.VMOVDQU(mem(RSI, 32*h), Y1)
			for j := 0; j < 4; j++ {
				bitPair(Y1, j, Y15, Y2)
				wordDot(Y2, mem(RDI, 4+128*h+32*j), Y4)
			}
		}
		c.VPMADDWD(Y14, Y4, Y4)
		tqBlockEnd(64, tq2_0Bytes)
		retFloat()
		return
	}
	kmask(0xF0, K1)
	underMask(2, Z20, K1, true)
	bcastq(U32(4), Z21, nil)
	bcastq(U32(6), Z21, K1)
	bcast32(0x03030303, Z22)
	label("loop")
	c.VPMOVSXWD(mem(RDI, 260), Z1)
	c.VPXORD(Z4, Z4, Z4)
	c.VPSUBD(Z1, Z4, Z4)
	for h := 0; h < 2; h++ {
		c.VBROADCASTI64X4(mem(RSI, 32*h), Z1)
		for k, sh := range []Register{Z20, Z21} {
			c.VPSRLVQ(sh, Z1, Z2)
			c.VPANDD(Z22, Z2, Z2)
			VPDPBUSD(mem(RDI, 4+128*h+64*k), Z2, Z4)
		}
	}
	c.VEXTRACTI64X4(U8(1), Z4, Y1)
	c.VPADDD(Y1, Y4, Y4)
	tqBlockEnd(64, tq2_0Bytes)
	retFloat()
}

// wordDot adds the products of the unsigned codes u with the signed
// activations at y to the words of acc, pair by pair (u is overwritten).
func wordDot(u Register, y Mem, acc Register) {
	c.VPMADDUBSW(y, u, u)
	c.VPADDW(u, acc, acc)
}

// tq2_0Bytes and tq1_0Bytes are the block sizes.
const (
	tq2_0Bytes = 66
	tq1_0Bytes = 54
)

// tqBlockEnd closes a block: the eight dwords of Y4 summed into a scalar,
// converted, times d (the fp16 at dOff) · d_y, added to X0; then on to the
// next block (wb bytes of weights).
func tqBlockEnd(dOff, wb int) {
	c.VEXTRACTI128(U8(1), Y4, X1)
	c.VPADDD(X1, X4, X4)
	c.VPSHUFD(U8(0x4E), X4, X1)
	c.VPADDD(X1, X4, X4)
	c.VPSHUFD(U8(0xB1), X4, X1)
	c.VPADDD(X1, X4, X4)
	c.VCVTDQ2PS(X4, X4)
	c.MOVWLZX(mem(RSI, dOff), EAX)
	c.VMOVD(EAX, X1)
	c.VCVTPH2PS(X1, X1)
	c.VMULSS(mem(RDI, 0), X1, X1)
	c.VMULSS(X1, X4, X4)
	c.VADDSS(X4, X0, X0)
	nextSuper(wb)
}

// dotTQ1_0 emits dotTQ1_0<W>Asm. A byte q holds its codes as the base-3
// digits of the fraction q/256, so digit n is ⌊3·(q·3^n mod 256)/256⌋: 0
// below 86, 1 below 171, 2 from there. The kernel works on s = q ^ 0x80,
// whose byte products stay in step ((q·3) ^ 0x80 = 3·s mod 256), so that
// each digit is two signed compares (s > −43, s > 42) whose masks add up
// to the code. The codes are laid out in registers in the activations'
// order, 32 (AVX2) or 64 (VNNI) at a time: qs[0:32]'s five digits, then
// qs[32:48]'s five beside one another (s, 3s, 9s …), then qh's dword
// broadcast and each dword taken to its own power of 3 (the codes of
// elements 240+4n … 243+4n are digit n of qh's four bytes). AVX2 adds
// the compares' −1 masks and takes their magnitude (VPABSB) for
// VPMADDUBSW, into words as in dotTQ2_0 (|word| ≤ 8·2·2·128 + 16·128);
// VNNI puts ones under the first mask and adds ones under the second
// for VPDPBUSD.
func dotTQ1_0(w width) {
	text("dotTQ1_0"+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	loadArgs("w x nb", RSI, RDI, RCX)
	c.VXORPS(X0, X0, X0)
	tq1Dot.load(func(r Register) VecPhysical { return w.vec(idx(r)) })
	if w == avx2 {
		bcast32(0x00010001, Y14)
	} else {
		bcast32(0x01010101, Z11)
	}
	label("loop")
	if w == avx2 {
		c.VPXOR(Y4, Y4, Y4)
		c.VPSUBW(mem(RDI, 260), Y4, Y4)
		tq1CodesAVX2(tq1Dot, func(off int) Mem { return mem(RSI, off) }, func(k int) {
			wordDot(Y2, mem(RDI, 4+32*k), Y4)
		})
		c.VPMADDWD(Y14, Y4, Y4)
	} else {
		c.VPMOVSXWD(mem(RDI, 260), Z1)
		c.VPXORD(Z4, Z4, Z4)
		c.VPSUBD(Z1, Z4, Z4)
		tq1Codes(tq1Dot, func(off int) Mem { return mem(RSI, off) }, func(k int) {
			VPDPBUSD(mem(RDI, 4+64*k), Z2, Z4)
		})
		c.VEXTRACTI64X4(U8(1), Z4, Y1)
		c.VPADDD(Y1, Y4, Y4)
	}
	tqBlockEnd(52, tq1_0Bytes)
	retFloat()
}

// tq1Times3 sets r = 3·r bytewise (t scratch, of r's size).
func tq1Times3(r, t Register) {
	c.VPADDB(r, r, t)
	c.VPADDB(t, r, r)
}

// tq1QhLanes sets dst (X) to the s of the codes of qh (the dword at qh):
// dword n its four bytes' s times 3^n (q, t scratch; x80 bytes 0x80).
func tq1QhLanes(qh Mem, x80, dst, q, t Register) {
	c.VPBROADCASTD(qh, dst)
	c.VPXOR(x80, dst, dst)
	c.VMOVDQA(dst, q)
	for n := 1; n < 4; n++ {
		tq1Times3(q, t)
		c.VPBLENDD(U8(1<<n), q, dst, dst)
	}
}

// tq1Regs are the registers tq1Codes works in: a, b, p and e hold s =
// q^0x80 and its multiples by powers of 3, t the codes (and scratch), q
// scratch, x80 bytes 0x80 (all below 16: VEX forms take them); ones, hi
// and lo the bytes 1, 42 and −43 (any register: only EVEX forms take
// them).
type tq1Regs struct{ a, t, q, p, b, e, x80, ones, hi, lo Register }

// tq1Dot are dotTQ1_0's registers, tq1Gemm gemmTQ1_0's (whose Z0-Z7 hold
// its accumulators), tq1GemmAVX2 gemmTQ1_0AVX2's (Y0-Y3, and only a, t,
// q, p and the compares' constants: tq1CodesAVX2's).
var (
	tq1Dot      = tq1Regs{Z1, Z2, Z3, Z5, Z6, Z7, Z15, Z11, Z12, Z13}
	tq1Gemm     = tq1Regs{Z8, Z9, Z10, Z11, Z12, Z13, Z15, Z26, Z27, Z28}
	tq1GemmAVX2 = tq1Regs{a: Z4, t: Z5, q: Z6, p: Z7, x80: Z15, hi: Z12, lo: Z13}
)

// load broadcasts the bytes tq1Codes and tq1CodesAVX2 work with: 0x80
// to x80's Y register (only its Y and X halves are read), −43 and 42 to
// lo and hi in the view v (Z or Y: the one the kernel compares in).
func (r tq1Regs) load(v func(Register) VecPhysical) {
	bcast32(0x80808080, asY(r.x80))
	bcast32(0xD5D5D5D5, v(r.lo)) // −43
	bcast32(0x2A2A2A2A, v(r.hi)) // 42
}

// tq1Codes emits the decoding of the codes of the TQ1_0 block whose byte
// off is at(off), 64 at a time in element order in r.t: emit(k) takes
// those of elements 64k..64k+63 before the next are made. qs[0:32]: [s,
// 3s], [9s, 27s], then 81s beside qs[32:48]'s s and 3s; then qs[32:48]'s
// 9s, 27s, 81s beside qh's codes. A code is 1 under the first compare's
// mask, plus 1 under the second's.
func tq1Codes(r tq1Regs, at func(off int) Mem, emit func(k int)) {
	z, y, x := asZ, asY, asX
	codes := func(s Register, k int) {
		c.VPCMPGTB(z(r.lo), z(s), K1)
		c.VPCMPGTB(z(r.hi), z(s), K2)
		c.VMOVDQU8_Z(z(r.ones), K1, z(r.t))
		c.VPADDB(z(r.ones), z(r.t), K2, z(r.t))
		emit(k)
	}
	c.VPXOR(at(0), y(r.x80), y(r.a))
	c.VMOVDQA(y(r.a), y(r.p))
	tq1Times3(y(r.p), y(r.t))
	c.VINSERTI64X4(U8(1), y(r.p), z(r.a), z(r.a))
	codes(r.a, 0)
	for range 2 {
		tq1Times3(z(r.a), z(r.t))
	}
	codes(r.a, 1)
	for range 2 {
		tq1Times3(z(r.a), z(r.t))
	}
	c.VPXOR(at(32), x(r.x80), x(r.b))
	c.VMOVDQA(x(r.b), x(r.e))
	tq1Times3(x(r.e), x(r.t))
	c.VINSERTI32X4(U8(2), x(r.b), z(r.a), z(r.a))
	c.VINSERTI32X4(U8(3), x(r.e), z(r.a), z(r.a))
	codes(r.a, 2)
	c.VINSERTI128(U8(1), x(r.e), y(r.b), y(r.b))
	for range 2 {
		tq1Times3(y(r.b), y(r.t))
	}
	c.VMOVDQA(x(r.b), x(r.e))
	for range 2 {
		tq1Times3(x(r.e), x(r.t))
	}
	tq1QhLanes(at(48), x(r.x80), x(r.p), x(r.q), x(r.t))
	c.VINSERTI32X4(U8(2), x(r.e), z(r.b), z(r.b))
	c.VINSERTI32X4(U8(3), x(r.p), z(r.b), z(r.b))
	codes(r.b, 3)
}

// tq1CodesAVX2 is tq1Codes with AVX2: the codes 32 at a time in r.t
// (Y), emit(k) taking those of elements 32k..32k+31: qs[0:32]'s five
// digits, then qs[32:48]'s [s, 3s], [9s, 27s], then 81s beside qh's
// codes. A code is the magnitude of the compares' −1 masks added.
func tq1CodesAVX2(r tq1Regs, at func(off int) Mem, emit func(k int)) {
	y, x := asY, asX
	codes := func(k int) {
		c.VPCMPGTB(y(r.lo), y(r.a), y(r.t))
		c.VPCMPGTB(y(r.hi), y(r.a), y(r.q))
		c.VPADDB(y(r.q), y(r.t), y(r.t))
		c.VPABSB(y(r.t), y(r.t))
		emit(k)
	}
	c.VPXOR(at(0), y(r.x80), y(r.a))
	for n := 0; n < 5; n++ {
		if n > 0 {
			tq1Times3(y(r.a), y(r.t))
		}
		codes(n)
	}
	c.VPXOR(at(32), x(r.x80), x(r.a))
	c.VMOVDQA(x(r.a), x(r.p))
	tq1Times3(x(r.p), x(r.t))
	c.VINSERTI128(U8(1), x(r.p), y(r.a), y(r.a))
	codes(5)
	for range 2 {
		tq1Times3(y(r.a), y(r.t))
	}
	codes(6)
	for range 2 {
		tq1Times3(y(r.a), y(r.t))
	}
	tq1QhLanes(at(48), x(r.x80), x(r.p), x(r.q), x(r.t))
	c.VINSERTI128(U8(1), x(r.p), y(r.a), y(r.a))
	codes(7)
}

// gemmTernaryAhead is how far ahead of its block a ternary GEMM
// prefetches a row.
const gemmTernaryAhead = 4096

// A ternary panel's super-block: tqGroups groups of four elements (128
// bytes each), then −Σy (tqSeed) and d_x (tqDx) of the 32 columns.
const (
	tqGroups     = 64
	tqSeed       = 128 * tqGroups
	tqDx         = tqSeed + 128
	tqPanelBlock = tqDx + 128
)

// gemmTernary emits gemm<T>VNNI, the GEMM kernel of TQ2_0 or TQ1_0
// (gemm.go's signature and loops, one per panel width), against quant's
// ternary panels of Q8_K activations: per super-block its 64 groups of
// four elements in element order (128 bytes each), then −Σy of the 32
// columns (int32), then their d_x. Per super-block, decode(r, at) first
// writes row r's 256 codes in element order to the frame at at (it may
// take Z8-Z13, and constants in Z15 and Z26-Z28 that consts loads), so
// that a group's four codes are one VPBROADCASTD from there, and the
// decoding is done once per row and super-block for the 32 columns. Each
// group of the panel is loaded once for the four rows (loads, not
// VPDPBUSD, bounded a row-at-a-time loop); the sums start at −Σy, so they
// are the dot product's exact isum, and the float work is
// (d_w·d_x)·isum once per super-block, row and 16 columns, as the dot
// product associates.
//
// Registers: Z0-Z7 accumulators (row r, half h in Z(2r+h)), Z16-Z23 the
// integer sums (same order, from Z16), Z24/Z25 d_x, Z14 d_w, Z8-Z11 the
// rows' broadcast codes, Z12/Z13 the group's panel halves (then
// scratch). General: SI, BX, R8, R9 the rows, DI the panel, CX
// super-blocks left.

func gemmTernary(name string, wb, dOff int, consts func(), decode func(l gemmLayout, r int, at Mem)) {
	l := inPlace("gemm"+name+"VNNI", wb)
	var codes Mem
	gemmKernel(l, func() {
		codes = c.AllocLocal(4 * 256)
		consts()
	}, func(w gemmWidth, res Mem) {
		v := w.v
		sum := func(r, h int) VecPhysical { return v(zr(16 + 2*r + h)) }
		label("w" + w.sfx())
		zeroAcc(vnni, 8)
		label("loop" + w.sfx())
		for r := range tileRowRegs {
			for off := 0; off < wb; off += 64 {
				c.PREFETCHT0(l.at(r, gemmTernaryAhead+off))
			}
			decode(l, r, codes.Offset(256*r))
		}
		for h := 0; h < w.halves(); h++ {
			c.VMOVUPS(mem(RDI, tqDx+64*h), v(zr(24+h)))
			c.VMOVDQU32(mem(RDI, tqSeed+64*h), sum(0, h))
			for r := 1; r < len(tileRowRegs); r++ {
				c.VMOVDQA32(sum(0, h), sum(r, h))
			}
		}
		for g := 0; g < tqGroups; g++ {
			for h := 0; h < w.halves(); h++ {
				c.VMOVDQU32(mem(RDI, 128*g+64*h), v(zr(12+h)))
			}
			for r := range tileRowRegs {
				u := v(zr(8 + r))
				c.VPBROADCASTD(codes.Offset(256*r+4*g), u)
				for h := 0; h < w.halves(); h++ {
					VPDPBUSD(v(zr(12+h)), u, sum(r, h))
				}
			}
		}
		for r := range tileRowRegs {
			c.VPBROADCASTW(l.at(r, dOff), w.half(Z14))
			c.VCVTPH2PS(w.half(Z14), v(Z14))
			for h := 0; h < w.halves(); h++ {
				f := v(zr(12 + h))
				c.VCVTDQ2PS(sum(r, h), sum(r, h))
				c.VMULPS(v(zr(24+h)), v(Z14), f)
				c.VFMADD231PS(f, sum(r, h), v(zr(2*r+h)))
			}
		}
		l.next()
		gemmEnd(tqPanelBlock, func(res Mem) { gemmStoreWidth(res, w) }, res, w.sfx())
	})
}

// gemmTQ2_0 emits gemmTQ2_0VNNI: a row's 64 code bytes shifted by 2j and
// masked (Z15 bytes 3) are the codes of runs 32j+l (low 32 bytes) and
// 128+32j+l (high), l < 32.
func gemmTQ2_0() {
	gemmTernary("TQ2_0", tq2_0Bytes, 64, func() { bcast32(0x03030303, Z15) }, func(l gemmLayout, r int, at Mem) {
		c.VMOVDQU64(l.at(r, 0), Z8)
		for j := 0; j < 4; j++ {
			c.VPSRLW(U8(2*j), Z8, Z9)
			c.VPANDD(Z15, Z9, Z9)
			c.VMOVDQU(Y9, at.Offset(32*j))
			c.VEXTRACTI64X4(U8(1), Z9, at.Offset(128+32*j))
		}
	})
}

// gemmTQ1_0 emits gemmTQ1_0VNNI: a row's codes by tq1Codes, as the dot
// product decodes them.
func gemmTQ1_0() {
	r := tq1Gemm
	gemmTernary("TQ1_0", tq1_0Bytes, 52, func() {
		r.load(asZ)
		bcast32(0x01010101, r.ones)
	}, func(l gemmLayout, row int, at Mem) {
		tq1Codes(r, func(off int) Mem { return l.at(row, off) }, func(k int) {
			c.VMOVDQU64(r.t, at.Offset(64*k))
		})
	})
}

// gemmTernaryAVX2 emits gemm<T>AVX2, gemmTernary with AVX2 on one row
// (gemmavx2.go's signature and loops): per super-block decode(r, at)
// writes the row's codes to the frame, then per group its four codes are
// broadcast and VPMADDUBSW multiplies them with each eight columns' into
// word sums, turned into dwords (VPMADDWD) after 32 groups, before they
// could leave int16 (32·2·3·128 < 2^15, a code of 3 included); the first
// half's dwords, started at −Σy, wait in the frame for the second's.
//
// Registers: Y0-Y3 accumulators, Y4-Y7 sums (columns 8k..8k+7 in
// Y(4+k)), Y8 the broadcast codes, Y9 scratch, Y14 d_w; decode may take
// Y4-Y11 and constants in Y12, Y13 and Y15, which consts loads.
func gemmTernaryAVX2(name string, wb, dOff int, consts func(), decode func(l gemmLayout, at Mem)) {
	l := inPlace(gemmAVX2Name(name), wb)
	res, ones := gemmAVX2Begin(l, 32*4+256+128)
	codes, part := res.Offset(32*4), res.Offset(32*4+256)
	for _, w := range gemmAVX2Widths {
		label("w" + w.sfx())
		consts()
		label("loop" + w.sfx())
		for off := 0; off < wb; off += 64 {
			c.PREFETCHT0(l.at(0, gemmTernaryAhead+off))
		}
		decode(l, codes)
		for half := 0; half < 2; half++ {
			for k := 0; k < w.regs(); k++ {
				zero(yr(4 + k))
			}
			for g := 32 * half; g < 32*(half+1); g++ {
				c.VPBROADCASTD(codes.Offset(4*g), Y8)
				for k := 0; k < w.regs(); k++ {
					c.VPMADDUBSW(mem(RDI, 128*g+32*k), Y8, Y9)
					c.VPADDW(Y9, yr(4+k), yr(4+k))
				}
			}
			for k := 0; k < w.regs(); k++ {
				i := yr(4 + k)
				c.VPMADDWD(ones, i, i)
				if half == 0 {
					c.VPADDD(mem(RDI, tqSeed+32*k), i, i)
					c.VMOVDQU(i, part.Offset(32*k))
				} else {
					c.VPADDD(part.Offset(32*k), i, i)
				}
			}
		}
		c.VPBROADCASTW(l.at(0, dOff), X14)
		c.VCVTPH2PS(X14, Y14)
		for k := 0; k < w.regs(); k++ {
			i := yr(4 + k)
			c.VCVTDQ2PS(i, i)
			c.VMULPS(mem(RDI, tqDx+32*k), Y14, Y9)
			c.VFMADD231PS(Y9, i, yr(k))
		}
		l.next()
		gemmEnd(tqPanelBlock, func(res Mem) { gemmStoreRow(res, w) }, res, w.sfx())
	}
}

// gemmTQ2_0AVX2 emits gemmTQ2_0AVX2: gemmTQ2_0's decoding in two Y
// registers, the halves' 32 bytes.
func gemmTQ2_0AVX2() {
	gemmTernaryAVX2("TQ2_0", tq2_0Bytes, 64, func() { bcast32(0x03030303, Y15) }, func(l gemmLayout, at Mem) {
		for hh := 0; hh < 2; hh++ {
			c.VMOVDQU(l.at(0, 32*hh), Y4)
			for j := 0; j < 4; j++ {
				c.VPSRLW(U8(2*j), Y4, Y5)
				c.VPAND(Y15, Y5, Y5)
				c.VMOVDQU(Y5, at.Offset(128*hh+32*j))
			}
		}
	})
}

// gemmTQ1_0AVX2 emits gemmTQ1_0AVX2: a row's codes by tq1CodesAVX2.
func gemmTQ1_0AVX2() {
	r := tq1GemmAVX2
	gemmTernaryAVX2("TQ1_0", tq1_0Bytes, 52, func() { r.load(asY) }, func(l gemmLayout, at Mem) {
		tq1CodesAVX2(r, func(off int) Mem { return l.at(0, off) }, func(k int) {
			c.VMOVDQU(asY(r.t), at.Offset(32*k))
		})
	})
}
