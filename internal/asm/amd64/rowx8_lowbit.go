package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The X8 decode kernels of the low-bit types (quant's x8_lowbit.go for
// the layouts), on the x8Decoder skeleton:
//
//	row<T>X8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// over nb super-blocks (at most 128) of Q8_K activations x. Each sums a
// super-block of a group exactly in the int32 lanes of the eight rows,
// then adds it times d·d_x to the float lanes, as the Go twin does. The
// low-bit types have no GEMM kernels; batches over the X8 layout go
// through their multi-token kernels (rowx8multi_lowbit.go).

// The low-bit types' X8 block columns (quant's X8BlockBytes).
const (
	x8IQ4XSBytes = 16 + 64 + 8*128
	x8Q2Bytes    = 32 + 128 + 8*64
	x8Q3Bytes    = 16 + 128 + 8*96
)

// iq4XSX8 is IQ4_XS's kernel. First, per super-block, 128·Σy_j of the
// eight sub-blocks (VPMADDWD of the bsums with ones, shifted) go to the
// frame. Then per super-block and group, per sub-block j: its four chunks
// split into low and high nibbles, looked up (VPSHUFB) as the IQ4_NL
// levels plus 128, VPDPBUSD against the activation dwords they face (by
// embedded broadcast: BenchmarkX8Lowbit from the L2 cache 8 % faster
// than with VPBROADCASTD, IQ3_S's 12 %); S += sc_j·(s_j − 128·Σy_j) with
// VPMULLD (exact: |S| < 2^28).
//
// Registers: Y0 the rows' sums, Y1 S, Y3-Y6 the sub-block's partial sums,
// Y7 scratch, Y10/Y13 the factors, Y14 the level table, Y15 the 0x0F
// mask, Y16-Y23 code chunks.
var iq4XSX8 = lutX8("IQ4_XS", func() Mem { return iq4nlTable(true) })

// lutX8 is iq4XSX8 for a type t held in IQ4_XS's X8 layout whose 4-bit
// codes table() turns into levels plus 128 (a 16-byte table): the kernel
// is the layout's, only the levels differ (IQ3_S's, rowx8_iq.go).
func lutX8(t string, table func() Mem) x8Decoder {
	return x8Decoder{w: vnni, t: t, frame: 32 * 128, preStep: 32, count: 1,
		pre: func() {
			subBlockSums(7)
			c.VBROADCASTI128(table(), Y14)
		},
		loop: lutX8Loop,
	}
}

// lutX8Loop is the block-column loop of lutX8's kernels.
func lutX8Loop(pf x8Prefetch) {
	prefetchX8(pf, 0, x8IQ4XSBytes)
	zero(Y1)
	for j := 0; j < 8; j++ {
		lutSubBlock(80, j)
		c.VPADDD(Y5, Y3, Y3)
		c.VPSUBD_BCST(mem(R8, 4*j), Y3, Y3)
		c.VPMOVSXBD(mem(RSI, 16+8*j), Y7)
		c.VPMULLD(Y3, Y7, Y7)
		c.VPADDD(Y7, Y1, Y1)
	}
	x8Finish(Y10, Y13)
	nextColumn(x8IQ4XSBytes)
}

// lutSubBlock sums sub-block j of a block column whose code chunks
// begin at codes (IQ4_XS's layout, or the IQ2 types' at 144): its four
// chunks' levels (Y16-Y23) against the activation dwords they face, the
// low nibbles' (its first sixteen elements) into Y3 and the high ones'
// into Y5; Y4 and Y6 scratch.
func lutSubBlock(codes, j int) {
	for _, a := range []Register{Y3, Y4, Y5, Y6} {
		zero(a)
	}
	for k := 0; k < 4; k++ {
		lo, hi := yr(16+2*k), yr(17+2*k)
		chunkLevels(codes+32*(4*j+k), lo, hi)
		VPDPBUSDBcast(mem(RDI, 4+32*j+4*k), lo, yr(3+k%2))
		VPDPBUSDBcast(mem(RDI, 4+32*j+16+4*k), hi, yr(5+k%2))
	}
	c.VPADDD(Y4, Y3, Y3)
	c.VPADDD(Y6, Y5, Y5)
}

// pairSums writes, per super-block, the bsums of the sub-block pairs
// (i, i+2) the scales pair up (quant's x8PairScale) to the frame as word
// pairs (VPERMW), pair p = 4h+2q+lh holding sub-blocks 8h+4q+lh and
// 8h+4q+lh+2: 32 bytes a super-block. It uses Y1 and Y14.
func pairSums() {
	idx := make([]uint16, 16)
	for p := 0; p < 8; p++ {
		h, q, lh := p/4, p%4/2, p%2
		idx[2*p], idx[2*p+1] = uint16(8*h+4*q+lh), uint16(8*h+4*q+lh+2)
	}
	c.VMOVDQU(wordsTable("x8Pairs", idx), Y14)
	superSums(32, func() {
		c.VPERMW(mem(RDI, 260), Y14, Y1)
		c.VMOVDQU(Y1, mem(R8, 0))
	})
}

// q2KX8 is Q2_K's kernel. First the bsums' pairs to the frame
// (pairSums). Then per super-block and group,
// per half h and half lh of its 32-byte rows of codes: four chunks, each
// holding one group of four elements of the four sub-blocks 8h+2j+lh
// (j < 4) in its bit pairs, each taken out in place with one mask (so
// standing multiplied by 4^j) and VPDPBUSD against the activation
// dwords. Per pair of sub-blocks, their sums (|s| < 2^13) go to the
// words of one dword, brought back to scale 1 by the shifts that place
// them, and VPDPWSSD adds sc·s to S and m·Σy to M; at the end
// acc += S·(d·d_x) and acc −= M·(dmin·d_x).
//
// Registers: Y0 the rows' sums, Y1 S, Y2 M, Y3-Y6 the four sub-blocks'
// sums, Y7/Y8 scales and mins, Y9-Y13 bsums and the factors, Y15 bytes
// 0x0F, Y16-Y19 the chunks, Y20-Y23 values, Y24-Y27 activation dwords,
// Y28-Y31 the masks 0x03, 0x0C, 0x30, 0xC0.
var q2KX8 = x8Decoder{w: vnni, t: "Q2_K", frame: 32 * 128, preStep: 32, count: 1,
	pre: func() {
		pairSums()
		for j := 0; j < 4; j++ {
			bcast32(0x03030303<<(2*j), yr(28+j))
		}
	},
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, x8Q2Bytes)
		zero(Y1)
		zero(Y2)
		for h := 0; h < 2; h++ {
			for lh := 0; lh < 2; lh++ {
				for _, a := range []Register{Y3, Y4, Y5, Y6} {
					zero(a)
				}
				for g := 0; g < 4; g++ {
					k := 8*h + 4*lh + g
					q := yr(16 + g)
					c.VMOVDQU32(mem(RSI, 160+32*k), q)
					for j := 0; j < 4; j++ {
						v, x := yr(20+j), yr(24+j)
						c.VPANDD(yr(28+j), q, v)
						c.VPBROADCASTD(mem(RDI, 4+128*h+32*j+16*lh+4*g), x)
						VPDPBUSD(x, v, yr(3+j))
					}
				}
				for q := 0; q < 2; q++ {
					p := 4*h + 2*q + lh
					s0, s1 := yr(3+2*q), yr(4+2*q)
					if q > 0 {
						c.VPSRAD(U8(4), s0, s0)
					}
					// s1 stands times 4^(2q+1): to the high word.
					c.VPSLLD(U8(uint8(16-2*(2*q+1))), s1, s1)
					c.VPBLENDW(U8(0xAA), s1, s0, s0)
					c.VPMOVZXBW(mem(RSI, 32+16*p), Y7)
					c.VPSRLW(U8(4), Y7, Y8)
					c.VPAND(Y15, Y7, Y7)
					VPDPWSSD(Y7, s0, Y1)
					c.VPBROADCASTD(mem(R8, 4*p), Y9)
					VPDPWSSD(Y9, Y8, Y2)
				}
			}
		}
		x8FinishMin()
		nextColumn(x8Q2Bytes)
	},
}

// q3KX8 is Q3_K's kernel. First the bsums' pairs to the frame
// (pairSums). Then per super-block and group, per half lh of the 32
// element columns l: four steps m, each reading the three bytes of
// columns 4m..4m+3 that hold the 3-bit values u = q+4 of the eight
// elements 128h+32j+l (quant's x8_lowbit.go). A value is taken out with
// one VPAND, in place: it stands multiplied by 1, 8 or 64 (Q3_K's split
// values, low and high bits apart, by 64 and by 16 or 32), which
// VPDPBUSD against the activation dwords keeps exact; the sub-block sums
// (|s| < 2^14) are brought back by arithmetic shifts, or by the shift
// that puts the second of a pair in the high words. Per pair, VPDPWSSD
// adds sc·s to S and sc·Σy to T; at the end S −= 4·T and
// acc += S·(d·d_x).
//
// Registers: Y0 the rows' sums, Y1 S, Y15 T, Y2-Y9 the sums of the
// sub-blocks of (h, j) (Y2+4h+j), Y19/Y20 the high bits' sums of (1, 2)
// and (1, 3), Y10-Y14 the masks 0x80, 0x40, 0x07, 0x38, 0xC0, Y16-Y18
// the bytes, Y21-Y25 values and scales, Y26-Y31 activation dwords.
var q3KX8 = x8Decoder{w: vnni, t: "Q3_K", frame: 32 * 128, preStep: 32, count: 1,
	pre: func() {
		pairSums()
		bcast32(0x80808080, Y10)
		bcast32(0x40404040, Y11)
		bcast32(0x07070707, Y12)
		bcast32(0x38383838, Y13)
		bcast32(0xC0C0C0C0, Y14)
	},
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, x8Q3Bytes)
		zero(Y1)
		zero(Y15)
		// The values of one step: byte (Y16-Y18), mask, element (h, j),
		// accumulator.
		type piece struct {
			b, mask Register
			h, j    int
			acc     Register
		}
		pieces := []piece{
			{Y16, Y12, 0, 0, Y2}, {Y16, Y13, 0, 1, Y3}, {Y16, Y14, 1, 2, Y8},
			{Y17, Y12, 0, 2, Y4}, {Y17, Y13, 0, 3, Y5}, {Y17, Y14, 1, 3, Y9},
			{Y18, Y12, 1, 0, Y6}, {Y18, Y13, 1, 1, Y7}, {Y18, Y11, 1, 2, Y19}, {Y18, Y10, 1, 3, Y20},
		}
		for lh := 0; lh < 2; lh++ {
			for a := 2; a < 10; a++ {
				zero(yr(a))
			}
			zero(Y19)
			zero(Y20)
			for g := 0; g < 4; g++ {
				m := 4*lh + g
				at := 144 + 96*m
				c.VMOVDQU32(mem(RSI, at), Y16)
				c.VMOVDQU32(mem(RSI, at+32), Y17)
				c.VMOVDQU32(mem(RSI, at+64), Y18)
				xs := map[int]Register{}
				for k, p := range pieces {
					e := 4*p.h + p.j
					x, ok := xs[e]
					if !ok {
						x = yr(26 + len(xs)%6)
						xs[e] = x
						c.VPBROADCASTD(mem(RDI, 4+128*p.h+32*p.j+4*m), x)
					}
					v := yr(21 + k%5)
					c.VPANDD(p.mask, p.b, v)
					VPDPBUSD(x, v, p.acc)
				}
			}
			// The split values' sums to scale 1; Y3, Y5 and Y7 stand
			// times 8, which the shift to the high words takes off.
			c.VPSRAD(U8(6), Y8, Y8)
			c.VPSRAD(U8(4), Y19, Y19)
			c.VPADDD(Y19, Y8, Y8)
			c.VPSRAD(U8(6), Y9, Y9)
			c.VPSRAD(U8(5), Y20, Y20)
			c.VPADDD(Y20, Y9, Y9)
			for h := 0; h < 2; h++ {
				for q := 0; q < 2; q++ {
					p := 4*h + 2*q + lh
					s0, s1 := yr(2+4*h+2*q), yr(3+4*h+2*q)
					if s1 == Y9 {
						c.VPSLLD(U8(16), s1, s1)
					} else {
						c.VPSLLD(U8(13), s1, s1)
					}
					c.VPBLENDW(U8(0xAA), s1, s0, s0)
					c.VPMOVSXBW(mem(RSI, 16+16*p), Y21)
					VPDPWSSD(Y21, s0, Y1)
					c.VPBROADCASTD(mem(R8, 4*p), Y22)
					VPDPWSSD(Y22, Y21, Y15)
				}
			}
		}
		c.VPSLLD(U8(2), Y15, Y15)
		c.VPSUBD(Y15, Y1, Y1)
		x8Finish(Y21, Y22)
		nextColumn(x8Q3Bytes)
	},
}
