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

// A GEMM kernel has one loop per panel width and runs the narrowest that
// holds cols columns: a prompt of a few tokens, or the last panel of a
// batch, computes only the columns it has, not 32 (issue 11). Narrow
// loops read the first width columns of the same panel (a column's bytes
// sit at 4c in every field of it, so any prefix is a panel of its own)
// and take half-width registers below 16 columns, which cost half a
// 512-bit operation on cores that split those; every lane does what it
// does in the 32-column loop, so the results are the same bits.
type gemmWidth int

// gemmWidths are the loops' column counts, widest first.
var gemmWidths = []gemmWidth{32, 16, 8, 4}

// halves is the 16-column halves of the panel the loop reads with one
// register each.
func (w gemmWidth) halves() int { return max(1, int(w)/16) }

// v is register r at the loop's width: Z from 16 columns, Y for 8, X for
// 4.
func (w gemmWidth) v(r Register) VecPhysical {
	switch w {
	case 8:
		return asY(r)
	case 4:
		return asX(r)
	}
	return asZ(r)
}

// half is register r at half the loop's width (at least X): what
// VCVTPH2PS widens from.
func (w gemmWidth) half(r Register) VecPhysical {
	if w >= 16 {
		return asY(r)
	}
	return asX(r)
}

// sfx names the loop's labels.
func (w gemmWidth) sfx() string { return fmt.Sprint(int(w)) }

// gemmWidthSwitch jumps to the loop of the narrowest of widths (widest
// first) that holds the cols argument (≥ 1), at label "w<width>"; the
// widest loop follows it.
func gemmWidthSwitch(widths []gemmWidth) {
	c.Load(c.Param("cols"), RAX)
	for i := len(widths) - 1; i > 0; i-- {
		w := widths[i]
		c.CMPQ(RAX, U8(int(w)))
		c.JLE(ref("w" + w.sfx()))
	}
}

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

// gemmKernel emits a GEMM kernel over layout l: the frame for the tile
// (column by column, 4 floats each), the arguments, the constants consts
// loads, then the dispatch on the panel width and, per width, the loop
// and store loop emits.
func gemmKernel(l gemmLayout, consts func(), loop func(w gemmWidth, res Mem)) {
	text(l.name, 0, gemmSig)
	res := c.AllocLocal(32 * 4 * 4)
	l.init()
	loadArgs("p nb", RDI, RCX)
	consts()
	gemmWidthSwitch(gemmWidths)
	for _, w := range gemmWidths {
		loop(w, res)
	}
}

// gemmBlockOf emits the GEMM kernel of Q4_0 or Q8_0 over layout l. Z30
// holds the nibble mask, or Q8_0's bytes 0x80 that make codes unsigned.
func gemmBlockOf(t *blockType, l gemmLayout) {
	z30 := uint32(0x80808080)
	if t.nibble {
		z30 = 0x0F0F0F0F
	}
	gemmKernel(l, func() { bcast32(z30, Z30) },
		func(w gemmWidth, res Mem) { gemmBlockLoop(t, l, w, res) })
}

// gemmBlockLoop emits gemmBlockOf's loop and store for panels of width w.
func gemmBlockLoop(t *blockType, l gemmLayout, w gemmWidth, res Mem) {
	v := w.v
	label("w" + w.sfx())
	zeroAcc(vnni, 8)
	label("loop" + w.sfx())
	for h := 0; h < w.halves(); h++ {
		c.VMOVUPS(mem(RDI, 1024+64*h), v(zr(16+h)))
	}
	for r := range tileRowRegs {
		// The integer sums start at -bias·Σy, exact.
		for h := 0; h < w.halves(); h++ {
			c.VMOVDQU32(mem(RDI, 1152+64*h), v(zr(8+2*r+h)))
		}
		for g := 0; g < 8; g++ {
			u := v(zr(19 + g%4))
			switch {
			case !t.nibble:
				c.VPBROADCASTD(l.at(r, t.qw+4*g), u)
				c.VPXORD(v(Z30), u, u)
			case g < 4:
				c.VPBROADCASTD(l.at(r, t.qw+4*g), u)
				c.VPANDD(v(Z30), u, v(Z23))
				u = v(Z23)
			default:
				// The high nibbles of the dword broadcast for group g-4.
				c.VPSRLD(U8(4), u, u)
				c.VPANDD(v(Z30), u, u)
			}
			for h := 0; h < w.halves(); h++ {
				VPDPBUSD(mem(RDI, 128*g+64*h), u, v(zr(8+2*r+h)))
			}
		}
		c.VPBROADCASTW(l.at(r, 0), w.half(Z18))
		c.VCVTPH2PS(w.half(Z18), v(Z18))
		for h := 0; h < w.halves(); h++ {
			// (d_w·d_x)·s, associated as the dot products do.
			i, f := v(zr(8+2*r+h)), v([]Register{Z23, Z24}[h])
			c.VCVTDQ2PS(i, i)
			c.VMULPS(v(zr(16+h)), v(Z18), f)
			c.VFMADD231PS(f, i, v(zr(2*r+h)))
		}
	}
	l.next()
	gemmEnd(gemmPanelBlock, func(res Mem) { gemmStoreWidth(res, w) }, res, w.sfx())
}

// gemmEnd closes a GEMM kernel's block loop (labels named with sfx), the
// panel advancing panel bytes a block, then stores the tile with store
// and returns.
func gemmEnd(panel int, store func(Mem), res Mem, sfx string) {
	c.ADDQ(U32(panel), RDI)
	decJNZ(RCX, "loop"+sfx)
	store(res)
	retVoid()
}

// gemmStoreWidth transposes the 4×w tile (row r, half h in Z(2r+h)) to
// the frame, four floats (rows 0-3) per column, and copies cols columns
// to out.
func gemmStoreWidth(res Mem, w gemmWidth) {
	v := w.v
	// Per half: unpack rows pairwise, then qwords, so that 128-bit lane
	// l of Z(20+k) holds column 4l+k's four rows.
	for h := 0; h < w.halves(); h++ {
		a, b, cc, d := v(zr(h)), v(zr(2+h)), v(zr(4+h)), v(zr(6+h))
		c.VUNPCKLPS(b, a, v(Z16))
		c.VUNPCKHPS(b, a, v(Z17))
		c.VUNPCKLPS(d, cc, v(Z18))
		c.VUNPCKHPS(d, cc, v(Z19))
		c.VUNPCKLPD(v(Z18), v(Z16), v(Z20))
		c.VUNPCKHPD(v(Z18), v(Z16), v(Z21))
		c.VUNPCKLPD(v(Z19), v(Z17), v(Z22))
		c.VUNPCKHPD(v(Z19), v(Z17), v(Z23))
		for k := 0; k < 4; k++ {
			for l := 0; l < min(4, int(w)/4); l++ {
				col := 16*h + 4*l + k
				if w == 4 {
					c.VMOVUPS(asX(zr(20+k)), res.Offset(16*col))
					continue
				}
				c.VEXTRACTF32X4(U8(l), v(zr(20+k)), res.Offset(16*col))
			}
		}
	}
	gemmCopyOut(res, 16, func(src, dst Op) { c.VMOVUPS(src, dst) }, w.sfx())
}

// gemmCopyOut copies cols results of size bytes each, packed in the frame
// at res, to out, outStride floats apart, with move.
func gemmCopyOut(res Mem, size int, move func(src, dst Op), sfx string) {
	loadArgs("out outStride", R12, R13)
	c.SHLQ(U8(2), R13)
	c.Load(c.Param("cols"), RCX)
	c.LEAQ(res, RAX)
	label("store" + sfx)
	move(mem(RAX, 0), X0)
	move(X0, mem(R12, 0))
	c.ADDQ(U8(size), RAX)
	c.ADDQ(R13, R12)
	decJNZ(RCX, "store"+sfx)
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

// bytes is a panel super-block's size: Q4_K's (sub 32) ends with its Σy
// pairs (gemmx8k.go), four fields of 128 bytes.
func (p kPanel) bytes() int {
	if p.sub == 32 {
		return p.dx() + 128 + 4*128
	}
	return p.dx() + 128
}

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

// gemmSuperOf emits the GEMM kernel of Q4_K, Q5_K or Q6_K over layout l.
// Z30 holds the nibble mask, Z28 Q5_K's fifth bit or Q6_K's high bits.
func gemmSuperOf(t *superType, l gemmLayout) {
	z28 := uint32(0x30303030)
	if t.hbits {
		z28 = 0x10101010
	}
	gemmKernel(l, func() { bcast32(0x0F0F0F0F, Z30); bcast32(z28, Z28) },
		func(w gemmWidth, res Mem) { gemmSuperLoop(t, l, w, res) })
}

// gemmSuperLoop emits gemmSuperOf's loop and store for panels of width w.
func gemmSuperLoop(t *superType, l gemmLayout, w gemmWidth, res Mem) {
	v := w.v
	pan := kPanel{32}
	if t.six {
		pan = kPanel{16}
	}
	// Index k of the table broadcasts lane k.
	idx := make([]uint32, 256)
	for i := range idx {
		idx[i] = uint32(i / 16)
	}
	bidx := dwordsTable("bcastLane", idx)
	label("w" + w.sfx())
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
		for h := 0; h < w.halves(); h++ {
			f := v([]Register{Z23, Z24}[h])
			c.VCVTDQ2PS(v(zr(8+2*k+h)), f)
			c.VMULPS(v(zr(16+h)), f, f)
			c.VFMADD231PS(v(Z19), f, v(zr(2*r+h)))
			more(h)
		}
	}
	// dots adds sub-block bytes u times the panel's activations at sb to
	// the sums Z(8+2k), Z(9+2k).
	dots := func(sb int, u Register, k int) {
		for h := 0; h < w.halves(); h++ {
			VPDPBUSD(mem(RDI, sb+64*h), v(u), v(zr(8+2*k+h)))
		}
	}
	// halfScales multiplies the scales in Z18 by d (at m, widened from Y23
	// by bcast).
	halfScales := func(bcast func(...Op), m Mem) {
		bcast(m, Y23)
		c.VCVTPH2PS(Y23, Z23)
		c.VMULPS(Z23, Z18, Z18)
	}

	label("loop" + w.sfx())
	for h := 0; h < w.halves(); h++ {
		c.VMOVUPS(mem(RDI, pan.dx()+64*h), v(zr(16+h)))
	}
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
						for hh := 0; hh < w.halves(); hh++ {
							c.VMOVDQU32(mem(RDI, tOff+64*hh), v(zr(8+2*q+hh)))
						}
					}
					for g := 0; g < 4; g++ {
						ql := 16*lh + 4*g
						c.VPBROADCASTD(l.at(r, 64*h+ql), v(Z21))
						c.VPBROADCASTD(l.at(r, 64*h+32+ql), v(Z22))
						c.VPBROADCASTD(l.at(r, 128+32*h+ql), v(Z26))
						for q := 0; q < 4; q++ {
							u := q6QuarterAt(q, Z21, Z22, Z26, v)
							j := 8*h + 2*q + lh
							dots(j*pan.subBytes()+128*g, u, q)
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
			for k := 0; k < 2; k++ {
				for h := 0; h < w.halves(); h++ {
					i := v(zr(8 + 2*k + h))
					c.VPXORD(i, i, i)
				}
			}
			for g := 0; g < 8; g++ {
				c.VPBROADCASTD(l.at(r, t.qs+32*jj+4*g), v(Z21))
				c.VPANDD(v(Z30), v(Z21), v(Z22))
				c.VPSRLD(U8(4), v(Z21), v(Z21))
				c.VPANDD(v(Z30), v(Z21), v(Z21))
				if t.hbits {
					c.VPBROADCASTD(l.at(r, 16+4*g), v(Z26))
					for k, u := range []Register{Z22, Z21} {
						c.VPTERNLOGD(U8(0xF8), v(Z28), shiftTo4(v(Z26), 2*jj+k, v(Z29)), v(u))
					}
				}
				for k, u := range []Register{Z22, Z21} {
					dots((2*jj+k)*pan.subBytes()+128*g, u, k)
				}
			}
			for k := 0; k < 2; k++ {
				j := 2*jj + k
				tOff := j*pan.subBytes() + pan.groups()*128
				scaleOf(2*j, Z19)
				scaleOf(2*j+1, Z20)
				addSums(r, k, func(h int) {
					// Less dmin·m_j times the sub-block's Σy.
					c.VFNMADD231PS(mem(RDI, tOff+64*h), v(Z20), v(zr(2*r+h)))
				})
			}
		}
	}
	l.next()
	gemmEnd(pan.bytes(), func(res Mem) { gemmStoreWidth(res, w) }, res, w.sfx())
}

// q6Quarter leaves in Z27 the unsigned 6-bit values of quarter q of a
// Q6_K half for four elements, broadcast: the low (q < 2) or high nibbles
// of ql0 (even q) or ql1 (odd q), and bits 2q, 2q+1 of qh moved to bits
// 4-5 (Z29 scratch).
func q6Quarter(q int, ql0, ql1, qh Register) Register {
	return q6QuarterAt(q, ql0, ql1, qh, asZ)
}

// q6QuarterAt is q6Quarter on the registers' views v (Z, Y or X).
func q6QuarterAt(q int, ql0, ql1, qh Register, v func(Register) VecPhysical) Register {
	lo := v([]Register{ql0, ql1}[q&1])
	if q >= 2 {
		c.VPSRLD(U8(4), lo, v(Z24))
		lo = v(Z24)
	}
	switch s := 4 - 2*q; {
	case s > 0:
		c.VPSLLD(U8(s), v(qh), v(Z29))
	case s < 0:
		c.VPSRLD(U8(-s), v(qh), v(Z29))
	default:
		c.VMOVDQA32(v(qh), v(Z29))
	}
	c.VPANDD(v(Z28), v(Z29), v(Z27))
	c.VPTERNLOGD(U8(0xF8), v(Z30), lo, v(Z27))
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
