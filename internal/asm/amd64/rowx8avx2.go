package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// AVX2 X8 decode kernels: the x8Decoder skeleton and the X8 layout of
// the VNNI kernels, for cores without AVX-512 (Zen 2 and 3, older Intel),
//
//	row<T>X8AVX2[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//
// with the same results bit for bit: the integer sums are exact and the
// float operations are the VNNI kernel's, in its order. Without VPDPBUSD,
// VPMADDUBSW multiplies a chunk's unsigned code bytes (the eight rows'
// four elements each) by the broadcast activation dword and adds pairs
// to words; 4-bit codes are small enough (15·128·2 a pair) for sixteen
// elements to add up in words, which one VPMADDWD turns into the rows'
// dwords. Only Y0-Y15 exist.

// rowPreAVX2 writes the frame of the Q4_0 and Q8_0 kernels, eight
// activation blocks from BX (nb in R13, any count from 1: x8PreTail
// takes the last nb%8) at a time, to DX: d_x of each block as a float,
// then, with bias, bias·(d_x·Σy) (rowPre's, then scaled as q40X8's pre
// does). Y14 is left holding words 1.
func rowPreAVX2(t *blockType, bias uint32) {
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	c.MOVQ(R13, RCX)
	bcast32(0x01010101, Y15)
	bcast32(0x00010001, Y14)
	if bias != 0 {
		bcast32(bias, Y13)
	}
	x8PreMain()
	label("pre")
	for b := 0; b < 8; b++ {
		c.VPINSRW(U8(b), mem(RDI, b*t.xb), X3, X3)
	}
	c.VCVTPH2PS(X3, Y3)
	c.VMOVUPS(Y3, mem(R8, 0))
	if bias != 0 {
		for b := 0; b < 8; b++ {
			s := yr(4 + b)
			c.VPMADDUBSW(mem(RDI, b*t.xb+t.qx), Y15, s)
			c.VPMADDWD(Y14, s, s)
		}
		hsum8Dwords()
		c.VCVTDQ2PS(Y5, Y5)
		c.VMULPS(Y3, Y5, Y5)
		c.VMULPS(Y13, Y5, Y5)
		c.VMOVUPS(Y5, mem(R8, 32))
	}
	nextPre(t)
	x8PreTail(t, func(t *blockType) {
		preScale()
		if bias != 0 {
			c.VPMADDUBSW(mem(RDI, t.qx), Y15, Y4)
			c.VPMADDWD(Y14, Y4, Y4)
			preSum(true, Y13)
		}
	})
}

// q40X8AVX2 is q40X8 with AVX2. Per block, per chunk: low and high
// nibbles (Y1/Y2 or Y5/Y6) against their activation dwords (Y3/Y4 or
// Y7/Y8), the two word sums added; the even chunks' into Y9, the odd
// ones' into Y10; then words to dwords (Y14 words 1) and q40X8's float
// work: Y11 d_x, Y12 8·d_x·Σy, Y13 the scales.
var q40X8AVX2 = x8Decoder{w: avx2, t: "Q4_0", frame: 8 * rowMaxBlocks,
	pre: func() { rowPreAVX2(blockQ4_0, 0x41000000) },
	block: func(pf x8Prefetch, b int) {
		t := blockQ4_0
		prefetchX8(pf, 0, x8BlockBytes)
		for ch := 0; ch < 4; ch++ {
			s := 4 * (ch % 2)
			lo, hi, xl, xh, acc := yr(1+s), yr(2+s), yr(3+s), yr(4+s), yr(9+ch%2)
			splitNibbles(mem(RSI, 16+32*ch), lo, hi)
			c.VPBROADCASTD(mem(RDI, t.qx+4*ch), xl)
			c.VPBROADCASTD(mem(RDI, t.qx+16+4*ch), xh)
			c.VPMADDUBSW(xl, lo, lo)
			c.VPMADDUBSW(xh, hi, hi)
			sumInto(ch < 2, acc, lo, c.VPADDW, func(dst Register) { c.VPADDW(hi, lo, dst) })
		}
		c.VPADDW(Y10, Y9, Y9)
		c.VPMADDWD(Y14, Y9, Y9)
		q40Scale(Y9, 4*b, Y11, Y12)
		x8AddBlock(t, Y9, Y13)
	},
}

// q80X8AVX2 is q80X8 with AVX2: each chunk's codes made |w| (VPABSB)
// and the activation dword given their signs (VPSIGNB), as the AVX2 GEMM
// does, so the sums are signed and need no 128·Σy; a pair is at most
// 2·128·127, so each chunk goes to dwords (VPMADDWD, Y14 words 1) on its
// own, into Y9-Y12. The frame holds d_x only. Then q80X8's float work:
// Y13 d_x, then the scales.
var q80X8AVX2 = x8Decoder{w: avx2, t: "Q8_0", frame: 8 * rowMaxBlocks,
	pre: func() { rowPreAVX2(blockQ8_0, 0) },
	block: func(pf x8Prefetch, b int) {
		t := blockQ8_0
		prefetchX8(pf, 0, 8*t.wb)
		for ch := 0; ch < 8; ch++ {
			w, x, acc := yr(1+2*(ch%4)), yr(2+2*(ch%4)), yr(9+ch%4)
			c.VMOVDQU(mem(RSI, 16+32*ch), w)
			c.VPBROADCASTD(mem(RDI, t.qx+4*ch), x)
			c.VPSIGNB(w, x, x)
			c.VPABSB(w, w)
			c.VPMADDUBSW(x, w, w)
			sumInto(ch < 4, acc, w, c.VPADDD, func(dst Register) { c.VPMADDWD(Y14, w, dst) })
		}
		addDwords4(Y9, Y10, Y11, Y12)
		c.VCVTDQ2PS(Y9, Y9)
		c.VBROADCASTSS(mem(R8, 4*b), Y13)
		c.VMULPS(Y13, Y9, Y9)
		x8AddBlock(t, Y9, Y13)
	},
}

// q4KX8AVX2 is q4KX8 with AVX2. Per pair of sub-blocks, the eight chunks'
// low nibbles (sub-block 2p) and high ones (2p+1) against their
// activation dwords, as words in Y3 and Y4 (sixteen elements a word);
// VPMADDWD with the sub-block's scales as word pairs (each row's sc_j
// in both words of its dword) gives sc_j·s_j, added to S; M with VPMULLD
// as q4KX8's, and x8FinishMinAVX2.
//
// Registers: Y0 the rows' sums, Y1 S, Y2 M, Y3/Y4 the pair's word sums,
// Y5-Y8 and Y9-Y12 a chunk's nibbles and activation dwords (two sets,
// alternating), Y13/Y14 scratch, Y15 the 0x0F mask.
var q4KX8AVX2 = x8Decoder{w: avx2, t: "Q4_K", frame: 32 * 128, preStep: 32, count: 1,
	pre: func() { subBlockSums(0) },
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, 160)
		zero(Y1)
		for p := 0; p < 4; p++ {
			for g := 0; g < 8; g++ {
				k := 8*p + g
				if pf.dist > 0 && k%2 == 0 {
					pf.line(160 + 32*k)
				}
				s := 4 * (g % 2)
				lo, hi, xl, xh := yr(5+s), yr(6+s), yr(7+s), yr(8+s)
				splitNibbles(mem(RSI, 160+32*k), lo, hi)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p)+4*g), xl)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p+1)+4*g), xh)
				pairWordSums(g == 0, xl, lo, xh, hi)
			}
			scalePairSums(p, X13, Y13)
		}
		x8MinFinishAVX2(Y14, x8KBlockBytes)
	},
}

// sumInto has op write the first term of a sum straight into acc (first)
// or a later one into t, added to acc with add.
func sumInto(first bool, acc, t Register, add func(...Op), op func(dst Register)) {
	if first {
		op(acc)
		return
	}
	op(t)
	add(t, acc, acc)
}

// pairWordSums adds the products of the unsigned codes lo and hi with
// the signed activation dwords xl and xh, as words, to the pair's word
// sums Y3 and Y4 (set by the first chunk), the products in lo and hi.
func pairWordSums(first bool, xl, lo, xh, hi Register) {
	if first {
		c.VPMADDUBSW(xl, lo, Y3)
		c.VPMADDUBSW(xh, hi, Y4)
		return
	}
	c.VPMADDUBSW(xl, lo, lo)
	c.VPMADDUBSW(xh, hi, hi)
	c.VPADDW(lo, Y3, Y3)
	c.VPADDW(hi, Y4, Y4)
}

// scalePairSums adds sc_j·s_j of sub-blocks 2p and 2p+1 to S (Y1): each
// word sum (Y3, Y4) VPMADDWD with its sub-block's eight row scales
// (at SI+32) as word pairs, made in x and y (one register's X and Y).
func scalePairSums(p int, x, y Register) {
	for h, s := range []Register{Y3, Y4} {
		c.VMOVQ(mem(RSI, 32+8*(2*p+h)), x)
		c.VPUNPCKLBW(x, x, x)
		c.VPMOVZXBW(x, y)
		c.VPMADDWD(y, s, s)
		c.VPADDD(s, Y1, Y1)
	}
}

// x8MinFinishAVX2 makes M (Y2) from the mins at SI+96 and the frame's
// Σy_j (through Y13 and sy), finishes the column with x8FinishMinAVX2 and
// steps SI past its colBytes.
func x8MinFinishAVX2(sy Register, colBytes int) {
	zero(Y2)
	for j := 0; j < 8; j++ {
		c.VPMOVZXBD(mem(RSI, 96+8*j), Y13)
		c.VPBROADCASTD(mem(R8, 4*j), sy)
		c.VPMULLD(sy, Y13, Y13)
		c.VPADDD(Y13, Y2, Y2)
	}
	x8FinishMinAVX2()
	nextColumn(colBytes)
}

// dDminAVX2 converts the eight rows' (d, dmin) F16 pairs at SI to
// floats in d and dmin: the pairs split by VPACKUSDW (per 128-bit lane
// four d, then four dmin) and VPERMQ. It uses Y9-Y11.
func dDminAVX2(d, dmin Register) {
	c.VMOVDQU(mem(RSI, 0), Y9)
	c.VPSRLD(U8(16), Y9, Y10)
	c.VPSLLD(U8(16), Y9, Y9)
	c.VPSRLD(U8(16), Y9, Y9)
	c.VPACKUSDW(Y10, Y9, Y9)
	c.VPERMQ(U8(0xD8), Y9, Y9)
	c.VCVTPH2PS(X9, d)
	c.VEXTRACTI128(U8(1), Y9, X11)
	c.VCVTPH2PS(X11, dmin)
}

// x8FinishMinAVX2 is x8FinishMin with AVX2, the (d, dmin) pairs made
// floats by dDminAVX2. It uses Y9-Y13.
func x8FinishMinAVX2() {
	c.VCVTDQ2PS(Y1, Y1)
	c.VCVTDQ2PS(Y2, Y2)
	dDminAVX2(Y10, Y11)
	c.VBROADCASTSS(mem(RDI, 0), Y13)
	c.VMULPS(Y13, Y10, Y10)
	c.VMULPS(Y13, Y11, Y11)
	c.VFMADD231PS(Y10, Y1, Y0)
	c.VFNMADD231PS(Y11, Y2, Y0)
}

// q6KX8AVX2 is q6KX8 with AVX2. The frame holds 32·Σy_j of the sixteen
// sub-blocks as q6KX8's does. Per group of four elements g, its three
// chunks (Y2-Y4: ql dwords, qh dword) give each quarter q's values one
// after the other (low bits from a ql chunk, bits 4-5 from qh, as
// q6X8Chunks takes them), VPMADDUBSW against the activation dwords. A
// pair of 6-bit values is at most 2·63·128, so two groups add up in
// words (Y5-Y8, a sub-block each) before VPMADDWD with the sub-block's
// signed scales as word pairs adds sc_j·s_j to S; at the end S −=
// Σ_j sc_j·32·Σy_j (VPMULLD) and x8Finish. All sums are exact int32, so
// S equals q6KX8's.
//
// Registers: Y0 the rows' sums, Y1 S, Y2-Y4 the chunks, Y5-Y8 the four
// sub-blocks' word sums, Y9 a quarter's values, Y10 scratch, Y11
// activation dwords, Y12/Y13 scales and scratch, Y14 bytes 0x30, Y15
// bytes 0x0F.
var q6KX8AVX2 = x8Decoder{w: avx2, t: "Q6_K", frame: 64 * 128, preStep: 64, count: 1,
	pre: q6KPre(func() {
		for h := 0; h < 2; h++ {
			c.VPMOVSXWD(mem(RDI, 260+16*h), Y1)
			c.VPSLLD(U8(5), Y1, Y1)
			c.VMOVDQU(Y1, mem(R8, 32*h))
		}
	}),
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, 144)
		zero(Y1)
		for h := 0; h < 2; h++ {
			for g := 0; g < 8; g++ {
				at := 144 + 96*(8*h+g)
				pf.q6KChunk(at, g)
				c.VMOVDQU(mem(RSI, at), Y2)
				c.VMOVDQU(mem(RSI, at+32), Y3)
				c.VMOVDQU(mem(RSI, at+64), Y4)
				for q := 0; q < 4; q++ {
					// Bits 0-3: ql chunk q%2, low nibbles for q < 2;
					// bits 4-5: qh bits 2q, 2q+1.
					ql := []Register{Y2, Y3}[q%2]
					if q < 2 {
						c.VPAND(Y15, ql, Y9)
					} else {
						c.VPSRLW(U8(4), ql, Y9)
						c.VPAND(Y15, Y9, Y9)
					}
					switch q {
					case 0:
						c.VPSLLW(U8(4), Y4, Y10)
					case 1:
						c.VPSLLW(U8(2), Y4, Y10)
					case 2:
						c.VMOVDQA(Y4, Y10)
					case 3:
						c.VPSRLW(U8(2), Y4, Y10)
					}
					c.VPAND(Y14, Y10, Y10)
					c.VPOR(Y10, Y9, Y9)
					c.VPBROADCASTD(mem(RDI, 4+128*h+32*q+4*g), Y11)
					sum := yr(5 + q)
					if g%2 == 0 {
						c.VPMADDUBSW(Y11, Y9, sum)
						continue
					}
					c.VPMADDUBSW(Y11, Y9, Y9)
					c.VPADDW(Y9, sum, sum)
					j := 8*h + 2*q + g/4
					c.VMOVQ(mem(RSI, 16+8*j), X12)
					c.VPUNPCKLBW(X12, X12, X12)
					c.VPMOVSXBW(X12, Y12)
					c.VPMADDWD(Y12, sum, sum)
					c.VPADDD(sum, Y1, Y1)
				}
			}
		}
		for j := 0; j < 16; j++ {
			c.VPMOVSXBD(mem(RSI, 16+8*j), Y12)
			c.VPBROADCASTD(mem(R8, 4*j), Y13)
			c.VPMULLD(Y13, Y12, Y12)
			c.VPSUBD(Y12, Y1, Y1)
		}
		x8Finish(Y10, Y13)
		nextColumn(x8Q6BlockBytes)
	},
}

// q5KX8AVX2 is q5KX8 with AVX2, a pair of sub-blocks at a time (VEX has
// sixteen registers, too few for eight sub-blocks' sums): per pair p and
// group g, the qh chunk and the pair's code chunk (within the block
// column, which stays in L1) give the low nibbles with qh bit 2p as bit
// 4 (sub-block 2p) and the high ones with bit 2p+1 (2p+1), VPMADDUBSW
// against the activation dwords. A pair of 5-bit values is at most
// 2·31·128, so four groups add up in words (Y3, Y4) before VPMADDWD with
// the sub-block's scales as word pairs adds sc_j·s_j to S; then M and
// x8FinishMinAVX2 as q4KX8AVX2's. All sums are exact int32.
//
// Registers: Y0 the rows' sums, Y1 S, Y2 M, Y3/Y4 the pair's word sums,
// Y5 the qh chunk, Y6/Y7 the values, Y8/Y9 activation dwords, Y10-Y13
// scratch, Y14 bytes 0x10, Y15 bytes 0x0F.
var q5KX8AVX2 = x8Decoder{w: avx2, t: "Q5_K", frame: 32 * 128, preStep: 32, count: 1,
	pre: func() {
		subBlockSums(0)
		bcast32(0x10101010, Y14)
	},
	loop: func(pf x8Prefetch) {
		prefetchX8(pf, 0, x8Q5BlockBytes)
		zero(Y1)
		for p := 0; p < 4; p++ {
			for g := 0; g < 8; g++ {
				at := 160 + 160*g
				c.VMOVDQU(mem(RSI, at), Y5)
				c.VMOVDQU(mem(RSI, at+32+32*p), Y7)
				c.VPAND(Y15, Y7, Y6)
				c.VPSRLW(U8(4), Y7, Y7)
				c.VPAND(Y15, Y7, Y7)
				for h, v := range []Register{Y6, Y7} {
					b := shiftTo4(Y5, 2*p+h, Y10)
					c.VPAND(Y14, b, Y10)
					c.VPOR(Y10, v, v)
				}
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p)+4*g), Y8)
				c.VPBROADCASTD(mem(RDI, 4+32*(2*p+1)+4*g), Y9)
				pairWordSums(g%4 == 0, Y8, Y6, Y9, Y7)
				if g%4 == 3 {
					scalePairSums(p, X11, Y11)
				}
			}
		}
		x8MinFinishAVX2(Y12, x8Q5BlockBytes)
	},
}

// q40X8AVX2Multi is q40X8AVX2 for several tokens: each chunk's nibbles
// (Y8, Y9) once, then per token its activation dwords (Y10, Y11), the
// products added to the token's word sums (Y4-Y7); per block and token
// q40X8AVX2's words to dwords and float work, the scales (Y8) converted
// once. Accumulators: Y0-Y3.
var q40X8AVX2Multi = x8Multi{d: q40X8AVX2,
	acc: func(k int) Register { return yr(k) },
	block: func(tokens, b, _ int) {
		blockX8AVX2Multi(blockQ4_0, 16, tokens, b, 4, func(int) { splitNibblesY8() }, func(k, ch int, dst Register) {
			nibbleWordsAVX2(blockQ4_0, k, ch, dst)
		}, c.VPADDW, func(k, b int, s Register) {
			c.VPMADDWD(Y14, s, s)
			q40Scale(s, q40X8AVX2.frame*k+4*b, Y10, Y11)
		})
	},
}

// splitNibblesY8 splits the code bytes in Y8 into their low nibbles (Y8)
// and high ones (Y9), Y15 holding bytes 0x0F.
func splitNibblesY8() {
	c.VPSRLW(U8(4), Y8, Y9)
	c.VPAND(Y15, Y8, Y8)
	c.VPAND(Y15, Y9, Y9)
}

// nibbleWordsAVX2 leaves in dst token k's word sums of chunk ch's values
// in Y8 (its low nibbles' elements) and Y9 (its high ones') against the
// token's activation dwords of t (through Y10 and Y11).
func nibbleWordsAVX2(t *blockType, k, ch int, dst Register) {
	c.VPBROADCASTD(xTok(k, t.qx+4*ch), Y10)
	c.VPBROADCASTD(xTok(k, t.qx+16+4*ch), Y11)
	c.VPMADDUBSW(Y10, Y8, Y10)
	c.VPMADDUBSW(Y11, Y9, Y11)
	c.VPADDW(Y11, Y10, dst)
}

// blockX8AVX2Multi is a block of q40X8AVX2Multi, q50X8AVX2Multi and
// q80X8AVX2Multi, block b of the frame's eight. Each of its chunks of
// codes (the first at codes in the block column) is loaded to Y8 and
// readied by prep(ch) once; then per token dot(k, ch, dst) leaves the
// chunk's sum in dst: token k's block sum (Y4-Y7) for the first chunk,
// else Y10, which add then adds to it. After the chunks the rows' scales
// (Y8) are converted once, and per token scale(k, b, s) turns its block
// sum s into floats, which are added times the scales to the token's
// accumulator (Y0-Y3); then SI and DI step to the next block of t.
func blockX8AVX2Multi(t *blockType, codes, tokens, b, chunks int, prep func(ch int), dot func(k, ch int, dst Register), add func(...Op), scale func(k, b int, s Register)) {
	for ch := 0; ch < chunks; ch++ {
		c.VMOVDQU(mem(RSI, codes+32*ch), Y8)
		prep(ch)
		for k := 0; k < tokens; k++ {
			sumInto(ch == 0, yr(4+k), Y10, add, func(dst Register) { dot(k, ch, dst) })
		}
	}
	c.VCVTPH2PS(mem(RSI, 0), Y8)
	for k := 0; k < tokens; k++ {
		s := yr(4 + k)
		scale(k, b, s)
		c.VFMADD231PS(Y8, s, yr(k))
	}
	x8NextBlock(t)
}

// q4KX8AVX2Multi is q4KX8AVX2 for two tokens: each chunk's nibbles (Y8,
// Y9) once, faced with each token's activation dwords (Y10, Y11) into
// the token's two word sums (Y4/Y5, Y6/Y7); S_k (Y2, Y3) += sc_j·s_j,
// the scales as word pairs (Y12) made once per sub-block. At the end, d
// and dmin converted once (Y12, Y13), per token M (Y8) and acc_k (Y0,
// Y1) as x8FinishMinAVX2 does them.
var q4KX8AVX2Multi = x8Multi{d: q4KX8AVX2,
	acc: func(k int) Register { return yr(k) },
	loop: func(tokens int) {
		sums := func(k, h int) Register { return yr(4 + 2*k + h) }
		for k := 0; k < tokens; k++ {
			zero(yr(2 + k))
		}
		for p := 0; p < 4; p++ {
			for g := 0; g < 8; g++ {
				splitNibbles(mem(RSI, 160+32*(8*p+g)), Y8, Y9)
				for k := 0; k < tokens; k++ {
					c.VPBROADCASTD(xTok(k, 4+32*(2*p)+4*g), Y10)
					c.VPBROADCASTD(xTok(k, 4+32*(2*p+1)+4*g), Y11)
					if g == 0 {
						c.VPMADDUBSW(Y10, Y8, sums(k, 0))
						c.VPMADDUBSW(Y11, Y9, sums(k, 1))
						continue
					}
					c.VPMADDUBSW(Y10, Y8, Y10)
					c.VPMADDUBSW(Y11, Y9, Y11)
					c.VPADDW(Y10, sums(k, 0), sums(k, 0))
					c.VPADDW(Y11, sums(k, 1), sums(k, 1))
				}
			}
			for h := 0; h < 2; h++ {
				c.VMOVQ(mem(RSI, 32+8*(2*p+h)), X12)
				c.VPUNPCKLBW(X12, X12, X12)
				c.VPMOVZXBW(X12, Y12)
				for k := 0; k < tokens; k++ {
					s := sums(k, h)
					c.VPMADDWD(Y12, s, s)
					c.VPADDD(s, yr(2+k), yr(2+k))
				}
			}
		}
		dDminAVX2(Y12, Y13)
		for k := 0; k < tokens; k++ {
			zero(Y8)
			for j := 0; j < 8; j++ {
				c.VPMOVZXBD(mem(RSI, 96+8*j), Y9)
				c.VPBROADCASTD(mem(R8, q4KX8AVX2.frame*k+4*j), Y10)
				c.VPMULLD(Y10, Y9, Y9)
				c.VPADDD(Y9, Y8, Y8)
			}
			x8AddMinToken(k, yr(2+k), Y8, Y12, Y13, Y9, Y10, Y11)
		}
		nextColumn(x8KBlockBytes)
	},
}

// q80X8AVX2Multi is q80X8AVX2 for several tokens: each chunk's |w| (Y9)
// and the codes (Y8, for their signs) once, then per token its activation
// dword given those signs (Y10), the pairs to dwords and added to the
// token's block sum (Y4-Y7); per block and token q80X8AVX2's float work,
// the scales (Y8) converted once. Accumulators: Y0-Y3.
var q80X8AVX2Multi = x8Multi{d: q80X8AVX2,
	acc: func(k int) Register { return yr(k) },
	block: func(tokens, b, _ int) {
		blockX8AVX2Multi(blockQ8_0, 16, tokens, b, 8, func(int) {
			c.VPABSB(Y8, Y9)
		}, func(k, ch int, dst Register) {
			c.VPBROADCASTD(xTok(k, blockQ8_0.qx+4*ch), Y10)
			c.VPSIGNB(Y8, Y10, Y10)
			c.VPMADDUBSW(Y10, Y9, Y10)
			c.VPMADDWD(Y14, Y10, dst)
		}, c.VPADDD, func(k, b int, s Register) {
			c.VCVTDQ2PS(s, s)
			c.VBROADCASTSS(mem(R8, q80X8AVX2.frame*k+4*b), Y10)
			c.VMULPS(Y10, s, s)
		})
	},
}
