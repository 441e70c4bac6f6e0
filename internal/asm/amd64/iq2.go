package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The 2-bit lattice types against Q8_K, 256 elements a super-block, fp16
// d at 0; every group of eight elements is an 8-byte point of a grid
// (magnitudes 8, 25 or 43) with eight signs, and each 32-element
// sub-block b has a 4-bit scale s, meaning 2s+1:
//
//	IQ2_XXS (66 B) at 2+8b four index bytes, then a uint32 whose bits
//	               7g..7g+6 are group g's signs and whose top nibble is s
//	IQ2_XS  (74 B) uint16s at 2: a 9-bit index, seven sign bits above;
//	               scales[8] at 66, the low nibble for groups 0-1 of a
//	               sub-block, the high one for groups 2-3
//	IQ2_S   (82 B) index bytes at 2, sign bytes at 34, qh[8] at 66 (bits
//	               2g, 2g+1 of byte b: index bits 8-9 of group g), scales
//	               at 74 as IQ2_XS's
//
// Seven stored signs stand for eight: the eighth makes the count of minus
// signs even (ggml's ksigns_iq2xs). The kernels compute that parity from
// two nibble lookups rather than reading a 128-entry table per group.
//
// As for IQ3_S (lowsuper.go), the signs go to the activations (VPSIGNB,
// or with VNNI a VPSUBB under a mask; exact because Q8_K never holds
// −128), the grid bytes stay unsigned for VPMADDUBSW, and VPMADDWD (or
// VPDPWSSD) applies the scales: each super-block's sum is
// the Go twins' exact int32, times d·y.d in float32 lanes, and the whole
// times 1/8.
type iq2Type struct {
	name string
	wb   int    // bytes per super-block
	grid string // package quant's [N]uint64 grid, gathered in place
}

var (
	iq2XXS = &iq2Type{name: "IQ2_XXS", wb: 66, grid: "iq2xxsGrid"}
	iq2XS  = &iq2Type{name: "IQ2_XS", wb: 74, grid: "iq2xsGrid"}
	iq2S   = &iq2Type{name: "IQ2_S", wb: 82, grid: "iq2sGrid"}
)

// dotIQ2 emits dot<T><W>Asm(w, x *byte, nb int) float32.
func dotIQ2(t *iq2Type, w width) {
	text("dot"+t.name+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	if w == avx2 {
		iq2AVX2(t)
	} else {
		iq2VNNI(t)
	}
}

// iq2GridAddr is the address of t's grid in package quant.
func iq2GridAddr(t *iq2Type) Mem { return NewDataAddr(Symbol{Name: "·" + t.grid}, 0) }

// iq2Dwords are the tables of iq2Table that repeat one dword.
var iq2Dwords = map[string]uint32{
	"iq2Lo14": 0x00003FFF,
	"iq2Hi14": 0x3FFF0000,
	"iq2Lo7":  0x007F007F,
	"iq2Hi7":  0x7F007F00,
	"iq2W1FF": 0x01FF01FF,
	"iq2W300": 0x03000300,
}

// iq2Table returns the constant table of that name (32 bytes, or 64:
// iq2QhShuf).
func iq2Table(name string) Mem {
	if d, ok := iq2Dwords[name]; ok {
		return dwordsTable(name, []uint32{d, d, d, d, d, d, d, d})
	}
	switch name {
	case "iq2Parity":
		// Byte n: 0x80 when n has an odd number of bits set, in both
		// 128-bit lanes for VPSHUFB.
		b := make([]byte, 32)
		for i := range b {
			n := i % 16
			if (n^n>>1^n>>2^n>>3)&1 != 0 {
				b[i] = 0x80
			}
		}
		return bytesTable(name, b)
	case "iq2QhShuf":
		// IQ2_S: word k of half h (sub-blocks 4h..4h+3) takes qh byte
		// 4h + k/4 in its low byte, zero in its high one.
		b := make([]byte, 64)
		for h := 0; h < 2; h++ {
			for k := 0; k < 16; k++ {
				b[32*h+2*k] = byte(4*h + k/4)
				b[32*h+2*k+1] = 0x80
			}
		}
		return bytesTable(name, b)
	case "iq2QhMul":
		// Word k times 2^(8-2g), g = k%4: bits 2g, 2g+1 to bits 8, 9.
		h := make([]uint16, 16)
		for k := range h {
			h[k] = 1 << (8 - 2*(k%4))
		}
		return wordsTable(name, h)
	}
	panic("iq2Table: " + name)
}

// ---------------------------------------------------------------------
// AVX2: one super-block at a time, one 32-element sub-block a register.
// Y0 accumulator, Y1 bytes 1, Y2 the parity table, Y3 the scales as
// words, Y4-Y13 scratch (Y8, Y9 the integer sums), Y14 spread4, Y15
// bitsel; R13 the grid, R8-R11 grid indexes. The stack holds the sign
// bytes of the super-block's 32 groups (IQ2_XXS, IQ2_XS) at 0 and their
// grid indexes as words (IQ2_XS, IQ2_S) at 32.

func iq2AVX2(t *iq2Type) {
	stack := c.AllocLocal(96)
	signs, idx := stack, stack.Offset(32)
	loadArgs("w x nb", RSI, RDI, RCX)
	c.VMOVDQU(lowTable("bitsel"), Y15)
	c.VMOVDQU(bytesTable("spread4", spreadBytes()), Y14)
	c.VMOVDQU(iq2Table("iq2Parity"), Y2)
	c.VMOVDQU(lowTable("b01"), Y1)
	c.LEAQ(iq2GridAddr(t), R13)
	zero(Y0)
	label("loop")
	iq2Prep(t, false, signs, idx)
	sp, sc := iq2Order(t)
	zero(Y8)
	zero(Y9)
	shuf := kShuf()
	for b := 0; b < 8; b++ {
		iq2Points(t, b, idx, Y11)
		sgn := signs.Offset(4 * sp[b])
		if t == iq2S {
			sgn = mem(RSI, 34+4*b)
		}
		signedProduct(Y11, sgn, Y12, Y1, mem(RDI, 4+32*b), Y13)
		c.VPSHUFB(shuf.Offset(32*sc[b]), Y3, Y12)
		c.VPMADDWD(Y12, Y11, Y11)
		c.VPADDD(Y11, []Register{Y8, Y9}[b%2], []Register{Y8, Y9}[b%2])
	}
	iq2Accumulate(Y8, Y9, Y10, Y0)
	nextSuper(t.wb)
	iq2Return()
}

// iq2Order gives, for the AVX2 kernels, sub-block b's dword sp[b] at the
// sign bytes iq2Prep left (in its order), and the word sc[b] of its scale
// in each lane of Y3.
func iq2Order(t *iq2Type) (sp, sc [8]int) {
	switch t {
	case iq2XXS:
		sp = [8]int{1, 3, 5, 7, 0, 2, 4, 6}
		return sp, sp
	case iq2XS:
		return [8]int{0, 1, 4, 5, 2, 3, 6, 7}, [8]int{0, 1, 2, 3, 4, 5, 6, 7}
	}
	return sp, [8]int{0, 1, 2, 3, 4, 5, 6, 7}
}

// iq2Accumulate adds the super-block's integer sums s0+s1 (dwords),
// times d·y.d (computed in f), to the float accumulator acc; it
// overwrites s0 and f.
func iq2Accumulate(s0, s1, f, acc VecPhysical) {
	c.VPADDD(s1, s0, s0)
	c.VCVTDQ2PS(s0, s0)
	halfScale(mem(RSI, 0), f.AsX(), f)
	c.VFMADD231PS(f, s0, acc)
}

// signedProduct leaves in pts (32 unsigned grid bytes) the word sums of
// its byte pairs' products with the activations at x, each negated where
// its bit in the four sign bytes at signs is set (bit k of byte j for
// element 8j+k: Y14 spreads the bytes, Y15 selects the bits); one is the
// bytes 1 (in a register or memory), sgn and xr scratch.
func signedProduct(pts Register, signs Mem, sgn Register, one Op, x Mem, xr Register) {
	c.VPBROADCASTD(signs, sgn)
	c.VPSHUFB(Y14, sgn, sgn)
	c.VPAND(Y15, sgn, sgn)
	c.VPCMPEQB(Y15, sgn, sgn)
	c.VPOR(one, sgn, sgn)
	c.VMOVDQU(x, xr)
	c.VPSIGNB(sgn, xr, xr)
	c.VPMADDUBSW(xr, pts, pts)
}

// iq2Return returns the sum of the eight floats of Y0 times 1/8.
func iq2Return() {
	hsum(Y0, X1)
	const32(0x3E000000, X1)
	c.VMULSS(X1, X0, X0)
	retFloat()
}

// iq2Points loads the four grid points of sub-block b into dst, by
// scalar indexes (R8-R11) and VPINSRQ. A VPGATHERDQ measured no faster
// on Sapphire Rapids (once dst is cleared first: the gather merges into
// it, which chained the sub-blocks and ran at half the speed), and
// gathers are far slower on the AVX2 CPUs whose microcode mitigates
// Intel's Gather Data Sampling, and on Zen 2 and 3.
func iq2Points(t *iq2Type, b int, idx Mem, dst Register) {
	regs := []Register{R8, R9, R10, R11}
	for g, r := range regs {
		if t == iq2XXS {
			c.MOVBLZX(mem(RSI, 2+8*b+g), r.(GPPhysical).As32())
		} else {
			c.MOVWLZX(idx.Offset(8*b+2*g), r.(GPPhysical).As32())
		}
	}
	lo, hi := asX(dst), X12
	c.VMOVQ(memx(R13, 0, R8, 8), lo)
	c.VPINSRQ(U8(1), memx(R13, 0, R9, 8), lo, lo)
	c.VMOVQ(memx(R13, 0, R10, 8), hi)
	c.VPINSRQ(U8(1), memx(R13, 0, R11, 8), hi, hi)
	c.VINSERTI128(U8(1), hi, dst, dst)
}

// iq2Prep reads what the super-block at RSI keeps for all its groups: the
// scales into Y3 (iq2Scales, iq2XXSPrep), the sign bytes with their
// parity to signs (IQ2_XXS, IQ2_XS), the grid indexes to idx (IQ2_XXS
// with natural: bytes; IQ2_XS, IQ2_S: words). natural puts the sign bytes
// and indexes in the order of the groups, which the VNNI kernels read
// eight groups at a time; the AVX2 kernels take them as they come
// (iq2Order). Y2 the parity table; Y4-Y7, Y12, Y13 scratch.
func iq2Prep(t *iq2Type, natural bool, signs, idx Mem) {
	switch t {
	case iq2XXS:
		iq2XXSPrep(natural, signs, idx)
	case iq2XS:
		iq2XSPrep(natural, signs, idx)
	case iq2S:
		iq2SPrep(idx)
	}
}

// iq2Parity sets bit 7 of each byte of v, whose bits 0-6 hold seven
// signs and bit 7 is clear, to their parity (Y2 the table; Y12, Y13
// scratch).
func iq2Parity(v Register) {
	c.VPAND(lowTable("b0f"), v, Y12)
	c.VPSRLW(U8(4), v, Y13)
	c.VPAND(lowTable("b0f"), Y13, Y13)
	c.VPSHUFB(Y12, Y2, Y12)
	c.VPSHUFB(Y13, Y2, Y13)
	c.VPXOR(Y13, Y12, Y12)
	c.VPOR(Y12, v, v)
}

// iq2Scales leaves 2s+1 of the IQ2_XS or IQ2_S scale nibbles at off as
// words in Y3: the low nibbles in the lower lane, the high ones in the
// upper, sub-block b at word b of each.
func iq2Scales(off int) {
	c.VMOVQ(mem(RSI, off), X4)
	c.VPSRLW(U8(4), X4, X5)
	c.VPUNPCKLQDQ(X5, X4, X4)
	c.VPAND(lowTable("b0f"), X4, X4)
	c.VPMOVZXBW(X4, Y3)
	c.VPSLLW(U8(1), Y3, Y3)
	c.VPOR(lowTable("w01"), Y3, Y3)
}

// iq2XXSPrep reads an IQ2_XXS super-block's eight (indexes, uint32)
// qwords, four to a load: the second load's shifted down and blended into
// the first's gaps leaves the uint32s in Y6 as dwords of sub-blocks 4, 0,
// 5, 1 | 6, 2, 7, 3. Their top nibbles, packed to words and copied to
// both lanes, are the scales in Y3 (sub-block b at word sp[b] of
// iq2Order); their 7-bit sign fields, spread to bytes (at bits 0, 7 | 14,
// 21 split into 16-bit halves, then each half's upper field moved up a
// bit) and completed by the parity, go to signs. With natural, the sign
// dwords are put in order, and the index dwords too, to idx.
func iq2XXSPrep(natural bool, signs, idx Mem) {
	c.VMOVDQU(mem(RSI, 2), Y4)
	c.VMOVDQU(mem(RSI, 34), Y5)
	if natural {
		// Indexes of 0, 4, 1, 5 | 2, 6, 3, 7, then in order.
		c.VPSLLQ(U8(32), Y5, Y7)
		c.VPBLENDD(U8(0xAA), Y7, Y4, Y7)
		c.VPSHUFD(U8(0xD8), Y7, Y7)
		c.VPERMQ(U8(0xD8), Y7, Y7)
		c.VMOVDQU(Y7, idx)
	}
	c.VPSRLQ(U8(32), Y5, Y5)
	c.VPBLENDD(U8(0xAA), Y4, Y5, Y6)
	c.VPSRLD(U8(28), Y6, Y3)
	c.VPACKUSDW(Y3, Y3, Y3)
	c.VPERMQ(U8(0x88), Y3, Y3)
	c.VPSLLW(U8(1), Y3, Y3)
	c.VPOR(lowTable("w01"), Y3, Y3)
	c.VPSLLD(U8(2), Y6, Y7)
	c.VPAND(iq2Table("iq2Hi14"), Y7, Y7)
	c.VPAND(iq2Table("iq2Lo14"), Y6, Y6)
	c.VPOR(Y7, Y6, Y6)
	c.VPADDD(Y6, Y6, Y7)
	c.VPAND(iq2Table("iq2Hi7"), Y7, Y7)
	c.VPAND(iq2Table("iq2Lo7"), Y6, Y6)
	c.VPOR(Y7, Y6, Y6)
	iq2Parity(Y6)
	if natural {
		// 4, 0, 5, 1 | 6, 2, 7, 3 to 0, 1, 4, 5 | 2, 3, 6, 7, then in
		// order.
		c.VPSHUFD(U8(0x8D), Y6, Y6)
		c.VPERMQ(U8(0xD8), Y6, Y6)
	}
	c.VMOVDQU(Y6, signs)
}

// iq2XSPrep reads an IQ2_XS super-block's 32 uint16s: their low nine
// bits, the grid indexes, to idx as words; their top seven, packed to
// bytes (sub-blocks 0, 1, 4, 5 | 2, 3, 6, 7, or with natural in order)
// with the parity, to signs; the scales to Y3.
func iq2XSPrep(natural bool, signs, idx Mem) {
	c.VMOVDQU(mem(RSI, 2), Y4)
	c.VMOVDQU(mem(RSI, 34), Y5)
	c.VPSRLW(U8(9), Y4, Y6)
	c.VPSRLW(U8(9), Y5, Y7)
	c.VPACKUSWB(Y7, Y6, Y6)
	iq2Parity(Y6)
	if natural {
		c.VPERMQ(U8(0xD8), Y6, Y6)
	}
	c.VMOVDQU(Y6, signs)
	c.VPAND(iq2Table("iq2W1FF"), Y4, Y4)
	c.VPAND(iq2Table("iq2W1FF"), Y5, Y5)
	c.VMOVDQU(Y4, idx)
	c.VMOVDQU(Y5, idx.Offset(32))
	iq2Scales(66)
}

// iq2SPrep builds an IQ2_S super-block's 32 grid indexes as words at
// idx: the index bytes, widened, ORed with their two high bits (qh byte b
// copied to the words of its four groups, multiplied to bring bits 2g,
// 2g+1 to bits 8, 9); the scales to Y3. The signs are whole bytes, read
// in place.
func iq2SPrep(idx Mem) {
	c.VPMOVZXBW(mem(RSI, 2), Y4)
	c.VPMOVZXBW(mem(RSI, 18), Y5)
	c.VPBROADCASTQ(mem(RSI, 66), Y6)
	c.VPSHUFB(iq2Table("iq2QhShuf").Offset(32), Y6, Y7)
	c.VPSHUFB(iq2Table("iq2QhShuf"), Y6, Y6)
	c.VPMULLW(iq2Table("iq2QhMul"), Y6, Y6)
	c.VPMULLW(iq2Table("iq2QhMul"), Y7, Y7)
	c.VPAND(iq2Table("iq2W300"), Y6, Y6)
	c.VPAND(iq2Table("iq2W300"), Y7, Y7)
	c.VPOR(Y6, Y4, Y4)
	c.VPOR(Y7, Y5, Y5)
	c.VMOVDQU(Y4, idx)
	c.VMOVDQU(Y5, idx.Offset(32))
	iq2Scales(74)
}

// ---------------------------------------------------------------------
// AVX-512 VNNI: 64 elements (two sub-blocks, chunk j) a Z register. The
// eight grid points in one VPGATHERDQ, the sign bytes as a mask K1 under
// which VPSUBB negates the activations, VPMADDUBSW, then VPDPWSSD with
// the scales spread by VPERMW. The preparation is the AVX2 kernels' with
// the sign bytes and indexes in order (iq2Prep). Z0 accumulator, Y2-Y7,
// Y12, Y13 as for iq2Prep, Z16-Z19 the VPERMW indexes of the chunks, Z20
// zero, Z21-Z26 scratch (Z24, Z25 the integer sums); K2 the gather's
// mask, from K3, which nothing writes.

func iq2VNNI(t *iq2Type) {
	stack := c.AllocLocal(96)
	signs, idx := stack, stack.Offset(32)
	loadArgs("w x nb", RSI, RDI, RCX)
	c.VMOVDQU(iq2Table("iq2Parity"), Y2)
	c.LEAQ(iq2GridAddr(t), R13)
	perm := iq2ScaleIdx(t)
	for j := 0; j < 4; j++ {
		c.VMOVDQU64(perm.Offset(64*j), zr(16+j))
	}
	zero(Z20)
	zero(Z0)
	label("loop")
	iq2Prep(t, true, signs, idx)
	for j := 0; j < 4; j++ {
		switch t {
		case iq2XXS:
			c.VPMOVZXBD(idx.Offset(8*j), Y21)
		default:
			c.VPMOVZXWD(idx.Offset(16*j), Y21)
		}
		c.KXNORW(K3, K3, K2)
		zero(Z22)
		c.VPGATHERDQ(memx(R13, 0, Y21, 8), K2, Z22)
		if t == iq2S {
			c.KMOVQ(mem(RSI, 34+8*j), K1)
		} else {
			c.KMOVQ(signs.Offset(8*j), K1)
		}
		c.VMOVDQU64(mem(RDI, 4+64*j), Z23)
		c.VPSUBB(Z23, Z20, K1, Z23)
		c.VPMADDUBSW(Z23, Z22, Z22)
		c.VPERMW(Z3, zr(16+j), Z26)
		acc := []Register{Z24, Z25}[j%2]
		if j < 2 {
			c.VPMADDWD(Z26, Z22, acc)
		} else {
			VPDPWSSD(Z26, Z22, acc)
		}
	}
	iq2Accumulate(Z24, Z25, Z21, Z0)
	nextSuper(t.wb)
	fold512(Z0, Y1)
	iq2Return()
}

// iq2ScaleIdx is the VPERMW index table of the VNNI kernels, 64 bytes a
// chunk j: each 128-bit lane (groups 0-1 or 2-3 of sub-block 2j or 2j+1)
// repeats the word of Y3 that holds its scale.
func iq2ScaleIdx(t *iq2Type) Mem {
	_, sc := iq2Order(t)
	h := make([]uint16, 128)
	for i := range h {
		j, lane := i/32, i%32/8
		b := 2*j + lane/2
		w := sc[b]
		if t != iq2XXS && lane%2 == 1 {
			w += 8 // the high nibble's scale, in Y3's upper lane
		}
		h[i] = uint16(w)
	}
	return wordsTable("iq2ScaleIdx", h)
}
