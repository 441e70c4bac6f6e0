package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Row kernels: the matrix-vector product of decode, one weight row after
// the other. Rows of a matrix are adjacent in memory, so reading them one
// at a time is a single sequential stream, which the hardware prefetchers
// follow at full speed; the four-row tiles read four interleaved streams
// within the same pages, which on Zen 4 halves the bandwidth they reach
// (BenchmarkDecode). What the four-row tiles shared between rows — the
// activation blocks' scales and the -bias·Σy correction — is computed once
// per call instead, into the kernel's frame.
//
//	row<T><W>[<pf>](w *byte, wStride, rows int, x *byte, nb int, out *float32)
//
// sets out[r] = row r · x for r < rows, over nb blocks, nb a positive
// multiple of 8 and at most rowMaxBlocks.
//
// The work per block and row is four vector instructions in 256-bit
// registers (a 512-bit operation costs Zen 4 two): the weights as unsigned
// bytes facing the activation block (Q4_0: the sixteen nibble bytes
// broadcast to both halves and masked with 0x0F in the low half and 0xF0
// in the high one, so the high nibbles stay in place, sixteen times their
// value; Q8_0: the bytes xor 0x80), VPDPBUSD against the activation block
// in memory, VCVTDQ2PS, and an FMA with d_w·d_x broadcast from the frame.
// At the end of the row the high half is scaled by 1/16 (Q4_0), and
// bias·Σ_b d_w·d_x·Σy_b, a dot product of the row's scales with the
// precomputed d_x·Σy per block, is subtracted.
//
// Registers: Y0/Y1 accumulators (even, odd blocks), Y2 the correction's
// accumulator, Y3 the eight scales d_w, Y4 scratch, Z8/Z9 scale-gather
// scratch, Z10/Z11 its index tables, Y13 the 1/16 lane factors, Y14 the
// bias as a float, Y15 the weight mask (Q4_0) or 0x80 bytes (Q8_0),
// Y16-Y23 weights and Y24-Y31 integer sums of blocks 0-7. General: SI
// the row, DI the activations, R8 the precomputed factors, CX blocks
// left, R9 rows left, R10 wStride, R11 the row's start, R12 out, R13 nb,
// BX x, DX the precomputed factors' start.

// rowMaxBlocks bounds nb: the precomputed factors, 8 bytes per block, and
// the two-pass form's products, 4 bytes per block, live in the kernel's
// frame.
const rowMaxBlocks = 1024

// rowPrefetch is a software prefetch variant of the row kernels: dist
// bytes ahead of the row being read (0: none), into L1 (T0) or with the
// non-temporal hint (NTA).
//
// two selects the two-pass form: a first pass over the row's scales
// writes its d_w·d_x to the frame (and so brings the row into L1), and the
// second broadcasts each from there with the FMA, which saves the VPERMPS
// per block; a product stored in the same pass and read back at once
// stalls the loads, so the one-pass form spreads it from a register.
type rowPrefetch struct {
	dist int
	nta  bool
	two  bool
}

func (p rowPrefetch) suffix() string {
	s := ""
	if p.two {
		s = "2"
	}
	switch {
	case p.dist == 0:
		return s
	case p.nta:
		return s + fmt.Sprintf("NTA%d", p.dist)
	}
	return s + fmt.Sprintf("T0%d", p.dist)
}

// rowName is the name quant's tile_amd64.go knows a row kernel by.
func rowName(t *blockType, pf rowPrefetch) string {
	return "row" + t.name + "VNNI" + pf.suffix()
}

const rowSig = "func(w *byte, wStride int, rows int, x *byte, nb int, out *float32)"

// rowBlock emits the row kernel of a 32-element block type (Q4_0, Q8_0)
// against Q8_0 activations.
func rowBlock(t *blockType, pf rowPrefetch) {
	text(rowName(t, pf), 0, rowSig)
	frame := c.AllocLocal(12 * rowMaxBlocks)
	pre := frame                           // per eight blocks: d_x (8 floats), d_x·Σy (8)
	srow := frame.Offset(8 * rowMaxBlocks) // two passes: the row's d_w·d_x
	loadArgs("x nb", RBX, R13)
	c.LEAQ(pre, RDX)
	rowPre(t)

	loadArgs("w wStride rows out", R11, R10, R9, R12)
	scaleTables(t.wb, Z10, Z11)
	for b := 0; b < 8; b++ {
		c.MOVL(U32(b), EAX)
		c.VPBROADCASTD(EAX, yr(24+b))
	}
	if t.nibble {
		// Low half 0x0F, high half 0xF0; lanes 0-3 × 1, 4-7 × 1/16.
		c.MOVL(U32(0x0F0F0F0F), EAX)
		c.VPBROADCASTD(EAX, Y15)
		c.MOVL(U32(0xF0F0F0F0), EAX)
		c.VPBROADCASTD(EAX, Y4)
		c.VINSERTI32X4(U8(1), X4, Y15, Y15)
		c.MOVL(U32(0x3F800000), EAX)
		c.VPBROADCASTD(EAX, Y13)
		c.MOVL(U32(0x3D800000), EAX)
		c.VPBROADCASTD(EAX, Y4)
		c.VINSERTI32X4(U8(1), X4, Y13, Y13)
	} else {
		c.MOVL(U32(t.bias), EAX)
		c.VPBROADCASTD(EAX, Y15)
	}
	// The bias as a float: 8 (Q4_0), 128 (Q8_0).
	biasF := map[uint32]uint32{0x08080808: 0x41000000, 0x80808080: 0x43000000}[t.bias]
	const32(biasF, X14)

	label("row")
	c.MOVQ(R11, RSI)
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	zero(Y0)
	zero(Y1)
	zero(Y2)

	if pf.two {
		rowTwoPass(t, pf, srow)
	} else {
		label("loop")
		if pf.dist > 0 {
			for off := 0; off < 8*t.wb; off += 64 {
				if pf.nta {
					c.PREFETCHNTA(mem(RSI, pf.dist+off))
				} else {
					c.PREFETCHT0(mem(RSI, pf.dist+off))
				}
			}
		}
		scales8(RSI, t.wb, Y3, Z10, Z11, Z8, Z9)
		c.VMULPS(mem(R8, 0), Y3, Y4)
		c.VFMADD231PS(mem(R8, 32), Y3, Y2)
		for b := 0; b < 8; b++ {
			wv, iv := rowBlockProduct(t, b)
			c.VPERMPS(Y4, yr(24+b), wv)
			c.VFMADD231PS(wv, iv, yr(b%2))
		}
		c.ADDQ(U32(8*t.wb), RSI)
		c.ADDQ(U32(8*t.xb), RDI)
		c.ADDQ(U8(64), R8)
		c.SUBQ(U8(8), RCX)
		c.JNZ(ref("loop"))

	}
	c.VADDPS(Y1, Y0, Y0)
	if t.nibble {
		c.VMULPS(Y13, Y0, Y0)
	}
	hsum(Y0, X1)
	hsum(Y2, X3)
	c.VFNMADD231SS(X14, X2, X0)
	c.VMOVSS(X0, mem(R12, 0))
	c.ADDQ(U8(4), R12)
	c.ADDQ(R10, R11)
	decJNZ(R9, "row")
	retVoid()
}

// rowPre writes, for each eight activation blocks from BX (nb in R13), d_x
// of the eight blocks as floats and then d_x·Σy, to DX. The eight sums of
// the blocks' 32 bytes come from VPDPBUSD against bytes 1 (eight dwords
// per block) and a VPHADDD tree; VPERM2I128 adds the two lanes.
func rowPre(t *blockType) { rowPreOf(t, 0x01010101, true) }

// hsum8Dwords leaves in Y5 the sums of the eight dword vectors Y4-Y11,
// Y5's dword b the sum of Y(4+b)'s; it uses Y4-Y11.
func hsum8Dwords() {
	for i := 0; i < 4; i++ {
		c.VPHADDD(yr(5+2*i), yr(4+2*i), yr(4+2*i))
	}
	c.VPHADDD(Y6, Y4, Y4)
	c.VPHADDD(Y10, Y8, Y8)
	c.VPERM2I128(U8(0x20), Y8, Y4, Y5)
	c.VPERM2I128(U8(0x31), Y8, Y4, Y6)
	c.VPADDD(Y6, Y5, Y5)
}

// nextPre steps a rowPre loop to the next eight activation blocks of t
// and their 64 bytes of the frame.
func nextPre(t *blockType) {
	c.ADDQ(U32(8*t.xb), RDI)
	c.ADDQ(U8(64), R8)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("pre"))
}

// rowPreOf is rowPre with the sums Σk·y, k the bytes of ks, written as
// d_x·Σk·y (asFloat) or as the int32 Σk·y.
func rowPreOf(t *blockType, ks uint32, asFloat bool) { preOf(t, ks, asFloat, false) }

// x8PreOf is rowPreOf for the X8 kernels: nb any count from 1, the last
// nb%8 blocks one at a time (x8PreTail).
func x8PreOf(t *blockType, ks uint32, asFloat bool) { preOf(t, ks, asFloat, true) }

// preOf is rowPreOf, or with anyNB x8PreOf.
func preOf(t *blockType, ks uint32, asFloat, anyNB bool) {
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	scaleTables(t.xb, Z16, Z17)
	c.MOVL(U32(ks), EAX)
	c.VPBROADCASTD(EAX, Y15)
	if anyNB {
		x8PreMain()
	}
	label("pre")
	scales8(RDI, t.xb, Y3, Z16, Z17, Z18, Z19)
	c.VMOVUPS(Y3, mem(R8, 0))
	for b := 0; b < 8; b++ {
		s := yr(4 + b)
		c.VPXOR(s, s, s)
		VPDPBUSD(mem(RDI, b*t.xb+t.qx), Y15, s)
	}
	hsum8Dwords()
	if asFloat {
		c.VCVTDQ2PS(Y5, Y5)
		c.VMULPS(Y3, Y5, Y5)
	}
	c.VMOVUPS(Y5, mem(R8, 32))
	nextPre(t)
	if anyNB {
		x8PreTail(t, func(t *blockType) {
			preScale()
			zero(Y4)
			VPDPBUSD(mem(RDI, t.qx), Y15, Y4)
			preSum(asFloat, nil)
		})
	}
}

// rowPrefetches are the prefetch variants generated for each row kernel.
var rowPrefetches = []rowPrefetch{{}, {dist: 1024}, {dist: 4096, nta: true}, {two: true}, {two: true, dist: 4096, nta: true}}

// rowTwoPass is the loop of the two-pass row kernel: the scales pass,
// then the products, AX walking the row's d_w·d_x in the frame.
func rowTwoPass(t *blockType, pf rowPrefetch, srow Mem) {
	c.LEAQ(srow, RAX)
	label("scales")
	rowPrefetchOps(t, pf)
	scales8(RSI, t.wb, Y3, Z10, Z11, Z8, Z9)
	c.VMULPS(mem(R8, 0), Y3, Y4)
	c.VMOVUPS(Y4, mem(RAX, 0))
	c.VFMADD231PS(mem(R8, 32), Y3, Y2)
	c.ADDQ(U32(8*t.wb), RSI)
	c.ADDQ(U8(64), R8)
	c.ADDQ(U8(32), RAX)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("scales"))

	c.MOVQ(R11, RSI)
	c.MOVQ(R13, RCX)
	c.LEAQ(srow, RAX)
	label("loop")
	for b := 0; b < 8; b++ {
		_, iv := rowBlockProduct(t, b)
		c.VFMADD231PS_BCST(mem(RAX, 4*b), iv, yr(b%2))
	}
	c.ADDQ(U32(8*t.wb), RSI)
	c.ADDQ(U32(8*t.xb), RDI)
	c.ADDQ(U8(32), RAX)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
}

// rowPrefetchOps prefetches the bytes eight blocks take, pf.dist ahead.
func rowPrefetchOps(t *blockType, pf rowPrefetch) {
	if pf.dist == 0 {
		return
	}
	for off := 0; off < 8*t.wb; off += 64 {
		if pf.nta {
			c.PREFETCHNTA(mem(RSI, pf.dist+off))
		} else {
			c.PREFETCHT0(mem(RSI, pf.dist+off))
		}
	}
}

// rowBlockProduct emits block b's integer dot product of the weight row at
// RSI with the activations at RDI, as floats in the returned iv; wv, which
// held the weights, is free again.
func rowBlockProduct(t *blockType, b int) (wv, iv VecPhysical) {
	wv, iv = yr(16+b%4), yr(20+b%4)
	if t.nibble {
		c.VBROADCASTI32X4(mem(RSI, b*t.wb+t.qw), wv)
		c.VPANDD(Y15, wv, wv)
	} else {
		c.VPXORD(mem(RSI, b*t.wb+t.qw), Y15, wv)
	}
	c.VPXORD(iv, iv, iv)
	VPDPBUSD(mem(RDI, b*t.xb+t.qx), wv, iv)
	c.VCVTDQ2PS(iv, iv)
	return wv, iv
}
