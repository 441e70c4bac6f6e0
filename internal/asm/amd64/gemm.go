package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// GEMM kernels of prefill: four weight rows against a panel of 32
// activation columns that package quant packed beforehand (quant/gemm.go
// documents the layout): per 32-element block, eight groups of four
// elements, each group the 4 bytes of each of the 32 columns (two 64-byte
// halves of 16 columns), then the columns' d_x and bias·d_x·Σy as floats.
//
//	gemm<T>VNNI(w *byte, wStride int, p *byte, nb int, out *float32, outStride int, cols int)
//
// sets out[c*outStride+r] for r < 4 and c < cols over nb ≥ 1 blocks.
//
// A weight row's group of four elements is broadcast to every dword
// (VPBROADCASTD from memory, then made unsigned bytes: Q4_0's low or high
// nibbles, Q8_0's bytes xor 0x80), and VPDPBUSD against a panel half sums
// it with 16 columns at once, so a block's integer sum for 16 columns
// builds up in one register over eight VPDPBUSD, starting from the
// panel's -bias·Σy so that it is exact, and the float work — convert,
// d_w·d_x, an FMA — is done once per block, row and 16 columns
// rather than once per block and (row, column). Each unpacked group serves
// 32 columns.
//
// Registers: Z0-Z7 float accumulators (row r, half h in Z(2r+h)), Z8-Z15
// the block's integer sums (same order), Z16/Z17 the halves' d_x, Z18 d_w,
// Z19-Z22 broadcast groups, Z23/Z24 scratch, Z30 bytes 0x0F or 0x80.
// General: SI, BX, R8, R9 the rows, DI the panel, CX blocks left.

const gemmSig = "func(w *byte, wStride int, p *byte, nb int, out *float32, outStride int, cols int)"

// gemmPanelBlock is the bytes of one block of a packed panel.
const gemmPanelBlock = 8*128 + 2*128

func gemmName(t *blockType) string { return "gemm" + t.name + "VNNI" }

// gemmBlock emits the GEMM kernel of Q4_0 or Q8_0.
func gemmBlock(t *blockType) { gemmBlockOf(t, rowLayout(t)) }

// gemmLayout says where a GEMM kernel finds its four weight rows: at(r,
// off) is the address of what lies at byte off of row r's block in the
// row layout (a 4-byte group of codes, the fp16 scale d or (d, dmin));
// scales(r), for the k-quants, leaves row r's sub-block scales in Z18 as
// dwords (Q4_K: scale and min interleaved, unsigned; Q6_K: signed); init
// starts the rows, next steps to the next block.
type gemmLayout struct {
	name   string
	init   func()
	at     func(r, off int) Mem
	scales func(r int)
	next   func()
}

// inPlace is the row layout: four rows wStride apart, a block of wb bytes
// after the other.
func inPlace(name string, wb int) gemmLayout {
	return gemmLayout{
		name: name,
		init: tileRows,
		at:   func(r, off int) Mem { return mem(tileRowRegs[r], off) },
		next: func() { nextRows(wb) },
	}
}

func rowLayout(t *blockType) gemmLayout { return inPlace(gemmName(t), t.wb) }

// x8Layout is rows first..first+3 of a group of Q4_0's or Q8_0's X8
// layout (quant's x8.go): w is the group, whose block columns hold the
// eight rows' scales and then their code bytes in 32-byte chunks (four or
// eight); wStride is unused.
func x8Layout(t *blockType, first int) gemmLayout {
	return gemmLayout{
		name: fmt.Sprintf("gemm%sX8R%dVNNI", t.name, first),
		init: func() { c.Load(c.Param("w"), RSI) },
		at: func(r, off int) Mem {
			if off == 0 {
				return mem(RSI, 2*(first+r))
			}
			// Code bytes off-2.. of the block are dword (off-2)/4.
			return mem(RSI, 16+32*((off-2)/4)+4*(first+r))
		},
		next: func() { c.ADDQ(U32(8*t.wb), RSI) },
	}
}

// gemmBlockOf emits the GEMM kernel of Q4_0 or Q8_0 over layout l.
func gemmBlockOf(t *blockType, l gemmLayout) {
	text(l.name, 0, gemmSig)
	res := c.AllocLocal(32 * 4 * 4) // the tile, column by column (4 floats)
	l.init()
	loadArgs("p nb", RDI, RCX)
	if t.nibble {
		bcast32(0x0F0F0F0F, Z30)
	} else {
		bcast32(0x80808080, Z30)
	}
	zeroAcc(vnni, 8)

	label("loop")
	c.VMOVUPS(mem(RDI, 1024), Z16)
	c.VMOVUPS(mem(RDI, 1088), Z17)
	for r := range tileRowRegs {
		// The integer sums start at -bias·Σy, exact.
		i0, i1 := zr(8+2*r), zr(9+2*r)
		c.VMOVDQU32(mem(RDI, 1152), i0)
		c.VMOVDQU32(mem(RDI, 1152+64), i1)
		for g := 0; g < 8; g++ {
			u := zr(19 + g%4)
			switch {
			case !t.nibble:
				c.VPBROADCASTD(l.at(r, t.qw+4*g), u)
				c.VPXORD(Z30, u, u)
			case g < 4:
				c.VPBROADCASTD(l.at(r, t.qw+4*g), u)
				c.VPANDD(Z30, u, Z23)
				u = Z23
			default:
				// The high nibbles of the dword broadcast for group g-4.
				c.VPSRLD(U8(4), u, u)
				c.VPANDD(Z30, u, u)
			}
			VPDPBUSD(mem(RDI, 128*g), u, i0)
			VPDPBUSD(mem(RDI, 128*g+64), u, i1)
		}
		c.VPBROADCASTW(l.at(r, 0), Y18)
		c.VCVTPH2PS(Y18, Z18)
		for h := 0; h < 2; h++ {
			// (d_w·d_x)·s, associated as the dot products do.
			i, f := zr(8+2*r+h), []Register{Z23, Z24}[h]
			c.VCVTDQ2PS(i, i)
			c.VMULPS(zr(16+h), Z18, f)
			c.VFMADD231PS(f, i, zr(2*r+h))
		}
	}
	l.next()
	gemmEnd(gemmPanelBlock, gemmStore, res)
}

// gemmEnd closes a GEMM kernel's block loop, the panel advancing panel
// bytes a block, then stores the tile with store and returns.
func gemmEnd(panel int, store func(Mem), res Mem) {
	c.ADDQ(U32(panel), RDI)
	c.DECQ(RCX)
	c.JNZ(ref("loop"))
	store(res)
	retVoid()
}

// gemmStore transposes the 4×32 tile in Z0-Z7 to the frame, four floats
// (rows 0-3) per column, and copies cols columns to out.
func gemmStore(res Mem) {
	// Per half: unpack rows pairwise, then qwords, so that 128-bit lane
	// l of Z(20+k) holds column 4l+k's four rows.
	for h := 0; h < 2; h++ {
		a, b, cc, d := zr(h), zr(2+h), zr(4+h), zr(6+h)
		c.VUNPCKLPS(b, a, Z16)
		c.VUNPCKHPS(b, a, Z17)
		c.VUNPCKLPS(d, cc, Z18)
		c.VUNPCKHPS(d, cc, Z19)
		c.VUNPCKLPD(Z18, Z16, Z20)
		c.VUNPCKHPD(Z18, Z16, Z21)
		c.VUNPCKLPD(Z19, Z17, Z22)
		c.VUNPCKHPD(Z19, Z17, Z23)
		for k := 0; k < 4; k++ {
			for l := 0; l < 4; l++ {
				col := 16*h + 4*l + k
				c.VEXTRACTF32X4(U8(l), zr(20+k), res.Offset(16*col))
			}
		}
	}
	gemmCopyOut(res, 16, func(src, dst Op) { c.VMOVUPS(src, dst) })
}

// gemmCopyOut copies cols results of size bytes each, packed in the frame
// at res, to out, outStride floats apart, with move.
func gemmCopyOut(res Mem, size int, move func(src, dst Op)) {
	loadArgs("out outStride", R12, R13)
	c.SHLQ(U8(2), R13)
	c.Load(c.Param("cols"), RCX)
	c.LEAQ(res, RAX)
	label("store")
	move(mem(RAX, 0), X0)
	move(X0, mem(R12, 0))
	c.ADDQ(U8(size), RAX)
	c.ADDQ(R13, R12)
	c.DECQ(RCX)
	c.JNZ(ref("store"))
}

// GEMM kernels of the k-quants Q4_K, Q5_K and Q6_K, against panels of Q8_K
// activations: per super-block, per sub-block j (32 elements for Q4_K, 16
// for Q6_K) its groups of four elements (128 bytes each, as above) and
// T_j of the 32 columns, then d_x of the 32 columns (32 floats). T_j is
// d_x·Σy_j as a float (Q4_K and Q5_K, for the mins), or -32·Σy_j as an int32 that
// seeds the integer sums (Q6_K, whose 6-bit values the kernel multiplies
// unsigned).
//
// Per row and super-block the sub-blocks' factors are converted to floats
// in Z18, and VPERMPS broadcasts the one a sub-block needs (indexes from a
// table): Q4_K lanes 2j and 2j+1 hold d·sc_j and dmin·m_j, Q6_K lane j
// d·sc_j. Per sub-block, row and 16 columns: F = d_x·Σu·y (VMULPS),
// acc += d·sc·F − dmin·m·T (Q4_K), or F = d_x·(T + Σu·y), acc += d·sc·F
// (Q6_K).
//
// Q4_K takes sub-blocks in pairs that share their bytes, Q6_K in fours
// that share theirs (the four quarters of 32 elements of a half).
//
// Registers: Z0-Z7 accumulators, Z8-Z15 the integer sums of the
// sub-blocks in hand (two or four, each two halves), Z16/Z17 d_x, Z18 the
// row's factors, Z19/Z20 the broadcast factors, Z21/Z22/Z26 broadcast
// groups, Z23/Z24/Z27/Z29 scratch, Z25 a VPERMPS index, Z28 bytes 0x30,
// Z30 bytes 0x0F, X10/X11 Q4_K's unpacked scales; for Q5_K, Z28 bytes
// 0x10 and Z26 the broadcast qh group. General: SI, BX, R8, R9 rows, DI the panel, CX
// super-blocks left; AX, DX, R10, R11 kScales scratch.

// kPanel is the layout of a k-quant panel: sub-blocks of sub elements.
type kPanel struct{ sub int }

func (p kPanel) groups() int   { return p.sub / 4 }
func (p kPanel) subBytes() int { return p.groups()*128 + 128 }
func (p kPanel) dx() int       { return 256 / p.sub * p.subBytes() }
func (p kPanel) bytes() int    { return p.dx() + 128 }

// gemmSuper emits the GEMM kernel of Q4_K, Q5_K or Q6_K.
func gemmSuper(t *superType) { gemmSuperOf(t, kRowLayout(t)) }

// kRowLayout is the row layout of a k-quant, whose scales are unpacked
// from the block.
func kRowLayout(t *superType) gemmLayout {
	l := inPlace("gemm"+t.name+"VNNI", t.wb)
	l.scales = func(r int) {
		if t.six {
			c.VPMOVSXBD(mem(tileRowRegs[r], 192), Z18)
			return
		}
		m := func(name string, b byte) Mem { return table(name, uint64(b)*0x0101010101010101) }
		kScales(tileRowRegs[r], X10, RAX, RDX, R10, R11, m("m3f", 0x3F), m("m03", 0x03), m("m0f", 0x0F))
		c.VPSRLDQ(U8(8), X10, X11)
		c.VPUNPCKLBW(X11, X10, X10)
		c.VPMOVZXBD(X10, Z18)
	}
	return l
}

// x8KLayout is rows first..first+3 of a group of Q4_K's, Q5_K's or
// Q6_K's X8 layout (quant's x8.go), w the group: the scales are bytes already, a
// row's gathered by one VPERMI2B from the block column's tables (Z27,
// Z10 scratch).
func x8KLayout(t *superType, first int) gemmLayout {
	l := gemmLayout{
		name: fmt.Sprintf("gemm%sX8R%dVNNI", t.name, first),
		init: func() { c.Load(c.Param("w"), RSI) },
		next: func() { c.ADDQ(U32(x8SuperBytes(t)), RSI) },
	}
	row := func(r int) int { return first + r }
	// chunk is the address of row r's dword k of codes in chunks from base.
	chunk := func(base, r, k int) Mem { return mem(RSI, base+32*k+4*row(r)) }
	if t.six {
		l.at = func(r, off int) Mem {
			// The chunks of group g of half h: ql dwords 16h+g and
			// 16h+8+g, qh dword 8h+g, at 144+96(8h+g).
			switch {
			case off == 208:
				return mem(RSI, 2*row(r))
			case off < 128:
				w := off % 64 / 4
				return mem(RSI, 144+96*(8*(off/64)+w%8)+32*(w/8)+4*row(r))
			}
			return mem(RSI, 144+96*(8*((off-128)/32)+(off-128)%32/4)+64+4*row(r))
		}
		l.scales = func(r int) {
			idx := make([]byte, 64)
			for j := 0; j < 16; j++ {
				idx[j] = byte(8*j + row(r))
			}
			c.VMOVDQU64(bytesTable(fmt.Sprintf("x8Q6Scales%d", row(r)), idx), Z10)
			c.VMOVDQU64(mem(RSI, 16), Z27)
			c.VPERMI2B(mem(RSI, 80), Z27, Z10)
			c.VPMOVSXBD(X10, Z18)
		}
		return l
	}
	l.at = func(r, off int) Mem {
		switch {
		case off == 0:
			return mem(RSI, 4*row(r))
		case !t.hbits:
			return chunk(160, r, (off-16)/4)
		case off < t.qs:
			// Q5_K: qh dword g leads group g's 160 bytes, code dword g
			// of pair p follows it at 32+32p.
			return mem(RSI, 160+160*((off-16)/4)+4*row(r))
		}
		o := off - t.qs
		return mem(RSI, 160+160*(o%32/4)+32+32*(o/32)+4*row(r))
	}
	l.scales = func(r int) {
		idx := make([]byte, 64)
		for j := 0; j < 8; j++ {
			idx[2*j], idx[2*j+1] = byte(8*j+row(r)), byte(64+8*j+row(r))
		}
		c.VMOVDQU64(bytesTable(fmt.Sprintf("x8KScales%d", row(r)), idx), Z10)
		c.VMOVDQU64(mem(RSI, 32), Z27)
		c.VPERMI2B(mem(RSI, 96), Z27, Z10)
		c.VPMOVZXBD(X10, Z18)
	}
	return l
}

// gemmSuperOf emits the GEMM kernel of Q4_K, Q5_K or Q6_K over layout l.
func gemmSuperOf(t *superType, l gemmLayout) {
	text(l.name, 0, gemmSig)
	res := c.AllocLocal(32 * 4 * 4)
	pan := kPanel{32}
	if t.six {
		pan = kPanel{16}
	}
	l.init()
	loadArgs("p nb", RDI, RCX)
	bcast32(0x0F0F0F0F, Z30)
	if t.hbits {
		bcast32(0x10101010, Z28)
	} else {
		bcast32(0x30303030, Z28)
	}
	// Index k of the table broadcasts lane k.
	idx := make([]uint32, 256)
	for i := range idx {
		idx[i] = uint32(i / 16)
	}
	bidx := dwordsTable("bcastLane", idx)
	zeroAcc(vnni, 8)
	// scaleOf broadcasts the scale in lane i of Z18 to dst.
	scaleOf := func(i int, dst Register) {
		c.VMOVDQU32(bidx.Offset(64*i), Z25)
		c.VPERMPS(Z18, Z25, dst)
	}
	// addSums adds sub-block sums s (Z(8+2k) and Z(9+2k), the panel's two
	// halves of columns) as floats times their column's y.d (Z16, Z17)
	// and the scale in Z19 to row r's accumulators; then more(h).
	addSums := func(r, k int, more func(h int)) {
		for h := 0; h < 2; h++ {
			f := []Register{Z23, Z24}[h]
			c.VCVTDQ2PS(zr(8+2*k+h), f)
			c.VMULPS(zr(16+h), f, f)
			c.VFMADD231PS(Z19, f, zr(2*r+h))
			more(h)
		}
	}
	// dots adds sub-block bytes v times the panel's activations at sb to
	// the sums Z(8+2k), Z(9+2k).
	dots := func(sb int, v Register, k int) {
		VPDPBUSD(mem(RDI, sb), v, zr(8+2*k))
		VPDPBUSD(mem(RDI, sb+64), v, zr(9+2*k))
	}
	// halfScales multiplies the scales in Z18 by d (at m, widened from Y23
	// by bcast).
	halfScales := func(bcast func(...Op), m Mem) {
		bcast(m, Y23)
		c.VCVTPH2PS(Y23, Z23)
		c.VMULPS(Z23, Z18, Z18)
	}

	label("loop")
	c.VMOVUPS(mem(RDI, pan.dx()), Z16)
	c.VMOVUPS(mem(RDI, pan.dx()+64), Z17)
	for r := range tileRowRegs {
		l.scales(r)
		c.VCVTDQ2PS(Z18, Z18)
		if t.six {
			// d·sc_j: the sixteen int8 scales times the fp16 d.
			halfScales(c.VPBROADCASTW, l.at(r, 208))
		} else {
			// (d·sc_j, dmin·m_j) pairs: the unpacked scales and mins
			// interleaved, times (d, dmin) repeated.
			halfScales(c.VPBROADCASTD, l.at(r, 0))
		}
		if t.six {
			// Per half and half of its quarters' 32 elements, the four
			// sub-blocks 8h+2q+lh (q the quarter) together: each group
			// of four elements broadcasts two ql dwords and one qh dword
			// for all four.
			for h := 0; h < 2; h++ {
				for lh := 0; lh < 2; lh++ {
					for q := 0; q < 4; q++ {
						// Seeds: -32·Σy of each sub-block, exact.
						tOff := (8*h+2*q+lh)*pan.subBytes() + pan.groups()*128
						c.VMOVDQU32(mem(RDI, tOff), zr(8+2*q))
						c.VMOVDQU32(mem(RDI, tOff+64), zr(9+2*q))
					}
					for g := 0; g < 4; g++ {
						ql := 16*lh + 4*g
						c.VPBROADCASTD(l.at(r, 64*h+ql), Z21)
						c.VPBROADCASTD(l.at(r, 64*h+32+ql), Z22)
						c.VPBROADCASTD(l.at(r, 128+32*h+ql), Z26)
						for q := 0; q < 4; q++ {
							v := q6Quarter(q, Z21, Z22, Z26)
							j := 8*h + 2*q + lh
							dots(j*pan.subBytes()+128*g, v, q)
						}
					}
					for q := 0; q < 4; q++ {
						scaleOf(8*h+2*q+lh, Z19)
						addSums(r, q, func(int) {})
					}
				}
			}
			continue
		}
		// Q4_K: sub-blocks 2jj and 2jj+1 are the low and high nibbles of
		// the same 32 bytes, so each broadcast group serves both; Q5_K
		// adds bits 2jj and 2jj+1 of the group's qh bytes as bit 4.
		for jj := 0; jj < 4; jj++ {
			for i := 8; i < 12; i++ {
				c.VPXORD(zr(i), zr(i), zr(i))
			}
			for g := 0; g < 8; g++ {
				c.VPBROADCASTD(l.at(r, t.qs+32*jj+4*g), Z21)
				c.VPANDD(Z30, Z21, Z22)
				c.VPSRLD(U8(4), Z21, Z21)
				c.VPANDD(Z30, Z21, Z21)
				if t.hbits {
					c.VPBROADCASTD(l.at(r, 16+4*g), Z26)
					for k, v := range []Register{Z22, Z21} {
						c.VPTERNLOGD(U8(0xF8), Z28, shiftTo4(Z26, 2*jj+k, Z29), v)
					}
				}
				for k, v := range []Register{Z22, Z21} {
					dots((2*jj+k)*pan.subBytes()+128*g, v, k)
				}
			}
			for k := 0; k < 2; k++ {
				j := 2*jj + k
				tOff := j*pan.subBytes() + pan.groups()*128
				scaleOf(2*j, Z19)
				scaleOf(2*j+1, Z20)
				addSums(r, k, func(h int) {
					// Less dmin·m_j times the sub-block's Σy.
					c.VFNMADD231PS(mem(RDI, tOff+64*h), Z20, zr(2*r+h))
				})
			}
		}
	}
	l.next()
	gemmEnd(pan.bytes(), gemmStore, res)
}

// q6Quarter leaves in Z27 the unsigned 6-bit values of quarter q of a
// Q6_K half for four elements, broadcast: the low (q < 2) or high nibbles
// of ql0 (even q) or ql1 (odd q), and bits 2q, 2q+1 of qh moved to bits
// 4-5 (Z29 scratch).
func q6Quarter(q int, ql0, ql1, qh Register) Register {
	lo := []Register{ql0, ql1}[q&1]
	if q >= 2 {
		c.VPSRLD(U8(4), lo, Z24)
		lo = Z24
	}
	switch s := 4 - 2*q; {
	case s > 0:
		c.VPSLLD(U8(s), qh, Z29)
	case s < 0:
		c.VPSRLD(U8(-s), qh, Z29)
	default:
		c.VMOVDQA32(qh, Z29)
	}
	c.VPANDD(Z28, Z29, Z27)
	c.VPTERNLOGD(U8(0xF8), Z30, lo, Z27)
	return Z27
}

// shiftTo4 returns src with bit b of each byte moved to bit 4 (the other
// bits are garbage): src itself when b is 4, else tmp.
func shiftTo4(src Register, b int, tmp Register) Register {
	switch s := 4 - b; {
	case s > 0:
		c.VPSLLD(U8(s), src, tmp)
	case s < 0:
		c.VPSRLD(U8(-s), src, tmp)
	default:
		return src
	}
	return tmp
}
