package main

import (
	"bytes"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The lattice types IQ3_XXS, IQ1_S and IQ1_M against Q8_K (292 bytes:
// float32 d at 0, qs[256] at 4, int16 bsums[16] at 260), 256 elements a
// block, eight sub-blocks of 32:
//
//	IQ3_XXS (98 B) fp16 d at 0; qs[64] at 2, an index into the
//	               [256]uint32 iq3xxsGrid per four elements; at 66 a
//	               uint32 per sub-block: four 7-bit sign fields (ggml's
//	               ksigns adds the parity bit), the scale in bits 28-31
//	IQ1_S   (50 B) fp16 d at 0; qs[32] at 2, the low eight bits of an
//	               index into the [2048]uint64 iq1sGrid per group of
//	               eight; at 34 a uint16 per sub-block: bits 3g..3g+2 the
//	               index's top bits of group g, bits 12-14 the scale,
//	               bit 15 the sign of the offset δ = ±1/8
//	IQ1_M   (56 B) qs[32] at 0 as IQ1_S's; qh[16] at 32: per group a
//	               nibble, the index's top three bits and the sign of its
//	               δ; sc[4] uint16 at 48: a 3-bit scale per half
//	               sub-block (16 elements), fp16 d in the top nibbles
//
// The grids are package quant's own tables, read in place by gathers
// (·iq3xxsGrid, ·iq1sGrid): a group's point is one entry, so one gather
// fetches a register's worth of points (AVX2 a sub-block, AVX-512 two).
// The grids are too large for any register lookup, and on Intel the
// gathers cost about half of each kernel's time. IQ3_XXS's points are
// magnitudes 4..62, met with VPMADDUBSW as unsigned bytes, its signs
// applied to the activations (VPSIGNB, or a masked VPSUBB from zero),
// which is exact because Q8_K never holds −128. IQ1's points are −1, 0
// or 1: AVX2 signs the activations by them (VPSIGNB is the product
// itself), AVX-512 maps them to unsigned bytes (latVNNI).
//
// As in the Go twins the sums are exact int32 per super-block; IQ1 sums
// 8·Σ ls·Σ grid·y + Σ ls·±Σ y (the offset's eighth taken out, so the
// whole stays an integer) and multiplies the row's total by 1/8 at the
// end, IQ3_XXS its total by 1/4 as the twin does: powers of two, which
// round nothing short of overflow or subnormals.
type latticeType struct {
	name string
	wb   int // bytes per super-block
}

var (
	latIQ3XXS = &latticeType{name: "IQ3_XXS", wb: 98}
	latIQ1S   = &latticeType{name: "IQ1_S", wb: 50}
	latIQ1M   = &latticeType{name: "IQ1_M", wb: 56}
)

// dotLattice emits dot<T><W>Asm(w, x *byte, nb int) float32.
func dotLattice(t *latticeType, w width) {
	text("dot"+t.name+w.suffix()+"Asm", NOSPLIT, "func(w, x *byte, nb int) float32")
	switch {
	case w != avx2:
		latVNNI(t, w)
	case t == latIQ3XXS:
		iq3xxsAVX2()
	case t == latIQ1S:
		iq1sAVX2()
	case t == latIQ1M:
		iq1mAVX2()
	}
}

// quantVar is the address of package quant's variable name, a grid the
// kernels gather from: one copy of it, filled at init.
func quantVar(name string) Mem { return NewDataAddr(Symbol{Name: "·" + name}, 0) }

// latQwords and latCounts are latTable's plain tables, lat<name>: a qword
// repeated, and eight dword shift counts.
var (
	latQwords = map[string]uint64{
		"D01":  0x0000000100000001,
		"D700": 0x0000070000000700,
		"W01":  0x0001000100010001,
		"W07":  0x0007000700070007,
	}
	latCounts = map[string][]uint32{
		// Bring the index bits of group g of IQ1_S's sub-block 2p+h
		// (qh word h of the dword) to bit 0.
		"Cnt3": {0, 3, 6, 9, 16, 19, 22, 25},
		// Bring IQ1_M's nibble j to bit 0.
		"Cnt4": {0, 4, 8, 12, 16, 20, 24, 28},
		// The four 3-bit scales of an IQ1_M scale word.
		"CntSc": {0, 3, 6, 9, 0, 3, 6, 9},
	}
)

// latTable returns the named constant of the lattice kernels, 32 bytes.
func latTable(name string) Mem {
	rep := func(w uint64) Mem { return table("lat"+name, w, w, w, w) }
	if w, ok := latQwords[name]; ok {
		return rep(w)
	}
	if d, ok := latCounts[name]; ok {
		return dwordsTable("lat"+name, d)
	}
	switch name {
	case "F0", "F1", "F2", "F3":
		// IQ3_XXS's sign field k, shifted left by k, is byte k.
		k := name[1] - '0'
		return rep(0x7F << (8 * k) * 0x0000000100000001)
	case "Parity":
		// VPSHUFB: 0x80 for the nibbles of odd parity; the IQ2 kernels'.
		return iq2Table("iq2Parity")
	case "Fields":
		// VPMULTISHIFTQB controls: byte k of a dword pair takes bits
		// 7k.. of its low dword, byte 4+k bits 32+7k.. of the high one.
		return bytesTable("latFields", bytes.Repeat([]byte{0, 7, 14, 21, 32, 39, 46, 53}, 4))
	case "Ksigns":
		// GF(2) matrix (row of output bit i in byte 7−i): bits 0-6
		// kept, bit 7 the parity of bits 0-6.
		m := uint64(0x7F)
		for i := 0; i < 7; i++ {
			m |= 1 << i << (8 * (7 - i))
		}
		return rep(m)
	case "Rot3":
		// VPROLVD counts that take the index bits of IQ1_S's group g
		// of sub-block 2p+h to bits 8-10: rotate by 8−16h−3g.
		return dwordsTable("latRot3", rotCounts(func(i int) int { return 16*(i/4) + 3*(i%4) }))
	case "Rot4":
		// The same for IQ1_M's nibble i: 8−4i.
		return dwordsTable("latRot4", rotCounts(func(i int) int { return 4 * i }))
	case "NegBitD":
		// VPTESTMD bits of IQ1_M's δ signs: the sign of group q (bit
		// 3+4q of the chunk's qh dword) in dwords 2q and 2q+1, the
		// lanes of its eight bytes.
		d := make([]uint32, 16)
		for i := range d {
			d[i] = 1 << (3 + 4*(i/2))
		}
		return dwordsTable("latNegBitD", d)
	case "DupB0":
		// VPSHUFB: byte 0 of each dword into all four of its bytes.
		return bytesTable("latDupB0", shufPattern(func(_, i int) int { return i &^ 3 }))
	case "DupW0":
		// VPSHUFB: word 0 of each dword into both its words.
		return bytesTable("latDupW0", shufPattern(func(_, i int) int { return i&^3 | i&1 }))
	case "ScA", "ScB":
		// VPSHUFB from IQ1_M's four scale words (in each 128-bit lane):
		// the word of lane l (ScA: words 0, 1; ScB: 2, 3), zero-extended,
		// into each dword of the lane.
		first := 0
		if name == "ScB" {
			first = 2
		}
		return bytesTable("lat"+name, shufPattern(func(lane, i int) int {
			if i%4 >= 2 {
				return 0x80
			}
			return 2*(first+lane) + i%2
		}))
	case "NegBit":
		// IQ1_M's δ sign of group g (the qword g of a sub-block) in the
		// word of its two qh bytes: bit 3+4g, in every word of qword g.
		var w [4]uint64
		for g := range w {
			w[g] = 0x0001000100010001 << (3 + 4*g)
		}
		return table("latNegBit", w[:]...)
	case "Nib16":
		// VPMADDWD weights that put IQ1_M's four d nibbles together.
		return wordsTable("latNib16", []uint16{1, 16, 256, 4096, 0, 0, 0, 0})
	}
	panic("latTable: " + name)
}

// rotCounts is eight VPROLVD counts taking bit at(i) of dword i to bit 8.
func rotCounts(at func(i int) int) []uint32 {
	d := make([]uint32, 8)
	for i := range d {
		d[i] = uint32(8-at(i)) & 31
	}
	return d
}

// shufPattern is a 32-byte VPSHUFB pattern: byte i of 128-bit lane l
// takes byte src(l, i) of the lane.
func shufPattern(src func(lane, i int) int) []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(src(i/16, i%16))
	}
	return b
}

// final is the factor of the row's total: IQ3_XXS's 1/4, IQ1's 1/8 (a
// one-float32 table).
func (t *latticeType) final() Mem {
	if t == latIQ3XXS {
		return table32("latQuarter", 0x3E800000)
	}
	return table32("latEighth", 0x3E000000)
}

// latFactor leaves d·y.d in all lanes of Y register dst, the block's
// fp16 d in the low word of X register h.
func latFactor(h, dst Register) {
	x := asX(dst)
	c.VCVTPH2PS(h, x)
	c.VMULSS(mem(RDI, 0), x, x)
	c.VBROADCASTSS(x, dst)
}

// latLoad loads the fp16 d at the start of the block (IQ3_XXS, IQ1_S)
// into the low word of X register h.
func latLoad(h Register) {
	c.MOVWLZX(mem(RSI, 0), EAX)
	c.VMOVD(EAX, h)
}

// latEnd closes the super-block loop: the exact sum isum (dwords) times
// d·y.d (the fp16 d in the low word of X4; Y10 scratch) into Y0, the next
// blocks; after the loop, Y0's sum times the final factor is the result.
func latEnd(t *latticeType, isum Register) {
	latFactor(X4, Y10)
	c.VCVTDQ2PS(isum, isum)
	c.VFMADD231PS(Y10, isum, Y0)
	nextSuper(t.wb)
	hsum(Y0, X1)
	c.VMULSS(t.final(), X0, X0)
	retFloat()
}

// ---------------------------------------------------------------------
// AVX2: one super-block at a time, a sub-block a register. RSI the
// weights, RDI the activations, RCX the count; Y0 the float sums; R13 the
// grid.

// iq3xxsAVX2: per sub-block the grid's eight dwords (VPGATHERDD), the
// four sign bytes spread to the activations with VPSIGNB, VPMADDUBSW,
// and VPMADDWD with the scale 2s+1 as a word pair. The scales and the 32
// sign bytes of a super-block are made at once and parked on the stack,
// to be broadcast a sub-block at a time. Two int32 accumulators (Y1, Y2)
// alternate so that neighbouring sub-blocks do not wait for each other.
// (A second gather per sub-block, of ksigns as byte masks, in place of
// the sign bytes made in registers, measured 5% slower.)
func iq3xxsAVX2() {
	stack := c.AllocLocal(64)
	signs := stack.Offset(32)
	loadArgs("w x nb", RSI, RDI, RCX)
	c.LEAQ(quantVar("iq3xxsGrid"), R13)
	c.VMOVDQU(lowTable("bitsel"), Y15)
	c.VMOVDQU(bytesTable("spread4", spreadBytes()), Y14)
	zero(Y0)
	label("loop")
	c.VMOVDQU(mem(RSI, 66), Y4)
	iq3xxsSignBytes(Y4, signs)
	c.VPSRLD(U8(28), Y4, Y4)
	c.VPADDD(Y4, Y4, Y4)
	c.VPOR(latTable("D01"), Y4, Y4)
	c.VPSHUFB(latTable("DupW0"), Y4, Y4)
	c.VMOVDQU(Y4, stack)
	zero(Y1)
	zero(Y2)
	for b := 0; b < 8; b++ {
		isum := []Register{Y1, Y2}[b%2]
		c.VPMOVZXBD(mem(RSI, 2+8*b), Y10)
		c.VPCMPEQD(Y12, Y12, Y12)
		c.VPGATHERDD(Y12, memx(R13, 0, Y10, 4), Y11)
		signedProduct(Y11, signs.Offset(4*b), Y9, lowTable("b01"), mem(RDI, 4+32*b), Y8)
		c.VPBROADCASTD(stack.Offset(4*b), Y12)
		c.VPMADDWD(Y12, Y11, Y11)
		c.VPADDD(Y11, isum, isum)
	}
	c.VPADDD(Y2, Y1, Y1)
	latLoad(X4)
	latEnd(latIQ3XXS, Y1)
}

// iq3xxsSignBytes stores at dst the 32 sign bytes (ksigns) of the
// super-block whose eight sign-and-scale words are in aux: field k of
// word b, bits 7k..7k+6, shifted to byte k, and bit 7 set to its parity
// (VPSHUFB of a nibble parity table, low and high nibble). Y5-Y8
// scratch.
func iq3xxsSignBytes(aux Register, dst Mem) {
	c.VPAND(latTable("F0"), aux, Y5)
	for k := 1; k < 4; k++ {
		c.VPSLLD(U8(k), aux, Y6)
		c.VPAND(latTable([]string{"", "F1", "F2", "F3"}[k]), Y6, Y6)
		c.VPOR(Y6, Y5, Y5)
	}
	c.VPSRLW(U8(4), Y5, Y6)
	c.VPAND(lowTable("b0f"), Y6, Y6)
	c.VPAND(lowTable("b0f"), Y5, Y7)
	c.VBROADCASTI128(latTable("Parity"), Y8)
	c.VPSHUFB(Y6, Y8, Y6)
	c.VPSHUFB(Y7, Y8, Y7)
	c.VPXOR(Y7, Y6, Y6)
	c.VPOR(Y6, Y5, Y5)
	c.VMOVDQU(Y5, dst)
}

// iq1Indexes leaves the grid indexes of sub-blocks 2p and 2p+1 (four
// groups each) in X10 and X11: the qs bytes at row+qs, the top bits from
// the dword at row+qh, shifted to bit 0 by cnt and masked to bits 8-10.
func iq1Indexes(qs, qh int, cnt Op) {
	c.VPMOVZXBD(mem(RSI, qs), Y10)
	c.VPBROADCASTD(mem(RSI, qh), Y11)
	c.VPSRLVD(cnt, Y11, Y11)
	c.VPSLLD(U8(8), Y11, Y11)
	c.VPAND(latTable("D700"), Y11, Y11)
	c.VPOR(Y11, Y10, Y10)
	c.VEXTRACTI128(U8(1), Y10, X11)
}

// iq1Gather leaves the four grid points of index register ix in Y9 and
// the activations times them (VPSIGNB) in Y8, for sub-block b.
func iq1Gather(ix Register, b int) {
	c.VPCMPEQD(Y12, Y12, Y12)
	c.VPGATHERDQ(Y12, memx(R13, 0, ix, 8), Y9)
	c.VMOVDQU(mem(RDI, 4+32*b), Y8)
	c.VPSIGNB(Y9, Y8, Y8)
}

// iq1sAVX2: per sub-block the four grid points (VPGATHERDQ) sign the
// activations, and VPMADDUBSW with the scale ls = 2s+1 as unsigned bytes
// (broadcast from the stack) sums them in word pairs. At most 2·15·127 a
// word a sub-block, 30480 over eight: the words add up in Y1 unsaturated,
// and one VPMADDWD a super-block widens them. The offset's sum comes from
// the block sums: VPMADDWD of bsums with ±ls per sub-block (Y3).
func iq1sAVX2() {
	stack := c.AllocLocal(32)
	loadArgs("w x nb", RSI, RDI, RCX)
	c.LEAQ(quantVar("iq1sGrid"), R13)
	c.VMOVDQU(latTable("Cnt3"), Y15)
	c.VMOVDQU(latTable("DupW0"), Y14)
	zero(Y0)
	label("loop")
	// ±ls in X7.
	iq1sLs()
	c.VPXOR(X6, X5, X7)
	c.VPSUBW(X6, X7, X7)
	c.VPMOVZXWD(X7, Y7)
	c.VPSHUFB(Y14, Y7, Y7)
	c.VPMADDWD(mem(RDI, 260), Y7, Y3)
	c.VPMOVZXWD(X5, Y5)
	c.VPSHUFB(latTable("DupB0"), Y5, Y5)
	c.VMOVDQU(Y5, stack)
	zero(Y1)
	for p := 0; p < 4; p++ {
		iq1Indexes(2+8*p, 34+4*p, Y15)
		for h, ix := range []Register{X10, X11} {
			b := 2*p + h
			iq1Gather(ix, b)
			c.VPBROADCASTD(stack.Offset(4*b), Y12)
			c.VPMADDUBSW(Y8, Y12, Y8)
			c.VPADDW(Y8, Y1, Y1)
		}
	}
	c.VPMADDWD(latTable("W01"), Y1, Y1)
	c.VPSLLD(U8(3), Y1, Y1)
	c.VPADDD(Y3, Y1, Y1)
	latLoad(X4)
	latEnd(latIQ1S, Y1)
}

// iq1mAVX2 is iq1sAVX2 with a scale per half sub-block (the 128-bit
// lanes) and a δ sign per group. The sixteen ls = 2s+1 are words in half
// order for the block sums (Σ ls·Σ y, as if every δ were +1/8) and bytes
// in both lanes of Y14, from which VPSHUFB takes a sub-block's pair. The
// groups whose δ is −1/8 (a word compare against Y15, NegBit) mask the
// activations into a second word sum, Y2, taken twice off the first.
func iq1mAVX2() {
	loadArgs("w x nb", RSI, RDI, RCX)
	c.LEAQ(quantVar("iq1sGrid"), R13)
	c.VMOVDQU(latTable("NegBit"), Y15)
	zero(Y0)
	label("loop")
	iq1mScales()
	c.VPMADDWD(mem(RDI, 260), Y5, Y3)
	c.VEXTRACTI128(U8(1), Y5, X6)
	c.VPACKUSWB(X6, X5, X14)
	c.VPERMQ(U8(0x44), Y14, Y14)
	zero(Y1)
	zero(Y2)
	for p := 0; p < 4; p++ {
		iq1Indexes(8*p, 32+4*p, latTable("Cnt4"))
		for h, ix := range []Register{X10, X11} {
			b := 2*p + h
			iq1Gather(ix, b)
			c.VPBROADCASTW(mem(RSI, 32+2*b), Y13)
			c.VPAND(Y15, Y13, Y13)
			c.VPCMPEQW(Y15, Y13, Y13)
			c.VPAND(mem(RDI, 4+32*b), Y13, Y13)
			c.VPSHUFB(iq1mLsIdx().Offset(32*b), Y14, Y12)
			c.VPMADDUBSW(Y8, Y12, Y8)
			c.VPADDW(Y8, Y1, Y1)
			c.VPMADDUBSW(Y13, Y12, Y13)
			c.VPADDW(Y13, Y2, Y2)
		}
	}
	c.VMOVDQU(latTable("W01"), Y4)
	c.VPMADDWD(Y4, Y1, Y1)
	c.VPSLLD(U8(3), Y1, Y1)
	c.VPADDD(Y3, Y1, Y1)
	c.VPMADDWD(Y4, Y2, Y2)
	c.VPADDD(Y2, Y2, Y2)
	c.VPSUBD(Y2, Y1, Y1)
	iq1mScale(X4)
	latEnd(latIQ1M, Y1)
}

// iq1mScales leaves the sixteen half sub-block scales ls = 2s+1 of the
// IQ1_M super-block as words in Y5, in half order (Y4, Y6 scratch): s of
// half h is bits 3(h%4) of scale word h/4; halves 0-7 go to the dwords
// of Y5, 8-15 to Y6, and are packed together.
func iq1mScales() {
	c.VPBROADCASTQ(mem(RSI, 48), Y4)
	c.VPSHUFB(latTable("ScA"), Y4, Y5)
	c.VPSHUFB(latTable("ScB"), Y4, Y6)
	c.VPSRLVD(latTable("CntSc"), Y5, Y5)
	c.VPSRLVD(latTable("CntSc"), Y6, Y6)
	c.VPACKUSDW(Y6, Y5, Y5)
	c.VPERMQ(U8(0xD8), Y5, Y5)
	c.VPAND(latTable("W07"), Y5, Y5)
	c.VPADDW(Y5, Y5, Y5)
	c.VPOR(latTable("W01"), Y5, Y5)
}

// iq1mScale leaves IQ1_M's fp16 d in the low word of X register h: the
// top nibbles of the scale words (through X5), put together.
func iq1mScale(h Register) {
	c.VMOVQ(mem(RSI, 48), h)
	c.VPSRLW(U8(12), h, h)
	c.VPMADDWD(latTable("Nib16").Offset(0), h, h)
	c.VPSHUFD(U8(1), h, X5)
	c.VPADDD(X5, h, h)
}

// iq1mLsIdx is the VPSHUFB pattern per sub-block b that takes half 2b's
// scale byte into the low lane and 2b+1's into the high one.
func iq1mLsIdx() Mem {
	b := make([]byte, 8*32)
	for i := range b {
		sb, lane := i/32, i%32/16
		b[i] = byte(2*sb + lane)
	}
	return bytesTable("iq1mLsIdx", b)
}

// ---------------------------------------------------------------------
// AVX-512 VNNI: a Z register is a chunk of 64 elements, sub-blocks 2j and
// 2j+1 (IQ1_M: half sub-blocks 4j..4j+3 in its 128-bit lanes), one gather
// per chunk (sixteen dwords, or eight qwords). Z0 (IQ3_XXS) or Y0 (IQ1)
// the float sums, Z12-Z15 the VPERMD indexes that spread chunk j's
// scales over its lanes, Z26 and Z27 the int32 sums of a super-block,
// Z29-Z31 constants, K2 the gathers' mask (from K3, which nothing writes:
// KXNORW of it is all ones).
//
// VNNI has no VPSIGNB, so the signs go another way. IQ3_XXS's become a
// mask register, its bits the ksigns bytes as the AVX2 kernel makes them,
// for a masked VPSUBB from zero. IQ1's grid bytes g are mapped by VPSHUFB
// to the unsigned ls·(g+1) (−1, byte 0xFF, has the top bit that makes
// VPSHUFB give 0; 0 and 1 take the scale and twice it from the chunk's
// table), which
// VPDPBUSD meets with the activations as they are; the ls·Σ y that the
// +1 adds is taken off through the block sums (IQ1_S's coefficient
// ls·(σ−8) folds it in with the offset). IQ1_M's offsets are Σ ls·Σ y
// (the block sums) less twice the sums of the groups whose δ is −1/8, a
// VPDPBUSD of the scales masked to their dwords.

// latVNNI emits the body of t's VNNI dot product: the constants, then per
// super-block the type's part (which adds it to Z0 or Y0), then the sum.
func latVNNI(t *latticeType, w width) {
	stack := c.AllocLocal(64)
	loadArgs("w x nb", RSI, RDI, RCX)
	grid := "iq1sGrid"
	idx := dwordsTable("latIdxSub", spreadIdx[uint32](64, 16, 2, 8))
	switch t {
	case latIQ3XXS:
		grid = "iq3xxsGrid"
		zero(Z31)
		if w == vbmi {
			c.VMOVDQU64(latTable("Fields"), Y28)
		}
	case latIQ1M:
		idx = dwordsTable("latIdxHalf", spreadIdx[uint32](64, 16, 4, 4))
		c.VMOVDQU64(latTable("Rot4"), Y29)
		zero(Z31)
	default:
		c.VMOVDQU64(latTable("Rot3"), Y29)
	}
	c.LEAQ(quantVar(grid), R13)
	for j := 0; j < 4; j++ {
		c.VMOVDQU64(idx.Offset(64*j), zr(12+j))
	}
	c.VMOVDQU64(latTable("D700"), Y30)
	zero(Z0)
	label("loop")
	switch t {
	case latIQ3XXS:
		iq3xxsVNNI(stack, w)
	case latIQ1S:
		iq1sVNNI()
	case latIQ1M:
		iq1mVNNI()
	}
	nextSuper(t.wb)
	fold512(Z0, Y1)
	hsum(Y0, X1)
	c.VMULSS(t.final(), X0, X0)
	retFloat()
}

// iq3xxsVNNI adds an IQ3_XXS super-block to Z0: per chunk the gathered
// magnitudes, the activations negated under the chunk's 64 sign bits
// (K1, from the sign bytes parked at stack+32), VPMADDUBSW, and
// VPDPWSSD with the two sub-blocks' 2s+1 as word pairs. With VBMI (and
// GFNI) the sign bytes take two instructions.
func iq3xxsVNNI(stack Mem, w width) {
	signs := stack.Offset(32)
	c.VMOVDQU(mem(RSI, 66), Y4)
	if w == vbmi {
		// Each sign field to a byte of its own (VPMULTISHIFTQB, Y28
		// Fields), then bit 7 its parity, one GF(2) affine map.
		c.VPMULTISHIFTQB(Y4, Y28, Y5)
		VGF2P8AFFINEQB(U8(0), latTable("Ksigns"), Y5, Y5)
		c.VMOVDQU(Y5, signs)
	} else {
		iq3xxsSignBytes(Y4, signs)
	}
	c.VPSRLD(U8(28), Y4, Y4)
	c.VPADDD(Y4, Y4, Y4)
	c.VPOR(latTable("D01"), Y4, Y4)
	c.VPSHUFB(latTable("DupW0"), Y4, Y4)
	for j := 0; j < 4; j++ {
		c.VPMOVZXBD(mem(RSI, 2+16*j), Z8)
		c.KXNORW(K3, K3, K2)
		c.VPGATHERDD(memx(R13, 0, Z8, 4), K2, Z9)
		c.KMOVQ(signs.Offset(8*j), K1)
		c.VMOVDQU64(mem(RDI, 4+64*j), Z10)
		c.VPSUBB(Z10, Z31, K1, Z10)
		c.VPMADDUBSW(Z10, Z9, Z10)
		c.VPERMD(Z4, zr(12+j), Z11)
		if j == 0 {
			c.VPMADDWD(Z11, Z10, Z26)
		} else {
			VPDPWSSD(Z11, Z10, Z26)
		}
	}
	c.VCVTDQ2PS(Z26, Z26)
	latLoad(X5)
	c.VCVTPH2PS(X5, X5)
	c.VMULSS(mem(RDI, 0), X5, X5)
	c.VBROADCASTSS(X5, Z5)
	c.VFMADD231PS(Z5, Z26, Z0)
}

// iq1VNNIIndexes leaves chunk j's eight grid indexes in Y9: the qs bytes
// at row+qs, the top bits from the dword qh (a register or memory),
// rotated by Y29 to bits 8-10 and merged (VPTERNLOGD: qs | rot & 0x700,
// Y30).
func iq1VNNIIndexes(qs int, qh Op) {
	c.VPMOVZXBD(mem(RSI, qs), Y8)
	if m, ok := qh.(Mem); ok {
		c.VPBROADCASTD(m, Y9)
		qh = Y9
	}
	c.VPROLVD(Y29, qh, Y9)
	c.VPTERNLOGD(U8(0xEC), Y30, Y8, Y9)
}

// iq1VNNIChunk gathers chunk j's grid points (indexes in Y9) into Z10,
// maps them through the chunk's table (its scale dwords spread from Z5)
// to ls·(g+1) in Z11, and adds their products with the activations to
// Z26.
func iq1VNNIChunk(j int) {
	c.KXNORW(K3, K3, K2)
	c.VPGATHERDQ(memx(R13, 0, Y9, 8), K2, Z10)
	c.VPERMD(Z5, zr(12+j), Z16)
	c.VPSHUFB(Z10, Z16, Z11)
	VPDPBUSD(mem(RDI, 4+64*j), Z11, Z26)
}

// iq1Table turns the scales ls (dwords in v) into the VPSHUFB table
// ls | 2ls<<8 (t scratch).
func iq1Table(v, t Register) {
	c.VPSLLD(U8(9), v, t)
	c.VPORD(t, v, v)
}

// iq1Total adds Z26 (its two halves) and the block-sum terms in Y3 as
// floats times d·y.d (Y5) to Y0.
func iq1Total() {
	c.VEXTRACTI64X4(U8(1), Z26, Y6)
	c.VPADDD(Y6, Y26, Y26)
	c.VPADDD(Y3, Y26, Y26)
	c.VCVTDQ2PS(Y26, Y26)
	c.VFMADD231PS(Y5, Y26, Y0)
}

// iq1sLs loads IQ1_S's eight qh words into X4 and leaves their scales
// ls = 2s+1 as words in X5, and all ones in X6's words whose δ is
// negative (bit 15).
func iq1sLs() {
	c.VMOVDQU(mem(RSI, 34), X4)
	c.VPSRLW(U8(12), X4, X5)
	c.VPAND(latTable("W07").Offset(0), X5, X5)
	c.VPADDW(X5, X5, X5)
	c.VPOR(latTable("W01").Offset(0), X5, X5)
	c.VPSRAW(U8(15), X4, X6)
}

// iq1sVNNI adds an IQ1_S super-block to Y0. Y3: per sub-block b,
// ls·(σ−8)·Σ y (the block sums against the coefficient words).
func iq1sVNNI() {
	iq1sLs()
	// σ−8: −7, or −9 where bit 15 is set.
	c.VPADDW(X6, X6, X6)
	c.VPSUBW(latTable("W07").Offset(0), X6, X6)
	c.VPMULLW(X5, X6, X6)
	c.VPMOVZXWD(X6, Y6)
	c.VPSHUFB(latTable("DupW0"), Y6, Y6)
	c.VPMADDWD(mem(RDI, 260), Y6, Y3)
	c.VPMOVZXWD(X5, Y5)
	iq1Table(Y5, Y6)
	for j := 0; j < 4; j++ {
		iq1VNNIIndexes(2+8*j, mem(RSI, 34+4*j))
		if j == 0 {
			zero(Z26)
		}
		iq1VNNIChunk(j)
	}
	c.VPSLLD(U8(3), Z26, Z26)
	latLoad(X4)
	latFactor(X4, Y5)
	iq1Total()
}

// iq1mVNNI adds an IQ1_M super-block to Y0: the sixteen half scales as in
// the AVX2 kernel, as dwords in Z5 for the tables; Y3 −7·Σ ls·Σ y; the
// negative offsets' sums in Z27 (K1 from VPTESTMD of the chunk's qh
// dword against NegBitD).
func iq1mVNNI() {
	iq1mScales()
	c.VPMADDWD(mem(RDI, 260), Y5, Y3)
	c.VPSLLD(U8(3), Y3, Y4)
	c.VPSUBD(Y4, Y3, Y3)
	c.VPMOVZXWD(Y5, Z5)
	iq1Table(Z5, Z6)
	zero(Z26)
	zero(Z27)
	for j := 0; j < 4; j++ {
		c.VPBROADCASTD(mem(RSI, 32+4*j), Z17)
		c.VPTESTMD(latTable("NegBitD"), Z17, K1)
		iq1VNNIIndexes(8*j, Y17)
		iq1VNNIChunk(j)
		c.VPSHUFB(Z31, Z16, Z18)
		VPDPBUSDMask(mem(RDI, 4+64*j), Z18, K1, Z27)
	}
	c.VPSLLD(U8(3), Z26, Z26)
	c.VPADDD(Z27, Z27, Z27)
	c.VPSUBD(Z27, Z26, Z26)
	iq1mScale(X4)
	latFactor(X4, Y5)
	iq1Total()
}
