package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// AVX2 GEMM kernels: one weight row against a packed panel (the layout of
// gemm.go), 32 columns in four Y registers of eight. Without VPDPBUSD,
// VPMADDUBSW multiplies a broadcast group of four unsigned weight bytes by
// each column's four activation bytes and adds them in pairs to words;
// Q4_0's and Q4_K's nibbles are small enough (15·127·2 per pair) for a
// block's eight groups to add up in words, which VPMADDWD then turns into
// dwords once per block, which then add the panel's -bias·Σy. Q8_0 takes
// |w| and the activations with w's signs (VPSIGNB), so its panel has no
// bias term, and goes to dwords per group.
//
//	gemm<T>AVX2(w *byte, wStride int, p *byte, nb int, out *float32, outStride int, cols int)
//
// is gemmSig with one row: out[c*outStride] for c < cols.
//
// As the AVX-512 kernels do, each has a loop per panel width (32, 16 or 8
// columns: four, two or one register of eight) and runs the narrowest that
// holds cols.
//
// Registers: Y0-Y3 accumulators (columns 8k..8k+7 in Yk), Y4-Y7 integer
// sums, Y8 a broadcast group, Y9 scratch, Y10/Y11 scratch, Y14 d_w (or
// Q4_K's factors), Y15 bytes 0x0F. General: SI the row, DI the panel, CX
// blocks left.

func gemmAVX2Name(name string) string { return "gemm" + name + "AVX2" }

// gemmAVX2Begin opens the AVX2 GEMM kernel over layout l (its name and
// its row from l.init) with local bytes of frame (res) and the table of
// 16-bit ones: p and nb in RDI and RCX, the low-nibble mask in Y15, the
// four accumulators zeroed.
func gemmAVX2Begin(l gemmLayout, local int) (res, ones Mem) {
	text(l.name, 0, gemmSig)
	res = c.AllocLocal(local)
	ones = table("words1", 0x0001000100010001, 0x0001000100010001, 0x0001000100010001, 0x0001000100010001)
	l.init()
	loadArgs("p nb", RDI, RCX)
	bcast32(0x0F0F0F0F, Y15)
	zeroAcc(avx2, 4)
	gemmWidthSwitch(gemmAVX2Widths)
	return res, ones
}

// gemmAVX2Widths are the AVX2 kernels' loop widths: with eight columns a
// register, a narrower loop would save nothing.
var gemmAVX2Widths = []gemmWidth{32, 16, 8}

// regs is the Y registers of eight columns the width takes.
func (w gemmWidth) regs() int { return int(w) / 8 }

// gemmBlockAVX2 emits the AVX2 GEMM kernel of Q4_0 or Q8_0.
func gemmBlockAVX2(t *blockType) {
	gemmBlockAVX2Of(t, inPlace(gemmAVX2Name(t.name), t.wb))
}

// gemmBlockAVX2Of emits the AVX2 GEMM kernel of Q4_0 or Q8_0 over the
// layout l of its one row (l.at's r is 0).
func gemmBlockAVX2Of(t *blockType, l gemmLayout) {
	res, ones := gemmAVX2Begin(l, 32*4)
	for _, w := range gemmAVX2Widths {
		gemmBlockAVX2Loop(t, l, w, res, ones)
	}
}

// gemmBlockAVX2Loop emits gemmBlockAVX2Of's loop and store for panels of
// width w.
func gemmBlockAVX2Loop(t *blockType, l gemmLayout, w gemmWidth, res, ones Mem) {
	label("w" + w.sfx())
	label("loop" + w.sfx())
	for k := 0; k < w.regs(); k++ {
		zero(yr(4 + k))
	}
	for g := 0; g < 8; g++ {
		if t.nibble {
			c.VPBROADCASTD(l.at(0, t.qw+4*(g%4)), Y8)
			if g >= 4 {
				c.VPSRLW(U8(4), Y8, Y8)
			}
			c.VPAND(Y15, Y8, Y8)
			for k := 0; k < w.regs(); k++ {
				c.VPMADDUBSW(mem(RDI, 128*g+32*k), Y8, Y9)
				c.VPADDW(Y9, yr(4+k), yr(4+k))
			}
			continue
		}
		c.VPBROADCASTD(l.at(0, t.qw+4*g), Y8)
		c.VPSIGNB(Y8, Y8, Y10)
		for k := 0; k < w.regs(); k++ {
			c.VMOVDQU(mem(RDI, 128*g+32*k), Y9)
			c.VPSIGNB(Y8, Y9, Y9)
			c.VPMADDUBSW(Y9, Y10, Y9)
			c.VPMADDWD(ones, Y9, Y9)
			c.VPADDD(Y9, yr(4+k), yr(4+k))
		}
	}
	c.VPBROADCASTW(l.at(0, 0), X14)
	c.VCVTPH2PS(X14, Y14)
	for k := 0; k < w.regs(); k++ {
		i := yr(4 + k)
		if t.nibble {
			c.VPMADDWD(ones, i, i)
			c.VPADDD(mem(RDI, 1152+32*k), i, i)
		}
		c.VCVTDQ2PS(i, i)
		c.VMULPS(mem(RDI, 1024+32*k), Y14, Y9)
		c.VFMADD231PS(Y9, i, yr(k))
	}
	l.next()
	gemmEnd(gemmPanelBlock, func(res Mem) { gemmStoreRow(res, w) }, res, w.sfx())
}

// gemmStoreRow stores the w sums in Y0-Y3 to the frame and copies cols
// of them to out, outStride apart.
func gemmStoreRow(res Mem, w gemmWidth) {
	for k := 0; k < w.regs(); k++ {
		c.VMOVUPS(yr(k), res.Offset(32*k))
	}
	gemmCopyOut(res, 4, func(src, dst Op) { c.VMOVSS(src, dst) }, w.sfx())
}

// gemmQ4_KAVX2: per super-block the row's factors d·sc_j and dmin·m_j go
// to the frame (sixteen floats, at fac), which VBROADCASTSS reads per
// sub-block; the two sub-blocks of a 32-byte chunk share its broadcast
// groups, their word sums in Y4-Y7 and Y10-Y13... which AVX2's sixteen
// registers do not hold, so a chunk's sub-blocks are taken one after the
// other.
func gemmQ4_KAVX2() {
	t := superQ4_K
	l := inPlace(gemmAVX2Name(t.name), t.wb)
	l.scales = func(int) {
		m := func(name string, b byte) Mem { return table(name, uint64(b)*0x0101010101010101) }
		kScales(RSI, X8, RAX, RDX, R10, R11, m("m3f", 0x3F), m("m03", 0x03), m("m0f", 0x0F))
	}
	gemmQ4_KAVX2Of(l)
}

// gemmQ4_KAVX2Of emits the AVX2 GEMM kernel of Q4_K over the layout l of
// its one row, whose scales leave the bytes sc_0..7, m_0..7 in X8.
func gemmQ4_KAVX2Of(l gemmLayout) {
	res, ones := gemmAVX2Begin(l, 32*4+64)
	for _, w := range gemmAVX2Widths {
		gemmQ4_KAVX2Loop(l, w, res, ones)
	}
}

// gemmQ4_KAVX2Loop emits gemmQ4_KAVX2Of's loop and store for panels of
// width w.
func gemmQ4_KAVX2Loop(l gemmLayout, w gemmWidth, res, ones Mem) {
	pan := kPanel{32}
	fac := res.Offset(32 * 4)
	label("w" + w.sfx())
	label("loop" + w.sfx())
	// Factors: bytes sc_0..7, m_0..7 → floats times d, dmin.
	l.scales(0)
	c.VPMOVZXBD(X8, Y9)
	c.VPSRLDQ(U8(8), X8, X8)
	c.VPMOVZXBD(X8, Y10)
	c.VCVTDQ2PS(Y9, Y9)
	c.VCVTDQ2PS(Y10, Y10)
	c.VPBROADCASTW(l.at(0, 0), X11)
	c.VCVTPH2PS(X11, Y11)
	c.VMULPS(Y11, Y9, Y9)
	c.VPBROADCASTW(l.at(0, 2), X11)
	c.VCVTPH2PS(X11, Y11)
	c.VMULPS(Y11, Y10, Y10)
	c.VMOVUPS(Y9, fac)
	c.VMOVUPS(Y10, fac.Offset(32))
	for j := 0; j < 8; j++ {
		sb := j * pan.subBytes()
		for k := 0; k < w.regs(); k++ {
			zero(yr(4 + k))
		}
		for g := 0; g < 8; g++ {
			c.VPBROADCASTD(l.at(0, 16+32*(j/2)+4*g), Y8)
			if j%2 == 1 {
				c.VPSRLW(U8(4), Y8, Y8)
			}
			c.VPAND(Y15, Y8, Y8)
			for k := 0; k < w.regs(); k++ {
				c.VPMADDUBSW(mem(RDI, sb+128*g+32*k), Y8, Y9)
				c.VPADDW(Y9, yr(4+k), yr(4+k))
			}
		}
		c.VBROADCASTSS(fac.Offset(4*j), Y14)
		c.VBROADCASTSS(fac.Offset(32+4*j), Y13)
		tOff := sb + 8*128
		for k := 0; k < w.regs(); k++ {
			i := yr(4 + k)
			c.VPMADDWD(ones, i, i)
			c.VCVTDQ2PS(i, i)
			c.VMULPS(mem(RDI, pan.dx()+32*k), i, i)
			c.VFMADD231PS(Y14, i, yr(k))
			c.VMOVUPS(mem(RDI, tOff+32*k), Y12)
			c.VFNMADD231PS(Y13, Y12, yr(k))
		}
	}
	l.next()
	gemmEnd(pan.bytes(), func(res Mem) { gemmStoreRow(res, w) }, res, w.sfx())
}

// x8AVX2Layout is one row of a group of Q4_0's or Q8_0's X8
// layout (quant's x8.go) for the AVX2 GEMM kernels, the row r < 8 given
// at run time in the wStride argument: SI at the group plus 4r (the
// row's dword of each 32-byte chunk of codes), BX at the group plus
// scale·r (the row's F16 scale), both advanced a block column of column
// bytes at a time. at maps an offset of the row layout's block to SI or
// BX.
func x8AVX2Layout(name string, column int, scale uint8, at func(off int) Mem) gemmLayout {
	return gemmLayout{
		name: "gemm" + name + "X8AVX2",
		init: func() {
			loadArgs("w wStride", RBX, RAX)
			c.LEAQ(memx(RBX, 0, RAX, 4), RSI)
			c.LEAQ(memx(RBX, 0, RAX, scale), RBX)
		},
		at: func(_, off int) Mem { return at(off) },
		next: func() {
			c.ADDQ(U32(column), RSI)
			c.ADDQ(U32(column), RBX)
		},
	}
}

// gemmBlockX8AVX2 emits the AVX2 GEMM kernel of one row of a Q4_0 or
// Q8_0 X8 group.
func gemmBlockX8AVX2(t *blockType) {
	gemmBlockAVX2Of(t, x8AVX2Layout(t.name, 8*t.wb, 2, func(off int) Mem {
		if off == 0 {
			return mem(RBX, 0)
		}
		// Code bytes off-2.. of the block are dword (off-2)/4.
		return mem(RSI, 16+32*((off-2)/4))
	}))
}
