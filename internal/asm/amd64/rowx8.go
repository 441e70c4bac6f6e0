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
// sets out[8g+r] = row 8g+r · x for g < groups, over nb blocks (at least
// 1, at most rowMaxBlocks: eight an iteration, then the last nb%8 one at a
// time, rowx8tail.go) of Q8_0 activations x. As the row kernels do, it
// first writes d_x and d_x·Σy of every activation block to its frame
// (x8PreOf), the latter times 8, Q4_0's bias.
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
// eight rows' 16 code bytes; x8KBlockBytes that of a Q4_K one: eight
// (d, dmin) pairs, the 64 scales and 64 mins as bytes, eight rows' 128
// code bytes.
const (
	x8BlockBytes   = 8 * 18
	x8KBlockBytes  = 32 + 64 + 64 + 8*128
	x8Q6BlockBytes = 8 * 210
)

// x8SuperBytes is the size of a k-quant's X8 block column.
func x8SuperBytes(t *superType) int {
	switch {
	case t.six:
		return x8Q6BlockBytes
	case t.hbits:
		return x8Q5BlockBytes
	}
	return x8KBlockBytes
}

// x8Prefetch is an X8 decode kernel's software prefetch: none (dist 0),
// or every cache line of the weights dist bytes ahead, non-temporally
// (PREFETCHNTA) or into L2 (l2: PREFETCHT1). Which one streams fastest
// depends on the core: the hardware prefetchers of a Zen 4 keep one
// sequential stream fed by themselves, while an Intel server core running
// a kernel that spends many instructions per cache line keeps too few
// misses in flight without help (quant's x8Default).
type x8Prefetch struct {
	dist int
	l2   bool
}

// x8Prefetches are the variants generated for each X8 decode kernel.
var x8Prefetches = []x8Prefetch{{}, {dist: 4096}, {dist: 4096, l2: true}}

// line prefetches the cache line at byte off of the weights ahead of SI.
func (pf x8Prefetch) line(off int) {
	if pf.l2 {
		c.PREFETCHT1(mem(RSI, pf.dist+off))
	} else {
		c.PREFETCHNTA(mem(RSI, pf.dist+off))
	}
}

// rowX8Name is the name of an X8 decode kernel of type t at width w
// (VNNI or AVX2) with prefetch pf: …NTA<dist> or …PF<dist> (into L2).
func rowX8Name(t string, w width, pf x8Prefetch) string {
	isa := "VNNI"
	if w == avx2 {
		isa = "AVX2"
	}
	switch {
	case pf.dist > 0 && pf.l2:
		return fmt.Sprintf("row%sX8%sPF%d", t, isa, pf.dist)
	case pf.dist > 0:
		return fmt.Sprintf("row%sX8%sNTA%d", t, isa, pf.dist)
	}
	return "row" + t + "X8" + isa
}

// x8Decoder is what an X8 decode kernel adds to the shape they share:
// per-block activation factors written to the frame first (pre, from BX,
// nb blocks in R13, to DX), then per group of eight rows a loop over the
// blocks, and the eight sums stored. The loop is loop's (a super-block
// type's: per iteration count blocks, the weights at SI, the activations
// at DI and the factors at R8, the rows' sums in Y0; it advances SI and
// DI, the skeleton R8 by preStep) or, for a type of 32-element blocks,
// x8BlockLoops' over block (block b of the frame's eight, its factors at
// R8+4b and R8+32+4b; it advances SI and DI). Y15 holds bytes 0x0F. w is
// the instruction set: vnni (AVX-512 VNNI on Y registers) or avx2 (VEX
// only, Y0-Y15).
type x8Decoder struct {
	t              string
	w              width
	frame          int
	pre            func()
	loop           func(pf x8Prefetch)
	block          func(pf x8Prefetch, b int)
	preStep, count int
}

// emit writes the kernel with prefetch pf.
func (d x8Decoder) emit(pf x8Prefetch) {
	text(rowX8Name(d.t, d.w, pf), 0, "func(w *byte, groups int, x *byte, nb int, out *float32)")
	pre := c.AllocLocal(d.frame)
	loadArgs("x nb", RBX, R13)
	c.LEAQ(pre, RDX)
	d.pre()
	loadArgs("w groups out", RSI, R9, R12)
	bcast32(0x0F0F0F0F, Y15)
	label("group")
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	if d.block != nil {
		zero(Y0)
		x8BlockLoops(func(int) {}, func(b, _ int) { d.block(pf, b) }, func(int) {})
	} else {
		c.MOVQ(R13, RCX)
		zero(Y0)
		label("loop")
		d.loop(pf)
		x8LoopEnd(d)
	}
	c.VMOVUPS(Y0, mem(R12, 0))
	c.ADDQ(U8(32), R12)
	decJNZ(R9, "group")
	retVoid()
}

// prefetchX8 prefetches the bytes [from, to) of a block column pf.dist
// ahead, a cache line at a time (nothing without prefetch).
func prefetchX8(pf x8Prefetch, from, to int) {
	if pf.dist == 0 {
		return
	}
	for off := from; off < to; off += 64 {
		pf.line(off)
	}
}

// q6KPre is the pre of the Q6_K decode kernels: superSums with store,
// which writes a super-block's 32·Σy_j (its bsums widened and shifted) to
// the frame, then the bytes 0x30 in Y14.
func q6KPre(store func()) func() {
	return func() {
		superSums(64, store)
		bcast32(0x30303030, Y14)
	}
}

// q6KChunk prefetches Q6_K's 96-byte chunk g at byte at of a block
// column: its first cache line, and for even g the next one too, so that
// each pair of chunks (192 bytes, three lines) is fetched once.
func (pf x8Prefetch) q6KChunk(at, g int) {
	if pf.dist == 0 {
		return
	}
	pf.line(at)
	if g%2 == 0 {
		pf.line(at + 64)
	}
}

// q40X8 is Q4_0's decode kernel: eight blocks an iteration, then one
// (x8BlockLoops), the factors d_x and 8·d_x·Σy of each (rowPre's, the
// second times the bias, 8, a group of eight at a time: the last,
// partial group's unused lanes are multiplied too, and never read).
var q40X8 = x8Decoder{w: vnni, t: "Q4_0", frame: 8 * rowMaxBlocks,
	pre: func() {
		x8PreOf(blockQ4_0, 0x01010101, true)
		c.MOVL(U32(0x41000000), EAX)
		c.VPBROADCASTD(EAX, Y14)
		c.MOVQ(RDX, R8)
		c.LEAQ(mem(R13, 7), RCX)
		c.SHRQ(U8(3), RCX)
		label("bias")
		c.VMULPS(mem(R8, 32), Y14, Y1)
		c.VMOVUPS(Y1, mem(R8, 32))
		c.ADDQ(U8(64), R8)
		decJNZ(RCX, "bias")
	},
	block: func(pf x8Prefetch, b int) {
		prefetchX8(pf, 0, x8BlockBytes)
		for ch := 0; ch < 4; ch++ {
			splitNibbles(mem(RSI, 16+32*ch), yr(1+ch), yr(5+ch))
			q40ChunkDot(0, ch)
		}
		addDwords4(Y16, Y17, Y18, Y19)
		q40Scale(Y16, 4*b, Y20, Y21)
		x8AddBlock(blockQ4_0, Y16, Y22)
	},
}

// q40ChunkDot sums chunk ch of a Q4_0 block column, its nibbles split
// into Y1+ch (low) and Y5+ch (high), against token k's activation dwords
// into Y16+ch, the dwords broadcast into two of Y9-Y12.
func q40ChunkDot(k, ch int) {
	lo, hi, acc := yr(1+ch), yr(5+ch), yr(16+ch)
	xl, xh := yr(9+ch%2*2), yr(10+ch%2*2)
	c.VPBROADCASTD(xTok(k, blockQ4_0.qx+4*ch), xl)
	c.VPBROADCASTD(xTok(k, blockQ4_0.qx+16+4*ch), xh)
	zero(acc)
	VPDPBUSD(xl, lo, acc)
	VPDPBUSD(xh, hi, acc)
}

// x8Decoders emits d's decode kernels, one per x8Prefetches.
func x8Decoders(d x8Decoder) {
	for _, pf := range x8Prefetches {
		d.emit(pf)
	}
}

// x8BlockKernels emits the X8 kernels of Q4_0 or Q8_0: d's decode
// kernels and the GEMM of rows 0-3 and 4-7 of a group.
func x8BlockKernels(d x8Decoder, t *blockType) {
	x8Decoders(d)
	gemmBlockOf(t, x8Layout(t, 0))
	gemmBlockOf(t, x8Layout(t, 4))
}

// superSums runs body once per super-block of the nb (R13) Q8_K
// activation blocks at BX, DI at the block and R8 at its step bytes of
// the frame (from DX): the per-super-block factors a decode kernel's
// pre writes.
func superSums(step int, body func()) {
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	label("sums")
	body()
	c.ADDQ(U32(q8KBytes), RDI)
	c.ADDQ(U8(uint8(step)), R8)
	decJNZ(RCX, "sums")
}

// subBlockSums writes, per super-block, Σy_j of the eight 32-element
// sub-blocks (VPMADDWD of the sixteen bsums with words 1, left in Y14)
// times 2^shift to the frame: 32 bytes a super-block.
func subBlockSums(shift uint8) {
	bcast32(0x00010001, Y14)
	superSums(32, func() {
		c.VPMADDWD(mem(RDI, 260), Y14, Y1)
		if shift > 0 {
			c.VPSLLD(U8(shift), Y1, Y1)
		}
		c.VMOVDQU(Y1, mem(R8, 0))
	})
}

// x8Finish adds S (Y1, int32) times d·d_x to Y0: the eight F16 d at SI,
// d_x the float at DI, through the scratch registers d and dx.
func x8Finish(d, dx Register) {
	c.VCVTDQ2PS(Y1, Y1)
	c.VCVTPH2PS(mem(RSI, 0), d)
	c.VBROADCASTSS(mem(RDI, 0), dx)
	c.VMULPS(dx, d, d)
	c.VFMADD231PS(d, Y1, Y0)
}

// dDmin converts the eight rows' (d, dmin) F16 pairs at SI to floats
// in d and dmin, split by VPMOVDW. It uses t.
func dDmin(t, d, dmin VecPhysical) {
	c.VMOVDQU(mem(RSI, 0), t)
	c.VPMOVDW(t, d.AsX())
	c.VPSRLD(U8(16), t, t)
	c.VPMOVDW(t, dmin.AsX())
	c.VCVTPH2PS(d.AsX(), d)
	c.VCVTPH2PS(dmin.AsX(), dmin)
}

// x8FinishMin adds S (Y1) times d·d_x and subtracts M (Y2) times
// dmin·d_x, both int32, to Y0: the eight rows' (d, dmin) F16 pairs at
// SI, d_x the float at DI. It uses Y9-Y11 and Y13.
func x8FinishMin() {
	c.VCVTDQ2PS(Y1, Y1)
	c.VCVTDQ2PS(Y2, Y2)
	dDmin(Y9, Y10, Y11)
	c.VBROADCASTSS(mem(RDI, 0), Y13)
	c.VMULPS(Y13, Y10, Y10)
	c.VMULPS(Y13, Y11, Y11)
	c.VFMADD231PS(Y10, Y1, Y0)
	c.VFNMADD231PS(Y11, Y2, Y0)
}

// x8AddMinToken is x8FinishMin for token k of a multi-token kernel, d
// and dmin converted before: acc_k (Y0+k) += S·(d·d_x) − M·(dmin·d_x),
// S and M made floats in place, d_x broadcast into bx, the products in
// pd and pm.
func x8AddMinToken(k int, s, m, d, dmin, bx, pd, pm Register) {
	c.VCVTDQ2PS(s, s)
	c.VCVTDQ2PS(m, m)
	c.VBROADCASTSS(xTok(k, 0), bx)
	c.VMULPS(bx, d, pd)
	c.VMULPS(bx, dmin, pm)
	c.VFMADD231PS(pd, s, x8Acc(k))
	c.VFNMADD231PS(pm, m, x8Acc(k))
}

// nextColumn steps SI past a block column of column bytes and DI past
// a Q8_K activation block.
func nextColumn(column int) {
	c.ADDQ(U32(column), RSI)
	c.ADDQ(U32(q8KBytes), RDI)
}

// q4KX8 is Q4_K's X8 decode kernel:
//
//	rowQ4_KX8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// over nb super-blocks (at most 128) of Q8_K activations x. First, per
// super-block, the eight sub-blocks' Σy_j (VPMADDWD of the sixteen bsums
// with ones) go to the frame. Then per super-block and group: per pair of
// sub-blocks, the eight chunks of codes split into low nibbles (sub-block
// 2p) and high ones (2p+1), VPDPBUSD against the activation dwords they
// face, two partial sums each; S = Σ_j sc_j·s_j and M = Σ_j m_j·Σy_j with
// VPMULLD (exact: |S| < 2^26); acc += S·(d·d_x), acc −= M·(dmin·d_x).
//
// Registers: Y0 the rows' sums, Y1 S, Y2 M, Y3-Y6 the pair's partial sums,
// Y7/Y8 scratch, Y9-Y13 the factors, Y14 words 1, Y15 the 0x0F mask,
// Y16-Y23 code chunks, Y24-Y31 activation dwords. General: as Q4_0's.
// q8KBytes is the size of a Q8_K activation block.
const q8KBytes = 4 + 256 + 32

var q4KX8 = x8Decoder{w: vnni, t: "Q4_K", frame: 32 * 128, preStep: 32, count: 1,
	pre: func() { subBlockSums(0) },
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, 160)
		zero(Y1)
		zero(Y2)
		for p := 0; p < 4; p++ {
			for _, a := range []Register{Y3, Y4, Y5, Y6} {
				zero(a)
			}
			for g := 0; g < 8; g++ {
				k := 8*p + g
				if pf.dist > 0 && k%2 == 0 {
					pf.line(160 + 32*k)
				}
				lo, hi := yr(16+g%4*2), yr(17+g%4*2)
				xl, xh := yr(24+g%4*2), yr(25+g%4*2)
				c.VMOVDQU32(mem(RSI, 160+32*k), lo)
				c.VPSRLW(U8(4), lo, hi)
				c.VPANDD(Y15, lo, lo)
				c.VPANDD(Y15, hi, hi)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p)+4*g), xl)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p+1)+4*g), xh)
				VPDPBUSD(xl, lo, yr(3+g%2))
				VPDPBUSD(xh, hi, yr(5+g%2))
			}
			c.VPADDD(Y4, Y3, Y3)
			c.VPADDD(Y6, Y5, Y5)
			for h, s := range []Register{Y3, Y5} {
				j := 2*p + h
				c.VPMOVZXBD(mem(RSI, 32+8*j), Y7)
				c.VPMULLD(s, Y7, Y7)
				c.VPADDD(Y7, Y1, Y1)
			}
		}
		for j := 0; j < 8; j++ {
			c.VPMOVZXBD(mem(RSI, 96+8*j), Y8)
			c.VPMULLD_BCST(mem(R8, 4*j), Y8, Y8)
			c.VPADDD(Y8, Y2, Y2)
		}
		x8FinishMin()
		nextColumn(x8KBlockBytes)
	},
}

// q6KX8 is Q6_K's X8 decode kernel:
//
//	rowQ6_KX8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// over nb super-blocks (at most 128) of Q8_K activations x. First, per
// super-block, 32·Σy_j of the sixteen sub-blocks (the bsums, widened and
// shifted) go to the frame. Then per super-block and group, per half h
// and per half lh of its 32-element quarters: the four sub-blocks
// 8h+2q+lh together, each group of four elements loading two chunks of
// low bits and one of high bits for all four quarters; the 6-bit values
// (unsigned) face their activation dwords in VPDPBUSD, and
// S += sc_j·(s_j − 32·Σy_j) with VPMULLD; at the end acc += S·(d·d_x).
//
// The chunks come in the order they are read (quant's x8.go), one
// sequential stream.
//
// Registers: Y0 the rows' sums, Y1 S, Y3-Y6 the four sub-blocks' sums,
// Y7/Y8 low-bit chunks, Y9 the high-bit chunk, Y10-Y13 scratch, Y14 bytes
// 0x30, Y15 bytes 0x0F, Y16-Y19 the values, Y20-Y23 scratch, Y24-Y27
// activation dwords. General: as Q4_0's.
var q6KX8 = x8Decoder{w: vnni, t: "Q6_K", frame: 64 * 128, preStep: 64, count: 1,
	pre: q6KPre(func() {
		c.VPMOVSXWD(mem(RDI, 260), Z1)
		c.VPSLLD(U8(5), Z1, Z1)
		c.VMOVDQU32(Z1, mem(R8, 0))
	}),
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, 144)
		zero(Y1)
		for h := 0; h < 2; h++ {
			for lh := 0; lh < 2; lh++ {
				for _, a := range []Register{Y3, Y4, Y5, Y6} {
					zero(a)
				}
				for g := 4 * lh; g < 4*lh+4; g++ {
					at := 144 + 96*(8*h+g)
					pf.q6KChunk(at, g)
					q6X8Chunks(at)
					for q := 0; q < 4; q++ {
						v, x := yr(16+q), yr(24+q)
						c.VPORD(yr(10+q), v, v)
						c.VPBROADCASTD(mem(RDI, 4+128*h+32*q+4*g), x)
						VPDPBUSD(x, v, yr(3+q))
					}
				}
				for q := 0; q < 4; q++ {
					j := 8*h + 2*q + lh
					s := yr(3 + q)
					c.VPSUBD_BCST(mem(R8, 4*j), s, s)
					c.VPMOVSXBD(mem(RSI, 16+8*j), yr(20+q))
					c.VPMULLD(s, yr(20+q), yr(20+q))
					c.VPADDD(yr(20+q), Y1, Y1)
				}
			}
		}
		x8Finish(Y10, Y13)
		nextColumn(x8Q6BlockBytes)
	},
}

// x8LoopEnd closes an X8 kernel's block-column loop: the activations'
// per-block data advanced by d.preStep, d.count blocks fewer to go.
func x8LoopEnd(d x8Decoder) {
	c.ADDQ(U8(uint8(d.preStep)), R8)
	if d.count == 1 {
		c.DECQ(RCX)
	} else {
		c.SUBQ(U8(uint8(d.count)), RCX)
	}
	c.JNZ(ref("loop"))
}

// q6X8Chunks loads the three chunks of a Q6_K X8 group of four elements
// at at (two of ql, one of qh) and leaves, for quarters q = 0..3, the
// values' bits 4-5 in Y(10+q) and bits 0-3 in Y(16+q): the low nibbles of
// the two ql chunks, then their high nibbles (Y14 holds 0x30 bytes, Y15
// 0x0F bytes).
func q6X8Chunks(at int) {
	c.VMOVDQU(mem(RSI, at), Y7)
	c.VMOVDQU(mem(RSI, at+32), Y8)
	c.VMOVDQU(mem(RSI, at+64), Y9)
	c.VPSLLW(U8(4), Y9, Y10)
	c.VPSLLW(U8(2), Y9, Y11)
	c.VPSRLW(U8(2), Y9, Y13)
	c.VPAND(Y14, Y10, Y10)
	c.VPAND(Y14, Y11, Y11)
	c.VPAND(Y14, Y9, Y12)
	c.VPAND(Y14, Y13, Y13)
	c.VPANDD(Y15, Y7, Y16)
	c.VPANDD(Y15, Y8, Y17)
	c.VPSRLW(U8(4), Y7, Y18)
	c.VPSRLW(U8(4), Y8, Y19)
	c.VPANDD(Y15, Y18, Y18)
	c.VPANDD(Y15, Y19, Y19)
}

// addDwords4 adds the dword sums b, c and d into a, pairwise so that no
// add waits on the one before.
func addDwords4(a, b, cc, d Register) {
	c.VPADDD(b, a, a)
	c.VPADDD(d, cc, cc)
	c.VPADDD(cc, a, a)
}

// q40Scale turns a Q4_0 block's dword sums s into floats times d_x less
// 8·d_x·Σy, both from the frame (at disp and disp+32 from R8), through
// dx and sy: the codes are unsigned, so the −8 is taken out once here.
func q40Scale(s Register, disp int, dx, sy Register) {
	c.VCVTDQ2PS(s, s)
	c.VBROADCASTSS(mem(R8, disp), dx)
	c.VBROADCASTSS(mem(R8, disp+32), sy)
	c.VFMSUB213PS(sy, dx, s) // (Σc·y)·d_x − 8·d_x·Σy
}

// x8AddBlock adds the block column's float sums s times the eight
// rows' F16 scales at SI (made floats in d) to Y0, and steps to the next
// block with x8NextBlock.
func x8AddBlock(t *blockType, s, d Register) {
	c.VCVTPH2PS(mem(RSI, 0), d)
	c.VFMADD231PS(d, s, Y0)
	x8NextBlock(t)
}

// x8NextBlock steps SI to the next X8 block column of t (eight rows'
// blocks) and DI to the next activation block.
func x8NextBlock(t *blockType) {
	c.ADDQ(U32(8*t.wb), RSI)
	c.ADDQ(U8(uint8(t.xb)), RDI)
}
