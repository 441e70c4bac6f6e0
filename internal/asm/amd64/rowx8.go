package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Row kernels over Q4_0 repacked eight rows at a time (quant's q4_0x8.go
// has the layout): one sequential stream per thread, as the row kernels
// read, but the eight rows' integer sums land in the eight dword lanes of
// one register, so a block costs one conversion, one F16 scale load and
// two FMAs for eight rows, not for one.
//
//	rowQ4_0x8VNNI[NTA<d>](w *byte, groups int, xq *byte, pre *float32, nb int, out *float32)
//
// sets out[8g+r] = row 8g+r · x for g < groups, over nb blocks; xq holds
// the activations' 32 quants per block, pre per block d_x and 8·d_x·Σy.
//
// Registers: Y0 the eight rows' sums, Y1-Y4 the low nibbles of chunks 0-3,
// Y5-Y8 the high ones, Y9-Y12 the activation dwords, Y15 the 0x0F mask,
// Y16-Y19 the chunks' integer sums, Y20-Y22 the block's scales.
func rowQ4_0x8(pfDist int) {
	name := "rowQ4_0x8VNNI"
	if pfDist > 0 {
		name += fmt.Sprintf("NTA%d", pfDist)
	}
	text(name, NOSPLIT, "func(w *byte, groups int, xq *byte, pre *float32, nb int, out *float32)")
	c.Load(c.Param("w"), RSI)
	c.Load(c.Param("groups"), R9)
	c.Load(c.Param("xq"), RBX)
	c.Load(c.Param("pre"), RDX)
	c.Load(c.Param("nb"), R13)
	c.Load(c.Param("out"), R12)
	c.MOVL(U32(0x0F0F0F0F), EAX)
	c.VPBROADCASTD(EAX, Y15)
	label("group")
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	zero(Y0)
	label("block")
	if pfDist > 0 {
		for off := 0; off < 144; off += 64 {
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
		c.VPBROADCASTD(mem(RDI, 4*ch), xl)
		c.VPBROADCASTD(mem(RDI, 16+4*ch), xh)
		zero(acc)
		VPDPBUSD(xl, lo, acc)
		VPDPBUSD(xh, hi, acc)
	}
	c.VPADDD(Y17, Y16, Y16)
	c.VPADDD(Y19, Y18, Y18)
	c.VPADDD(Y18, Y16, Y16)
	c.VCVTDQ2PS(Y16, Y16)
	c.VBROADCASTSS(mem(R8, 0), Y20)
	c.VBROADCASTSS(mem(R8, 4), Y21)
	c.VFMSUB213PS(Y21, Y20, Y16) // Σ c·y·d_x − 8·d_x·Σy
	c.VCVTPH2PS(mem(RSI, 0), Y22)
	c.VFMADD231PS(Y22, Y16, Y0)
	c.ADDQ(U32(144), RSI)
	c.ADDQ(U8(32), RDI)
	c.ADDQ(U8(8), R8)
	c.DECQ(RCX)
	c.JNZ(ref("block"))
	c.VMOVUPS(Y0, mem(R12, 0))
	c.ADDQ(U8(32), R12)
	c.DECQ(R9)
	c.JNZ(ref("group"))
	retVoid()
}
