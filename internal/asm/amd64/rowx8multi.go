package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Multi-token X8 decode kernels: a small batch's tokens share each block
// column's unpacking, so T tokens cost one pass over the weights, not T.
//
//	row<T>X8{VNNI,AVX2}T<n>(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)
//
// sets out[k·os+8g+r] = row 8g+r · x_k for k < n (2 or 4; Q5_K and Q6_K,
// and Q4_K with AVX2, only 2, their loops need the registers; IQ4_XS also
// 8; the low-bit types' are in rowx8multi_lowbit.go) tokens, x_k at
// x+k·xs. Per token the integer sums and the float operations are the
// single-token kernel's, in its order, so each token's results equal it
// bit for bit. The frame holds each token's factors (d.pre's) d.frame
// bytes apart. General registers: as the single-token kernel's, plus R10
// xs, R14 3·xs, R11 os in bytes, and with more than four tokens AX
// DI+4·xs in the loop.

// x8Multi is the loop of a multi-token kernel: per iteration d.count
// blocks for tokens accumulators (loop), or, for a type of 32-element
// blocks, x8BlockLoops' over block (block b of the frame's eight). A
// block steps SI and DI past itself, or, when blk is set, addresses its
// block at blocks past them as they stand at the iteration's top, and
// the skeleton steps them past the iteration's blocks of blk (a kernel of
// more than four tokens needs this: AX is set at the top). setup, when
// not nil, sets constants the loop needs beyond d.pre's, once, after the
// frame is written. step, the weight bytes one iteration reads (of eight
// blocks for block), gives a VNNI kernel its twin that prefetches them
// (x8MultiPrefetch).
type x8Multi struct {
	d     x8Decoder
	loop  func(tokens int)
	blk   *blockType
	block func(tokens, b, at int)
	acc   func(k int) Register
	setup func()
	step  int
}

// x8MultiPrefetch is the prefetch of the multi-token VNNI kernels' twins:
// the single-token kernel's that Intel's AVX-512 cores take (quant's
// x8Default), each iteration's lines at its top, 4 KB ahead into L2. A
// small batch streams the weights as decode does, a few tokens' work per
// line instead of one.
var x8MultiPrefetch = x8Prefetch{dist: 4096, l2: true}

// emit writes m's kernel for tokens tokens, and its prefetching twin
// when it has one.
func (m x8Multi) emit(tokens int) {
	m.emitWith(tokens, x8Prefetch{})
	if m.d.w == vnni && m.step > 0 {
		m.emitWith(tokens, x8MultiPrefetch)
	}
}

// xTok is the activations of token k at disp from DI (k < 8; from 4 on
// from AX, which a kernel of more than four tokens sets to DI+4·xs at
// the top of its loop).
func xTok(k, disp int) Mem {
	base := RDI
	if k >= 4 {
		base, k = RAX, k-4
	}
	switch k {
	case 0:
		return mem(base, disp)
	case 1:
		return memx(base, disp, R10, 1)
	case 2:
		return memx(base, disp, R10, 2)
	}
	return memx(base, disp, R14, 1)
}

func (m x8Multi) emitWith(tokens int, pf x8Prefetch) {
	d := m.d
	text(fmt.Sprintf("%sT%d", rowX8Name(d.t, d.w, pf), tokens), 0, "func(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)")
	pre := c.AllocLocal(d.frame * tokens)
	loadArgs("x nb xs", RBX, R13, R10)
	c.LEAQ(pre, RDX)
	c.MOVQ(U32(uint32(tokens)), R9)
	label("tok")
	d.pre()
	c.ADDQ(R10, RBX)
	c.ADDQ(U32(uint32(d.frame)), RDX)
	decJNZ(R9, "tok")
	loadArgs("x", RBX)
	c.LEAQ(pre, RDX)
	c.LEAQ(memx(R10, 0, R10, 2), R14)
	loadArgs("w groups out os", RSI, R9, R12, R11)
	c.SHLQ(U8(2), R11)
	bcast32(0x0F0F0F0F, Y15)
	if m.setup != nil {
		m.setup()
	}
	label("group")
	c.MOVQ(RBX, RDI)
	c.MOVQ(RDX, R8)
	if m.block == nil {
		c.MOVQ(R13, RCX)
	}
	for k := 0; k < tokens; k++ {
		zero(m.acc(k))
	}
	top := func(blocks int) {
		prefetchX8(pf, 0, m.step*blocks/8)
		if tokens > 4 {
			c.LEAQ(memx(RDI, 0, R10, 4), RAX)
		}
	}
	if m.block != nil {
		x8BlockLoops(top, func(b, at int) { m.block(tokens, b, at) }, func(blocks int) {
			if m.blk != nil {
				c.ADDQ(U32(uint32(blocks*8*m.blk.wb)), RSI)
				c.ADDQ(U32(uint32(blocks*m.blk.xb)), RDI)
			}
		})
	} else {
		label("loop")
		top(8)
		m.loop(tokens)
		x8LoopEnd(d)
	}
	c.MOVQ(R12, RAX)
	for k := 0; k < tokens; k++ {
		c.VMOVUPS(m.acc(k), mem(RAX, 0))
		if k+1 < tokens {
			c.ADDQ(R11, RAX)
		}
	}
	c.ADDQ(U8(32), R12)
	decJNZ(R9, "group")
	retVoid()
}

// x8Acc is the usual place of token k's accumulator: Y0+k.
func x8Acc(k int) Register { return yr(k) }

// x8FinishTokens is x8Finish per token: acc_k += S_k·(d·d_x), the eight
// F16 d at SI converted once into d, with dx and t scratch.
func x8FinishTokens(tokens int, s, acc func(k int) Register, d, dx, t Register) {
	c.VCVTPH2PS(mem(RSI, 0), d)
	for k := 0; k < tokens; k++ {
		c.VCVTDQ2PS(s(k), s(k))
		c.VBROADCASTSS(xTok(k, 0), dx)
		c.VMULPS(dx, d, t)
		c.VFMADD231PS(t, s(k), acc(k))
	}
}

// x8Multis emits m's kernels for 2 and 4 tokens.
func x8Multis(m x8Multi) {
	m.emit(2)
	m.emit(4)
}

// x8Kernels emits an X8 family: d's decode kernels, then m's for 2 and 4
// tokens and, with eight, for 8.
func x8Kernels(d x8Decoder, m x8Multi, eight bool) {
	x8Decoders(d)
	x8Multis(m)
	if eight {
		m.emit(8)
	}
}

// q40X8Multi is q40X8 for several tokens: the block's nibbles (Y1-Y8) and
// scales (Y22) once, then per token its VPDPBUSDs, sum and two FMAs as
// q40X8 does them. Accumulators: Y0, Y23-Y25.
var q40X8Multi = x8Multi{d: q40X8, step: 8 * x8BlockBytes,
	acc: func(k int) Register { return []Register{Y0, Y23, Y24, Y25}[k] },
	block: func(tokens, b, _ int) {
		for ch := 0; ch < 4; ch++ {
			lo, hi := yr(1+ch), yr(5+ch)
			splitNibbles(mem(RSI, 16+32*ch), lo, hi)
		}
		c.VCVTPH2PS(mem(RSI, 0), Y22)
		for k := 0; k < tokens; k++ {
			for ch := 0; ch < 4; ch++ {
				q40ChunkDot(k, ch)
			}
			addDwords4(Y16, Y17, Y18, Y19)
			q40Scale(Y16, q40X8.frame*k+4*b, Y20, Y21)
			c.VFMADD231PS(Y22, Y16, []Register{Y0, Y23, Y24, Y25}[k])
		}
		x8NextBlock(blockQ4_0)
	},
}

// q4KX8Multi is q4KX8 for several tokens. Per pair of sub-blocks, each
// chunk of codes is split into nibbles once (Y24-Y27) and faces every
// token's activation dwords (Y28-Y31) into the token's two partial sums
// (Y16+k, Y20+k); S_k (Y4+k) = Σ_j sc_j·s_j. At the end of the column,
// per token, M = Σ_j m_j·Σy_j (Y10) and acc_k (Y0+k) += S·(d·d_x), −=
// M·(dmin·d_x), as x8FinishMin does them; d and dmin (Y11, Y12) are
// converted once. All sums are int32 and exact, so their order is free.
var q4KX8Multi = x8Multi{d: q4KX8, step: x8KBlockBytes,
	acc: x8Acc,
	loop: func(tokens int) {
		for k := 0; k < tokens; k++ {
			zero(yr(4 + k))
		}
		for p := 0; p < 4; p++ {
			for k := 0; k < tokens; k++ {
				zero(yr(16 + k))
				zero(yr(20 + k))
			}
			for g := 0; g < 8; g++ {
				kk := 8*p + g
				lo, hi := yr(24+g%2*2), yr(25+g%2*2)
				c.VMOVDQU32(mem(RSI, 160+32*kk), lo)
				c.VPSRLW(U8(4), lo, hi)
				c.VPANDD(Y15, lo, lo)
				c.VPANDD(Y15, hi, hi)
				for k := 0; k < tokens; k++ {
					xl, xh := yr(28+k%2*2), yr(29+k%2*2)
					c.VPBROADCASTD(xTok(k, 4+32*(2*p)+4*g), xl)
					c.VPBROADCASTD(xTok(k, 4+32*(2*p+1)+4*g), xh)
					VPDPBUSD(xl, lo, yr(16+k))
					VPDPBUSD(xh, hi, yr(20+k))
				}
			}
			for h := 0; h < 2; h++ {
				j := 2*p + h
				c.VPMOVZXBD(mem(RSI, 32+8*j), Y8)
				for k := 0; k < tokens; k++ {
					c.VPMULLD(yr(16+4*h+k), Y8, Y9)
					c.VPADDD(Y9, yr(4+k), yr(4+k))
				}
			}
		}
		dDmin(Y13, Y11, Y12)
		for k := 0; k < tokens; k++ {
			zero(Y10)
			for j := 0; j < 8; j++ {
				c.VPMOVZXBD(mem(RSI, 96+8*j), Y8)
				c.VPMULLD_BCST(mem(R8, q4KX8.frame*k+4*j), Y8, Y8)
				c.VPADDD(Y8, Y10, Y10)
			}
			x8AddMinToken(k, yr(4+k), Y10, Y11, Y12, Y13, Y14, Y9)
		}
		nextColumn(x8KBlockBytes)
	},
}

// q80X8Multi is q80X8 for several tokens: the block's chunks made
// unsigned (Y1-Y8) and its scales (Y22) once, then per token its
// VPDPBUSDs, correction, product and FMA as q80X8 does them.
// Accumulators: Y0, Y23-Y25.
var q80X8Multi = x8Multi{d: q80X8, step: 8 * 8 * blockQ8_0.wb,
	acc: func(k int) Register { return []Register{Y0, Y23, Y24, Y25}[k] },
	block: func(tokens, b, _ int) {
		t := blockQ8_0
		for ch := 0; ch < 8; ch++ {
			c.VPXORD(mem(RSI, 16+32*ch), Y14, yr(1+ch))
		}
		c.VCVTPH2PS(mem(RSI, 0), Y22)
		for k := 0; k < tokens; k++ {
			for _, a := range []Register{Y16, Y17, Y18, Y19} {
				zero(a)
			}
			for ch := 0; ch < 8; ch++ {
				x := yr(9 + ch%4)
				c.VPBROADCASTD(xTok(k, t.qx+4*ch), x)
				VPDPBUSD(x, yr(1+ch), yr(16+ch%4))
			}
			addDwords4(Y16, Y17, Y18, Y19)
			c.VPSUBD_BCST(mem(R8, q80X8.frame*k+32+4*b), Y16, Y16)
			c.VCVTDQ2PS(Y16, Y16)
			c.VBROADCASTSS(mem(R8, q80X8.frame*k+4*b), Y20)
			c.VMULPS(Y20, Y16, Y16)
			c.VFMADD231PS(Y22, Y16, []Register{Y0, Y23, Y24, Y25}[k])
		}
		x8NextBlock(t)
	},
}

// q6KX8Multi is q6KX8 for two tokens (four would need more registers):
// each group of four elements' values (Y16-Y19) built once from its
// chunks, then faced with each token's activation dwords (Y24-Y27) into
// the token's four sub-block sums (Y3-Y6, Y20-Y23); S_k (Y2, Y28) +=
// sc_j·(s_j − 32·Σy_j), and at the end acc_k (Y0, Y1) += S·(d·d_x) as
// x8Finish does it, d (Y29) converted once.
var q6KX8Multi = x8Multi{d: q6KX8, step: x8Q6BlockBytes,
	acc: x8Acc,
	loop: func(tokens int) {
		sums := func(k, q int) Register { return yr([]int{3, 20}[k] + q) }
		sAcc := func(k int) Register { return []Register{Y2, Y28}[k] }
		for k := 0; k < tokens; k++ {
			zero(sAcc(k))
		}
		for h := 0; h < 2; h++ {
			for lh := 0; lh < 2; lh++ {
				for k := 0; k < tokens; k++ {
					for q := 0; q < 4; q++ {
						zero(sums(k, q))
					}
				}
				for g := 4 * lh; g < 4*lh+4; g++ {
					at := 144 + 96*(8*h+g)
					q6X8Chunks(at)
					for q := 0; q < 4; q++ {
						c.VPORD(yr(10+q), yr(16+q), yr(16+q))
					}
					for k := 0; k < tokens; k++ {
						for q := 0; q < 4; q++ {
							x := yr(24 + q)
							c.VPBROADCASTD(xTok(k, 4+128*h+32*q+4*g), x)
							VPDPBUSD(x, yr(16+q), sums(k, q))
						}
					}
				}
				for q := 0; q < 4; q++ {
					j := 8*h + 2*q + lh
					c.VPMOVSXBD(mem(RSI, 16+8*j), Y29)
					for k := 0; k < tokens; k++ {
						s := sums(k, q)
						c.VPSUBD_BCST(mem(R8, q6KX8.frame*k+4*j), s, s)
						c.VPMULLD(s, Y29, Y30)
						c.VPADDD(Y30, sAcc(k), sAcc(k))
					}
				}
			}
		}
		x8FinishTokens(tokens, sAcc, x8Acc, Y29, Y30, Y31)
		nextColumn(x8Q6BlockBytes)
	},
}

// q5KX8Multi is q5KX8 for two tokens: each pair's values (Y11, Y12, with
// qh in Y10) built once and faced with each token's activation dwords
// (Y25, Y26) into the token's eight sub-block sums (Y2-Y9, Y16-Y23); at
// the end per token S (Y27) and M (Y29) as q5KX8's and acc_k (Y0, Y1) as
// x8FinishMin does it, d and dmin (Y11, Y12) converted once.
var q5KX8Multi = x8Multi{d: q5KX8, step: x8Q5BlockBytes,
	acc: x8Acc,
	loop: func(tokens int) {
		sums := func(k, j int) Register { return yr([]int{2, 16}[k] + j) }
		for k := 0; k < tokens; k++ {
			for j := 0; j < 8; j++ {
				zero(sums(k, j))
			}
		}
		for g := 0; g < 8; g++ {
			at := 160 + 160*g
			c.VMOVDQU32(mem(RSI, at), Y10)
			for p := 0; p < 4; p++ {
				lo, hi, sl, sh := Y11, Y12, Y13, Y24
				q5KX8Pair(at, p, Y10, lo, hi, sl, sh)
				for k := 0; k < tokens; k++ {
					c.VPBROADCASTD(xTok(k, 4+32*(2*p)+4*g), Y25)
					c.VPBROADCASTD(xTok(k, 4+32*(2*p+1)+4*g), Y26)
					VPDPBUSD(Y25, lo, sums(k, 2*p))
					VPDPBUSD(Y26, hi, sums(k, 2*p+1))
				}
			}
		}
		dDmin(Y13, Y11, Y12)
		for k := 0; k < tokens; k++ {
			q5KX8SM(func(j int) Register { return sums(k, j) }, q5KX8.frame*k, Y27, Y29, Y28, Y30)
			x8AddMinToken(k, Y27, Y29, Y11, Y12, Y13, Y30, Y31)
		}
		nextColumn(x8Q5BlockBytes)
	},
}
