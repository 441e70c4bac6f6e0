package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Kernels of Q4_0's X8 layout (quant's x8.go): weight rows repacked eight
// at a time at load, so decode reads one sequential stream per thread,
// as the row kernels do, while the eight rows' integer sums of a block
// land in the eight dword lanes of one register: a block's conversion,
// scale load and FMAs serve eight rows, not one.
//
//	rowQ4_0X8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// sets out[8g+r] = row 8g+r · x for g < groups, over nb blocks (a positive
// multiple of 8, at most rowMaxBlocks) of Q8_0 activations x. As the row
// kernels do, it first writes d_x and d_x·Σy of every activation block to
// its frame (rowPre), the latter times 8, Q4_0's bias.
//
// Per block and group: the four 32-byte chunks of codes, each split into
// low and high nibbles (VPSRLW, two VPANDs), VPDPBUSD against the
// activation dwords they face (broadcast from x), four partial sums added,
// converted, (Σc·y)·d_x − 8·d_x·Σy in one FMA, and an FMA with the rows'
// eight scales (VCVTPH2PS straight from the block column).
//
// Registers: Y0 the eight rows' sums, Y1-Y4 the chunks' low nibbles, Y5-Y8
// their high ones, Y9-Y12 activation dwords, Y14 8.0, Y15 the 0x0F mask,
// Y16-Y19 the chunks' integer sums, Y20-Y22 the block's factors. General:
// SI the group's block column, DI the activations, R8 the factors, CX
// blocks left, R9 groups left, R12 out, BX x, DX the factors' start, R13 nb.

// x8BlockBytes is the size of a Q4_0 X8 block column: eight scales and
// eight rows' 16 code bytes.
const x8BlockBytes = 8 * 18

func rowX8Name(pfDist int) string {
	if pfDist > 0 {
		return fmt.Sprintf("rowQ4_0X8VNNINTA%d", pfDist)
	}
	return "rowQ4_0X8VNNI"
}

// rowQ4_0X8 emits the decode kernel, with non-temporal prefetch pfDist
// bytes ahead (0: none).
func rowQ4_0X8(pfDist int) {
	t := blockQ4_0
	text(rowX8Name(pfDist), 0, "func(w *byte, groups int, x *byte, nb int, out *float32)")
	pre := c.AllocLocal(8 * rowMaxBlocks)
	loadArgs("x nb", RBX, R13)
	c.LEAQ(pre, RDX)
	rowPre(t)
	// d_x·Σy times the bias, 8, exactly.
	c.MOVL(U32(0x41000000), EAX)
	c.VPBROADCASTD(EAX, Y14)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	label("bias")
	c.VMULPS(mem(R8, 32), Y14, Y1)
	c.VMOVUPS(Y1, mem(R8, 32))
	c.ADDQ(U8(64), R8)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("bias"))

	loadArgs("w groups out", RSI, R9, R12)
	c.MOVL(U32(0x0F0F0F0F), EAX)
	c.VPBROADCASTD(EAX, Y15)
	label("group")
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	zero(Y0)
	label("loop")
	for b := 0; b < 8; b++ {
		if pfDist > 0 {
			for off := 0; off < x8BlockBytes; off += 64 {
				c.PREFETCHNTA(mem(RSI, pfDist+off))
			}
		}
		for ch := 0; ch < 4; ch++ {
			lo, hi, acc := yr(1+ch), yr(5+ch), yr(16+ch)
			c.VMOVDQU(mem(RSI, 16+32*ch), lo)
			c.VPSRLW(U8(4), lo, hi)
			c.VPAND(Y15, lo, lo)
			c.VPAND(Y15, hi, hi)
			xl, xh := yr(9+ch%2*2), yr(10+ch%2*2)
			c.VPBROADCASTD(mem(RDI, t.qx+4*ch), xl)
			c.VPBROADCASTD(mem(RDI, t.qx+16+4*ch), xh)
			zero(acc)
			VPDPBUSD(xl, lo, acc)
			VPDPBUSD(xh, hi, acc)
		}
		c.VPADDD(Y17, Y16, Y16)
		c.VPADDD(Y19, Y18, Y18)
		c.VPADDD(Y18, Y16, Y16)
		c.VCVTDQ2PS(Y16, Y16)
		c.VBROADCASTSS(mem(R8, 4*b), Y20)
		c.VBROADCASTSS(mem(R8, 32+4*b), Y21)
		c.VFMSUB213PS(Y21, Y20, Y16) // (Σc·y)·d_x − 8·d_x·Σy
		c.VCVTPH2PS(mem(RSI, 0), Y22)
		c.VFMADD231PS(Y22, Y16, Y0)
		c.ADDQ(U32(x8BlockBytes), RSI)
		c.ADDQ(U8(uint8(t.xb)), RDI)
	}
	c.ADDQ(U8(64), R8)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
	c.VMOVUPS(Y0, mem(R12, 0))
	c.ADDQ(U8(32), R12)
	c.DECQ(R9)
	c.JNZ(ref("group"))
	retVoid()
}

// x8Kernels emits Q4_0's X8 kernels: decode with and without prefetch,
// and the GEMM of rows 0-3 and 4-7 of a group.
func x8Kernels() {
	rowQ4_0X8(0)
	rowQ4_0X8(4096)
	gemmBlockOf(blockQ4_0, x8Layout(0))
	gemmBlockOf(blockQ4_0, x8Layout(4))
}
