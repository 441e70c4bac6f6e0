package main

import (
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
// builds up in one register over eight VPDPBUSD, and the float work —
// convert, d_x·s − bias·d_x·Σy (one VFMSUB with the panel's floats), and
// an FMA with d_w — is done once per block, row and 16 columns rather than
// once per block and (row, column). Each unpacked group serves 32 columns.
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
func gemmBlock(t *blockType) {
	text(gemmName(t), 0, gemmSig)
	res := c.AllocLocal(32 * 4 * 4) // the tile, column by column (4 floats)
	tileRows()
	c.Load(c.Param("p"), RDI)
	c.Load(c.Param("nb"), RCX)
	if t.nibble {
		bcast32(0x0F0F0F0F, Z30)
	} else {
		bcast32(0x80808080, Z30)
	}
	zeroAcc(vnni, 8)

	label("loop")
	c.VMOVUPS(mem(RDI, 1024), Z16)
	c.VMOVUPS(mem(RDI, 1088), Z17)
	for r, row := range tileRowRegs {
		i0, i1 := zr(8+2*r), zr(9+2*r)
		c.VPXORD(i0, i0, i0)
		c.VPXORD(i1, i1, i1)
		for g := 0; g < 8; g++ {
			u := zr(19 + g%4)
			switch {
			case !t.nibble:
				c.VPBROADCASTD(mem(row, t.qw+4*g), u)
				c.VPXORD(Z30, u, u)
			case g < 4:
				c.VPBROADCASTD(mem(row, t.qw+4*g), u)
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
		c.VPBROADCASTW(mem(row, 0), Y18)
		c.VCVTPH2PS(Y18, Z18)
		for h := 0; h < 2; h++ {
			i, f := zr(8+2*r+h), []Register{Z23, Z24}[h]
			c.VCVTDQ2PS(i, f)
			c.VFMSUB213PS(mem(RDI, 1152+64*h), zr(16+h), f)
			c.VFMADD231PS(Z18, f, zr(2*r+h))
		}
	}
	nextRows(t.wb)
	c.ADDQ(U32(gemmPanelBlock), RDI)
	c.DECQ(RCX)
	c.JNZ(ref("loop"))

	gemmStore(res)
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
	c.Load(c.Param("out"), R12)
	c.Load(c.Param("outStride"), R13)
	c.SHLQ(U8(2), R13)
	c.Load(c.Param("cols"), RCX)
	c.LEAQ(res, RAX)
	label("store")
	c.VMOVUPS(mem(RAX, 0), X0)
	c.VMOVUPS(X0, mem(R12, 0))
	c.ADDQ(U8(16), RAX)
	c.ADDQ(R13, R12)
	c.DECQ(RCX)
	c.JNZ(ref("store"))
}
