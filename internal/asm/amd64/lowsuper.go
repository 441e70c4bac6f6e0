package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The low-bit super-block types against Q8_K (292 bytes: float32 d at 0,
// qs[256] at 4, int16 bsums[16] at 260), 256 elements a block:
//
//	Q2_K   (84 B)  scales[16] at 0 (scale code low nibble, min code high),
//	               2-bit qs[64] at 16, fp16 d at 80, dmin at 82
//	Q3_K   (110 B) hmask[32] at 0, 2-bit qs[64] at 32, 6-bit signed
//	               scales packed in 12 bytes at 96, fp16 d at 108
//	IQ4_XS (136 B) fp16 d at 0, scales_h at 2, scales_l[4] at 4, qs[128]
//	               at 8 (IQ4_NL codes, 16 bytes per 32 elements)
//	IQ3_S  (110 B) fp16 d at 0, qs[64] at 2, qh[8] at 66, signs[32] at 74,
//	               scales[4] at 106; elements from a 512-entry grid
//
// Element 128h + 32j + l of Q2_K and Q3_K has its two low bits at bits
// 2j..2j+1 of qs byte 32h+l, and Q3_K its third bit at bit 4h+j of
// hmask[l]; groups of 16 elements share a scale. IQ4_XS and IQ3_S have
// one scale per 32 elements.
//
// Every kernel sums each super-block exactly in int32 lanes (the quants,
// non-negative, through VPMADDUBSW with the activations and VPMADDWD or
// VPDPWSSD with the scales), then adds it to float32 lanes times d·y.d —
// the Go twins' integer sums, added in another order of float32
// operations. What the weights' offsets subtract comes from the Q8_K
// block sums: Q2_K's mins (Σ m·bsums, times dmin·y.d), Q3_K's −4
// (4·Σ sc·bsums), IQ4_XS's +128 bias of the VNNI levels (128·Σ ls·bsums).
// IQ3_S's signs, and IQ4_XS's with AVX2, go to the activations (VPSIGNB,
// or a masked VPSUBB), which is exact because Q8_K never holds −128.
//
// The VBMI width (GFNI) unpacks bit fields with one VGF2P8AFFINEQB each:
// Q2_K and Q3_K's 2-bit fields, IQ4_XS's nibbles; about 5% faster than
// shifts and masks on Zen 4 for the dot products and 4×1 tiles (Q2_K
// and Q3_K keep the VNNI 4×4 tile, as fast).
type lowType struct {
	name string
	wb   int // bytes per super-block
	dOff int // offset of the fp16 d (Q2_K: d, dmin)
}

var (
	lowQ2_K  = &lowType{name: "Q2_K", wb: 84, dOff: 80}
	lowQ3_K  = &lowType{name: "Q3_K", wb: 110, dOff: 108}
	lowIQ4XS = &lowType{name: "IQ4_XS", wb: 136, dOff: 0}
	lowIQ3S  = &lowType{name: "IQ3_S", wb: 110, dOff: 0}
)

// withMin: the type has a second float factor, dmin (Q2_K).
func (t *lowType) withMin() bool { return t == lowQ2_K }

// stackWords: the AVX2 kernel parks the sub-block scales on the stack as
// words, to broadcast them (IQ4_XS, IQ3_S).
func (t *lowType) stackWords() bool { return t == lowIQ4XS || t == lowIQ3S }

// dotLow emits dot<T><W>Asm(w, x *byte, nb int) float32.
func dotLow(t *lowType, w width) {
	text("dot"+t.name+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	if w == avx2 {
		lowAVX2(t, false)
	} else {
		lowVNNI(t, w, true, 1)
	}
}

// tileLow emits the tile kernel of a low-bit type, 4×1 for AVX2, 4×cols
// for VNNI.
func tileLow(t *lowType, w width, cols int) {
	text(tileName(t.name, w, cols), NOSPLIT, tileSig)
	if w == avx2 {
		lowAVX2(t, true)
	} else {
		lowVNNI(t, w, false, cols)
	}
}

// iq3sGrid is package quant's [512]uint32 table, which the IQ3_S kernels
// gather from in place.
func iq3sGrid() Mem { return NewDataAddr(Symbol{Name: "·iq3sGrid"}, 0) }

// The constant tables of lowTable that repeat a byte or a dword.
var (
	lowBytes  = map[string]byte{"b01": 0x01, "b03": 0x03, "b04": 0x04, "b0f": 0x0F, "b20": 0x20}
	lowDwords = map[string]uint32{"d03": 3, "d0f": 15, "d20": 32, "d100": 0x100}
	// lowCounts are eight dword shift counts: the table low<Name>.
	lowCounts = map[string][]uint32{
		// IQ4_XS's scales_l nibbles.
		"cnt4s": {0, 4, 8, 12, 16, 20, 24, 28},
		"cnt2s": {0, 2, 4, 6, 8, 10, 12, 14},
		// Take bit k of a byte to bit 8.
		"qhCnt": {8, 7, 6, 5, 4, 3, 2, 1},
	}
)

// lowTables are the per-type constants, named, as 64-byte tables (a Z
// register's worth; the AVX2 kernels read their first 32 or 16 bytes).
func lowTable(name string) Mem {
	rep := func(w ...uint64) []uint64 {
		var out []uint64
		for len(out) < 8 {
			out = append(out, w...)
		}
		return out
	}
	// One byte or dword repeated: the table low<NAME>.
	if b, ok := lowBytes[name]; ok {
		return table("low"+strings.ToUpper(name), rep(uint64(b)*0x0101010101010101)...)
	}
	if d, ok := lowDwords[name]; ok {
		return table("low"+strings.ToUpper(name), rep(uint64(d)|uint64(d)<<32)...)
	}
	if d, ok := lowCounts[name]; ok {
		return dwordsTable("low"+strings.ToUpper(name[:1])+name[1:], d)
	}
	switch name {
	case "w01":
		return table("lowW01", rep(0x0001000100010001)...)
	case "cnt02":
		// qword shift counts: 0 in the lower 256 bits, 2 in the upper.
		return table("lowCnt02", 0, 0, 0, 0, 2, 2, 2, 2)
	case "cnt46":
		return table("lowCnt46", 4, 4, 4, 4, 6, 6, 6, 6)
	case "cnt0246":
		// dword shift counts of Q3_K's top scale bits.
		return table("lowCnt0246", 0|2<<32, 4|6<<32)
	case "bitsel":
		return table("lowBitsel", rep(0x8040201008040201)...)
	case "lut":
		return iq4nlBiased64()
	case "gf2a", "gf2b":
		// GF(2) bit matrices taking bits s, s+1 of a byte to bits 0, 1:
		// s = 4p in the lower 256 bits, 4p+2 in the upper (p = 0 for
		// gf2a, 1 for gf2b).
		m := func(s uint) uint64 { return 1<<s<<56 | 1<<(s+1)<<48 }
		p := uint(0)
		if name == "gf2b" {
			p = 1
		}
		lo, hi := m(4*p), m(4*p+2)
		return table("lowGF2"+name[3:], lo, lo, lo, lo, hi, hi, hi, hi)
	case "gfnib":
		// GF(2) bit matrices: identity on bits 0-3 in 128-bit lanes 0
		// and 2, bits 4-7 to 0-3 in lanes 1 and 3.
		const lo, hi = 0x0102040800000000, 0x1020408000000000
		return table("lowGFNib", lo, lo, hi, hi, lo, lo, hi, hi)
	case "idxw":
		// VPERMW indexes: word i is the low word of dword i/2.
		h := make([]uint16, 16)
		for i := range h {
			h[i] = uint16(i &^ 1)
		}
		return wordsTable("lowIdxW", h)
	}
	panic("lowTable: " + name)
}

// lowIdx is the index table that spreads chunk k's scales over its 64
// elements: Q2_K and Q3_K VPERMW from 16 group words (128-bit lane l gets
// group 4k+l), IQ4_XS VPERMD from 8 sub-block dwords and IQ3_S VPERMW
// from 8 sub-block words (256-bit half i gets sub-block 2k+i).
func lowIdx(t *lowType) Mem {
	switch t {
	case lowIQ4XS:
		return dwordsTable("lowIdxSub32", spreadIdx[uint32](64, 16, 2, 8))
	case lowIQ3S:
		return wordsTable("lowIdxSub16", spreadIdx[uint16](128, 32, 2, 16))
	}
	return wordsTable("lowIdxGroup", spreadIdx[uint16](128, 32, 4, 8))
}

// spreadIdx is n indexes in chunks of per, entry j of chunk k being
// step·k + j/run.
func spreadIdx[T uint16 | uint32](n, per, step, run int) []T {
	x := make([]T, n)
	for i := range x {
		k, j := i/per, i%per
		x[i] = T(step*k + j/run)
	}
	return x
}

// q3HBits: VPTESTMB masks of Q3_K chunk k's high bits, bit 4h+2p in the
// lower 256 bits and 4h+2p+1 in the upper, k = 2h+p.
func q3HBits() Mem {
	b := make([]byte, 256)
	for i := range b {
		k, half := i/64, (i%64)/32
		h, p := k/2, k%2
		b[i] = 1 << (4*h + 2*p + half)
	}
	return bytesTable("lowQ3HBits", b)
}

// ---------------------------------------------------------------------
// AVX2: one super-block of one row at a time, 32 elements a register.
// The dot product is the 4×1 tile with one row. Y0-Y3 accumulators (Y0
// for the dot product), Y4-Y13 scratch, Y14/Y15 constants; the IQ3_S
// grid's address in R13; a 32-byte stack slot for the scales as words.

func lowAVX2(t *lowType, tile bool) {
	var stack Mem
	var end Mem
	size := 0
	if t.stackWords() {
		size = 32
	}
	if tile {
		size += 8
	}
	if size > 0 {
		stack = c.AllocLocal(size)
		end = stack.Offset(size - 8)
	}
	rows := []Register{RSI}
	if tile {
		rows = tileRowRegs
		tileRows()
		rowEnd(t.wb, end)
		prefetchDist(R10, 1)
		tileCols(1)
	} else {
		loadArgs("w x nb", RSI, RDI, RCX)
	}
	switch t {
	case lowQ2_K:
		c.VMOVDQU(lowTable("b0f"), Y15)
		c.VMOVDQU(lowTable("b03"), Y14)
	case lowQ3_K:
		c.VMOVDQU(lowTable("b03"), Y15)
		c.VMOVDQU(lowTable("b04"), Y14)
	case lowIQ4XS:
		c.VMOVDQU(lowTable("b0f"), Y15)
		c.VBROADCASTI128(iq4nlTable(false), Y14)
	case lowIQ3S:
		c.VMOVDQU(lowTable("bitsel"), Y15)
		c.VMOVDQU(bytesTable("spread4", spreadBytes()), Y14)
		c.LEAQ(iq3sGrid(), R13)
	}
	zeroAcc(avx2, len(rows))
	label("loop")
	if tile {
		prefetchRows(R10, t.wb, 1)
	}
	for r, row := range rows {
		lowBodyAVX2(t, row, RDI, yr(r), stack)
	}
	if tile {
		nextSuperBlock(t.wb, 1, end)
		reduce4Y(Y0, Y1, Y2, Y3, X1, false)
		storeTile(X0)
		retVoid()
		return
	}
	nextSuper(t.wb)
	retSum()
}

// lowBodyAVX2 adds super-block row·x times its factors to acc.
func lowBodyAVX2(t *lowType, row, x, acc Register, stack Mem) {
	isum := [2]Register{Y8, Y9}
	switch t {
	case lowQ2_K, lowQ3_K:
		k16AVX2(t, row, x, isum)
	case lowIQ4XS:
		iq4xsAVX2(row, x, isum, stack)
	case lowIQ3S:
		iq3sAVX2(row, x, isum, stack)
	}
	c.VPADDD(Y9, Y8, Y8)
	c.VCVTDQ2PS(Y8, Y8)
	if t.withMin() {
		// (d, dmin)·y.d; the mins' sums are in Y5.
		c.VMOVD(mem(row, t.dOff), X10)
		c.VCVTPH2PS(X10, X10)
		c.VBROADCASTSS(mem(x, 0), X11)
		c.VMULPS(X11, X10, X10)
		c.VBROADCASTSS(X10, Y11)
		c.VMOVSHDUP(X10, X10)
		c.VBROADCASTSS(X10, Y10)
		c.VCVTDQ2PS(Y5, Y5)
		c.VFMADD231PS(Y11, Y8, acc)
		c.VFNMADD231PS(Y10, Y5, acc)
		return
	}
	c.MOVWLZX(mem(row, t.dOff), EAX)
	c.VMOVD(EAX, X10)
	c.VCVTPH2PS(X10, X10)
	c.VMULSS(mem(x, 0), X10, X10)
	c.VBROADCASTSS(X10, Y10)
	c.VFMADD231PS(Y10, Y8, acc)
}

// k16AVX2 sums a Q2_K or Q3_K super-block into isum: 32 elements (h, j)
// a register, the low two bits (qs >> 2j) & 3, for Q3_K with bit 4h+j of
// hmask moved to bit 2, through VPMADDUBSW with the activations; the
// group scales, 16 words, spread by VPSHUFB (q6Shuf: word 2j of the
// half's eight in the low 128 bits, 2j+1 in the high). Q2_K leaves the
// mins' sums in Y5; Q3_K starts isum at −4·Σ sc·bsums. Y14/Y15: Q2_K
// bytes 0x03/0x0F, Q3_K 0x04/0x03.
func k16AVX2(t *lowType, row, x Register, isum [2]Register) {
	qs, b03 := 16, Y14
	if t == lowQ2_K {
		// Scales (low nibbles) and mins (high) as words.
		c.VMOVDQU(mem(row, 0), X4)
		c.VPSRLW(U8(4), X4, X5)
		c.VPAND(X15, X5, X5)
		c.VPMOVZXBW(X5, Y5)
		c.VPMADDWD(mem(x, 260), Y5, Y5)
		c.VPAND(X15, X4, X4)
		c.VPMOVZXBW(X4, Y6)
		zero(isum[0])
		zero(isum[1])
	} else {
		qs, b03 = 32, Y15
		q3ScalesX(row, X4, X5, X15, lowTable("b0f"), lowTable("cnt0246"), lowTable("b20"))
		c.VPMOVSXBW(X4, Y6)
		c.VPMADDWD(mem(x, 260), Y6, Y5)
		c.VPSLLD(U8(2), Y5, Y5)
		zero(isum[1])
		c.VPSUBD(Y5, isum[1], isum[0])
		c.VMOVDQU(mem(row, 0), Y13)
	}
	c.VPERMQ(U8(0x44), Y6, Y7)
	c.VPERMQ(U8(0xEE), Y6, Y6)
	shuf := q6Shuf()
	for h := 0; h < 2; h++ {
		sc := []Register{Y7, Y6}[h]
		c.VMOVDQU(mem(row, qs+32*h), Y10)
		for j := 0; j < 4; j++ {
			bitPair(Y10, j, b03, Y11)
			if t == lowQ3_K {
				// Bit b = 4h+j of each hmask byte to bit 2 (a word shift,
				// whose spill into the other byte is masked off).
				switch s := 4*h + j - 2; {
				case s > 0:
					c.VPSRLW(U8(s), Y13, Y12)
					c.VPAND(Y14, Y12, Y12)
				case s < 0:
					c.VPSLLW(U8(-s), Y13, Y12)
					c.VPAND(Y14, Y12, Y12)
				default:
					c.VPAND(Y14, Y13, Y12)
				}
				c.VPOR(Y12, Y11, Y11)
			}
			c.VPMADDUBSW(mem(x, 4+128*h+32*j), Y11, Y11)
			c.VPSHUFB(shuf.Offset(32*j), sc, Y12)
			c.VPMADDWD(Y12, Y11, Y11)
			c.VPADDD(Y11, isum[j%2], isum[j%2])
		}
	}
}

// q3ScalesX unpacks the sixteen 6-bit scale codes of the Q3_K super-block
// at row, less 32, into the signed bytes of X register dst (t scratch):
// code g has its low four bits in nibble g/8 of byte g%8 and its top two
// at bits 2(g/4) of byte 8+g%4. b03 (bytes 3), b0f, cnt (dword shifts 0,
// 2, 4, 6) and b20 (bytes 32) are tables or registers.
func q3ScalesX(row, dst, t Register, b03, b0f, cnt, b20 Op) {
	if r, ok := b03.(Register); ok {
		b03 = asX(r)
	}
	c.VMOVQ(mem(row, 96), dst)
	c.VPSRLW(U8(4), dst, t)
	c.VPUNPCKLQDQ(t, dst, dst)
	and, _ := andOr(dst, t)
	and(b0f, dst, dst)
	topBits(row, 104, dst, t, cnt, b03, b20, func(a, b, d Op) { c.VPSLLW(a, b, d) }, func(a, b, d Op) { c.VPSUBB(a, b, d) })
}

// andOr is VPAND and VPOR, or their EVEX forms when a register is above
// 15.
func andOr(regs ...Register) (and, or func(a, b, d Op)) {
	and = func(a, b, d Op) { c.VPAND(a, b, d) }
	or = func(a, b, d Op) { c.VPOR(a, b, d) }
	for _, r := range regs {
		if idx(r) >= 16 {
			and = func(a, b, d Op) { c.VPANDD(a, b, d) }
			or = func(a, b, d Op) { c.VPORD(a, b, d) }
		}
	}
	return and, or
}

// topBits completes 6-bit scales whose low four bits are in dst: the
// dword at row+off, broadcast into t and shifted by cnt, masked by m3
// (3s), gives the top two bits, moved to bits 4-5 (shl) and ORed in;
// then sub takes off 32 (k32).
func topBits(row Register, off int, dst, t Register, cnt, m3, k32 Op, shl, sub func(a, b, d Op)) {
	and, or := andOr(dst, t)
	c.VPBROADCASTD(mem(row, off), t)
	c.VPSRLVD(cnt, t, t)
	and(m3, t, t)
	shl(U8(4), t, t)
	or(t, dst, dst)
	sub(k32, dst, dst)
}

// iq4xsScales leaves ls_b − 32 for b < 8 as dwords in dst (t scratch):
// the low nibbles from scales_l, the top two bits from scales_h.
func iq4xsScales(row, dst, t Register) {
	and, _ := andOr(dst, t)
	c.VPBROADCASTD(mem(row, 4), dst)
	c.VPSRLVD(lowTable("cnt4s"), dst, dst)
	and(lowTable("d0f"), dst, dst)
	topBits(row, 2, dst, t, lowTable("cnt2s"), lowTable("d03"), lowTable("d20"),
		func(a, b, d Op) { c.VPSLLD(a, b, d) }, func(a, b, d Op) { c.VPSUBD(a, b, d) })
}

// iq4xsAVX2 sums an IQ4_XS super-block into isum, one sub-block a
// register: the codes' signed levels (VPSHUFB, Y14) times the activations
// by the sign trick, then VPMADDWD with the sub-block's scale, broadcast
// from the words parked at stack. Y15 bytes 0x0F.
func iq4xsAVX2(row, x Register, isum [2]Register, stack Mem) {
	// The scales packed to words (b < 4 at word b, b >= 4 at word b+4).
	iq4xsScales(row, Y4, Y5)
	c.VPACKSSDW(Y4, Y4, Y4)
	c.VMOVDQU(Y4, stack)
	zero(isum[0])
	zero(isum[1])
	for b := 0; b < 8; b++ {
		c.VMOVDQU(mem(row, 8+16*b), X10)
		c.VPSRLW(U8(4), X10, X11)
		c.VINSERTI128(U8(1), X11, Y10, Y10)
		c.VPAND(Y15, Y10, Y10)
		c.VPSHUFB(Y10, Y14, Y10)
		c.VMOVDQU(mem(x, 4+32*b), Y11)
		signedMul(Y10, Y11, Y11, Y12, Y10)
		w := b
		if b >= 4 {
			w = b + 4
		}
		c.VPBROADCASTW(stack.Offset(2*w), Y12)
		c.VPMADDWD(Y12, Y10, Y10)
		c.VPADDD(Y10, isum[b%2], isum[b%2])
	}
}

// iq3sScales leaves 1 + 2·scale_b of the IQ3_S super-block at row as
// words in X register dst (t scratch).
func iq3sScales(row, dst, t Register) {
	and, or := andOr(dst, t)
	c.VMOVD(mem(row, 106), dst)
	c.VPSRLW(U8(4), dst, t)
	c.VPUNPCKLBW(t, dst, dst)
	and(lowTable("b0f"), dst, dst)
	c.VPMOVZXBW(dst, dst)
	c.VPSLLW(U8(1), dst, dst)
	or(lowTable("w01"), dst, dst)
}

// iq3sAVX2 sums an IQ3_S super-block into isum, one sub-block a register:
// the eight 9-bit grid indexes (qs bytes, the ninth bit from qh moved to
// bit 8), VPGATHERDD from the grid (R13), the signs spread to byte masks
// (Y14 spread4, Y15 the bit of each byte) and applied to the activations
// with VPSIGNB; then VPMADDWD with the sub-block's 1+2·scale, broadcast
// from the words parked at stack.
func iq3sAVX2(row, x Register, isum [2]Register, stack Mem) {
	iq3sScales(row, X4, X5)
	c.VMOVDQU(X4, stack)
	zero(isum[0])
	zero(isum[1])
	for b := 0; b < 8; b++ {
		c.VPMOVZXBD(mem(row, 2+8*b), Y10)
		c.VPBROADCASTD(mem(row, 66+b), Y11)
		c.VPSLLVD(lowTable("qhCnt"), Y11, Y11)
		c.VPAND(lowTable("d100"), Y11, Y11)
		c.VPOR(Y11, Y10, Y10)
		c.VPCMPEQD(Y12, Y12, Y12)
		c.VPGATHERDD(Y12, memx(R13, 0, Y10, 4), Y11)
		signedProduct(Y11, mem(row, 74+4*b), Y12, lowTable("b01"), mem(x, 4+32*b), Y13)
		c.VPBROADCASTW(stack.Offset(2*b), Y12)
		c.VPMADDWD(Y12, Y11, Y11)
		c.VPADDD(Y11, isum[b%2], isum[b%2])
	}
}

// ---------------------------------------------------------------------
// AVX-512 VNNI: the dot product (one row, one column) and the 4×1 and 4×4
// tiles share one structure. Per super-block each row is prepared once —
// its quants, non-negative bytes, in Z16-Z19 (chunk k: elements 64k..
// 64k+63), its scales spread over those in Z20-Z23, the words that meet
// the block sums in Y24, IQ3_S's sign masks in K4-K7 — and then met by
// every column (lowRC). Z0-Z15 accumulators (row r, column c in
// Z(cols·r+c)), Z25-Z27 scratch, Z28-Z31 per-type constants; with one
// column, Z4-Z7 the scale indexes and (4×1) Z8-Z11, Y12 the column's
// quants and block sums. The factors d·y.d (and dmin·y.d) of every row
// and column go to the stack. K1, K2 scratch, K3 the low eight lanes.

// lowKonst holds the per-type constants' operands: registers when loaded
// into Z28-Z31, tables otherwise.
type lowKonst map[string]Op

func (k lowKonst) get(name string) Op {
	if op, ok := k[name]; ok {
		return op
	}
	return lowTable(name)
}

// lowHot lists the constants a type keeps in Z28-Z31.
func lowHot(t *lowType, w width) []string {
	switch {
	case t == lowIQ4XS && w == vbmi:
		return []string{"lut", "gfnib"}
	case t == lowQ2_K && w == vbmi:
		return []string{"gf2a", "gf2b"}
	case t == lowQ3_K && w == vbmi:
		return []string{"gf2a", "gf2b", "b04"}
	case t == lowQ2_K:
		return []string{"cnt02", "cnt46", "b03"}
	case t == lowQ3_K:
		return []string{"cnt02", "cnt46", "b03", "b04"}
	case t == lowIQ4XS:
		return []string{"lut", "b0f"}
	}
	return []string{"d100", "zero"}
}

func lowVNNI(t *lowType, w width, dot bool, cols int) {
	facBytes := 16 // per column: d·y.d of four rows
	if t.withMin() {
		facBytes = 32 // (d, dmin)·y.d of four rows
	}
	rows := tileRowRegs
	if dot {
		rows = rows[:1]
	}
	stack := c.AllocLocal(cols*facBytes + 8)
	end := stack.Offset(cols * facBytes)
	dist := R10
	if cols > 1 {
		dist = R12
	}
	if dot {
		loadArgs("w x nb", RSI, RDI, RCX)
	} else {
		tileRows()
		rowEnd(t.wb, end)
		prefetchDist(dist, cols)
		tileCols(cols)
	}
	if t.withMin() {
		kmask(0xFF, K3)
	}
	if t == lowIQ3S {
		c.LEAQ(iq3sGrid(), R13)
	}
	k := lowKonst{}
	for i, name := range lowHot(t, w) {
		z := zr(28 + i)
		if name == "zero" {
			zero(z)
		} else {
			c.VMOVDQU64(lowTable(name), z)
		}
		k[name] = z
	}
	var idx [4]Op
	tab := lowIdx(t)
	for j := range idx {
		idx[j] = tab.Offset(64 * j)
		if cols == 1 {
			c.VMOVDQU64(idx[j], zr(4+j))
			idx[j] = zr(4 + j)
		}
	}
	zeroAcc(vnni, len(rows)*cols)

	label("loop")
	if !dot {
		prefetchRows(dist, t.wb, cols)
	}
	// The factors: fp16 d (and dmin) of the rows times each column's y.d.
	tileFactors(rows, t.dOff, t.withMin(), cols, stack, facBytes)
	var q [4]Op
	var bs Op
	colQ := func(col Register) {
		q = [4]Op{mem(col, 4), mem(col, 68), mem(col, 132), mem(col, 196)}
		bs = mem(col, 260)
	}
	colQ(RDI)
	if cols == 1 && !dot {
		for j := 0; j < 4; j++ {
			c.VMOVDQU64(q[j], zr(8+j))
			q[j] = zr(8 + j)
		}
		c.VMOVDQU64(bs, Y12)
		bs = Y12
	}
	for r, row := range rows {
		lowPrep(t, w, row, idx, k)
		for ci := 0; ci < cols; ci++ {
			if cols > 1 {
				colQ(tileColRegs[ci])
			}
			step := 4
			if t.withMin() {
				step = 8
			}
			fac := stack.Offset(facBytes*ci + step*r)
			lowRC(t, q, bs, fac, k, zr(cols*r+ci))
		}
	}
	if dot {
		nextSuper(t.wb)
		fold512(Z0, Y1)
		retSum()
		return
	}
	nextSuperBlock(t.wb, cols, end)
	storeTilesZ(cols)
}

// spread loads chunk j's scale index into dst (unless it is a register)
// and permutes src's words (or dwords) by it into dst.
func spread(perm func(...Op), src Register, idx Op, dst Register) {
	if m, ok := idx.(Mem); ok {
		c.VMOVDQU64(m, dst)
		perm(src, dst, dst)
		return
	}
	perm(src, idx, dst)
}

// lowPrep prepares a row's super-block: Z16-Z19, Z20-Z23, Y24, K4-K7.
func lowPrep(t *lowType, w width, row Register, idx [4]Op, k lowKonst) {
	switch t {
	case lowQ2_K, lowQ3_K:
		qs := 16
		if t == lowQ2_K {
			c.VPMOVZXBW(mem(row, 0), Y25)
			c.VPSRLW(U8(4), Y25, Y24)
			c.VPANDD(lowTable("b0f"), Y25, Y25)
		} else {
			qs = 32
			q3ScalesX(row, X25, X26, k.get("b03"), lowTable("b0f"), lowTable("cnt0246"), lowTable("b20"))
			c.VPMOVSXBW(X25, Y24)
			c.VBROADCASTI64X4(mem(row, 0), Z27)
		}
		scw := Z25
		if t == lowQ3_K {
			scw = Z24
		}
		for j := 0; j < 4; j++ {
			spread(c.VPERMW, scw, idx[j], zr(20+j))
		}
		for h := 0; h < 2; h++ {
			c.VBROADCASTI64X4(mem(row, qs+32*h), Z26)
			for p := 0; p < 2; p++ {
				j := 2*h + p
				u := zr(16 + j)
				if w == vbmi {
					// Bits 4p, 4p+1 (lower 256 bits) or 4p+2, 4p+3
					// (upper) of each byte to bits 0, 1: one affine map.
					VGF2P8AFFINEQB(U8(0), k.get([]string{"gf2a", "gf2b"}[p]), Z26, u)
				} else {
					c.VPSRLVQ(k.get([]string{"cnt02", "cnt46"}[p]), Z26, u)
					c.VPANDD(k.get("b03"), u, u)
				}
				if t == lowQ3_K {
					c.VPTESTMB(q3HBits().Offset(64*j), Z27, K1)
					c.VPADDB(k.get("b04"), u, K1, u)
				}
			}
		}
	case lowIQ4XS:
		iq4xsScales(row, Y25, Y26)
		for j := 0; j < 4; j++ {
			spread(c.VPERMD, Z25, idx[j], zr(20+j))
		}
		c.VMOVDQU64(lowTable("idxw").Offset(0), Y24)
		c.VPERMW(Y25, Y24, Y24)
		// The codes of sub-blocks 2j and 2j+1: low nibbles in 128-bit
		// lanes 0 and 2, high ones in 1 and 3, to biased levels.
		for j := 0; j < 4; j++ {
			u := zr(16 + j)
			c.VBROADCASTI64X4(mem(row, 8+32*j), Z26)
			c.VSHUFI64X2(U8(0x50), Z26, Z26, u)
			if w == vbmi {
				// One GF(2) affine map keeps the low nibbles in lanes 0
				// and 2 and moves the high ones down in lanes 1 and 3.
				VGF2P8AFFINEQB(U8(0), k.get("gfnib"), u, u)
			} else {
				c.VPSRLVQ(shift0044(), u, u)
				c.VPANDD(k.get("b0f"), u, u)
			}
			c.VPSHUFB(u, k.get("lut"), u)
		}
	case lowIQ3S:
		iq3sScales(row, X25, X26)
		for j := 0; j < 4; j++ {
			spread(c.VPERMW, Z25, idx[j], zr(20+j))
		}
		for j := 0; j < 4; j++ {
			c.VPMOVZXBD(mem(row, 2+16*j), Z25)
			c.KMOVW(mem(row, 66+2*j), K1)
			c.VPORD(k.get("d100"), Z25, K1, Z25)
			// The gather clears its mask: each takes its own from K3,
			// which nothing writes, so that they do not wait for one
			// another. (Scalar loads and VPINSRD, as ggml's AVX2 kernel
			// does, measured a third slower on Zen 4.)
			c.KXNORW(K3, K3, K2)
			c.VPGATHERDD(memx(R13, 0, Z25, 4), K2, zr(16+j))
			c.KMOVQ(mem(row, 74+8*j), []Register{K4, K5, K6, K7}[j])
		}
	default:
		panic(fmt.Sprint("lowPrep: ", t.name))
	}
}

// lowRC adds the prepared row times a column (quant chunks q, block sums
// bs) to acc, with the factors at fac (d·y.d; fac+4 dmin·y.d).
func lowRC(t *lowType, q [4]Op, bs Op, fac Mem, k lowKonst, acc Register) {
	switch t {
	case lowIQ4XS:
		for j := 0; j < 4; j++ {
			s := Z25
			if j == 0 {
				s = Z26
			}
			zero(s)
			VPDPBUSD(q[j], zr(16+j), s)
			c.VPMULLD(zr(20+j), s, s)
			if j > 0 {
				c.VPADDD(Z25, Z26, Z26)
			}
		}
	case lowIQ3S:
		for j := 0; j < 4; j++ {
			if _, ok := q[j].(Mem); ok {
				c.VMOVDQU64(q[j], Z25)
			} else {
				c.VMOVDQA64(q[j], Z25)
			}
			c.VPSUBB(Z25, k.get("zero"), []Register{K4, K5, K6, K7}[j], Z25)
			c.VPMADDUBSW(Z25, zr(16+j), Z25)
			if j == 0 {
				c.VPMADDWD(Z20, Z25, Z26)
			} else {
				VPDPWSSD(zr(20+j), Z25, Z26)
			}
		}
	default:
		c.VPMADDUBSW(q[0], Z16, Z25)
		c.VPMADDWD(Z20, Z25, Z26)
		for j := 1; j < 4; j++ {
			c.VPMADDUBSW(q[j], zr(16+j), Z25)
			VPDPWSSD(zr(20+j), Z25, Z26)
		}
	}
	if t == lowIQ3S {
		c.VCVTDQ2PS(Z26, Z26)
		c.VFMADD231PS_BCST(fac, Z26, acc)
		return
	}
	c.VPMADDWD(bs, Y24, Y27)
	if t.withMin() {
		c.VCVTDQ2PS(Z26, Z26)
		c.VCVTDQ2PS(Y27, Y27)
		c.VFMADD231PS_BCST(fac, Z26, acc)
		c.VFNMADD231PS_BCST(fac.Offset(4), Z27, K3, acc)
		return
	}
	shift := 2 // Q3_K: −4·Σ sc·bsums
	if t == lowIQ4XS {
		shift = 7 // the levels' +128
	}
	c.VPSLLD(U8(shift), Y27, Y27)
	c.VPSUBD(Z27, Z26, Z26)
	c.VCVTDQ2PS(Z26, Z26)
	c.VFMADD231PS_BCST(fac, Z26, acc)
}
