package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The X8 kernels of IQ4_NL, MXFP4 and IQ3_S (quant's x8_lowbit.go for
// the layouts), AVX-512 VNNI only:
//
//	row<T>X8VNNI[NTA<d>](w *byte, groups int, x *byte, nb int, out *float32)
//	row<T>X8VNNIT<n>(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)
//
// IQ4_NL is Q4_0's layout whose nibbles index the non-linear levels, so
// its kernels are Q4_0's with a VPSHUFB per nibble register and Q8_0's
// exact integer correction (the levels plus 128 against y, less 128·Σy).
// MXFP4 ("IQ4_NL with other levels and an E8M0 scale", dotblock.go) is
// IQ4_NL's kernels over its own layout: the rows' E8M0 bytes in eight
// bytes where IQ4_NL has sixteen of F16, converted in the kernel.
// IQ3_S's 9-bit grid indexes would need a gather per four elements in
// the kernel (its row kernel is gather-bound); its repack resolves the
// grid at load time into IQ4_XS's X8 layout, one 4-bit code per element
// (three bits of magnitude index, one of sign) and the scales 1+2s as
// int8, so its kernels are IQ4_XS's with another table.

// iq3sX8Table is IQ3_S's code table for lutX8: code c stands for
// ±(2(c&7)+1), negative when c&8 is set, plus 128.
func iq3sX8Table() Mem {
	b := make([]byte, 16)
	for i := range b {
		v := 2*(i&7) + 1
		if i&8 != 0 {
			v = -v
		}
		b[i] = byte(v + 128)
	}
	return bytesTable("iq3sX8Biased", b)
}

// iq3SX8 and iq3SX8Multi are IQ4_XS's X8 kernels over IQ3_S's levels.
var (
	iq3SX8      = lutX8("IQ3_S", iq3sX8Table)
	iq3SX8Multi = x8Multi{d: iq3SX8, acc: x8Acc, loop: iq4XSX8Multi.loop, step: x8IQ4XSBytes}
)

// iq4NLX8 is IQ4_NL's decode kernel: eight blocks an iteration, the
// frame q80X8's (d_x and 128·Σy of each activation block). Per block and
// group: the four chunks split into nibbles, looked up as the levels
// plus 128 (VPSHUFB), VPDPBUSD against the activation dwords, 128·Σy
// subtracted, so the sums are exact, then q80X8's float operations.
//
// The activation dwords reach the VPDPBUSDs by embedded broadcast
// (BenchmarkX8Lowbit, from the L2 cache: 10 % faster than with
// VPBROADCASTD).
//
// Registers: Y0 the rows' sums, Y1-Y4 the chunks' low nibbles, Y5-Y8
// their high ones, Y14 the level table, Y15 the 0x0F mask, Y16-Y19 the
// chunks' integer sums, Y20 d_x, Y21 scratch, Y22 the scales. General:
// as Q4_0's.
var iq4NLX8 = lutBlockX8(blockIQ4NL)

// mxfp4X8 is MXFP4's decode kernel: IQ4_NL's over MXFP4's layout (the
// eight E8M0 bytes, then the chunks at 8) and levels, each block
// column's exponents made the floats 2^(e−128) (e8m0Float) where IQ4_NL
// converts its F16 scales.
var mxfp4X8 = lutBlockX8(blockMXFP4)

// lutBlockX8 is the decode kernel of a 32-element block type t whose
// nibbles index levels (IQ4_NL, MXFP4): see iq4NLX8.
func lutBlockX8(t *blockType) x8Decoder { return blockX8(t, lutX8Values(t)) }

// x8Values is how the X8 kernels of a 32-element block type (blockX8)
// make a block column's values: bias is the bytes x8PreOf faces the
// activations with (bias·Σy, the integer taken off each sum), consts
// sets Y14 once the frame is written, and chunk leaves chunk ch of the
// column at w from SI in lo (its low nibbles' values) and hi (its high
// ones'), with Y10-Y12 free for it.
type x8Values struct {
	bias   uint32
	consts func()
	chunk  func(w, ch int, lo, hi Register)
}

// lutX8Values are the values of IQ4_NL and MXFP4: the nibbles looked up
// as their levels plus 128, the table in Y14.
func lutX8Values(t *blockType) x8Values {
	return x8Values{bias: 0x80808080,
		consts: func() { c.VBROADCASTI128(t.lutTable(true), Y14) },
		chunk:  func(w, ch int, lo, hi Register) { lutX8Levels(w+x8CodesAt(t)+32*ch, lo, hi) },
	}
}

// blockX8 is the decode kernel of a 32-element block type t whose
// values v makes: iq4NLX8's, with v's values and bias.
func blockX8(t *blockType, v x8Values) x8Decoder {
	return x8Decoder{w: vnni, t: t.name, frame: 8 * rowMaxBlocks,
		pre: func() {
			x8PreOf(t, v.bias, false)
			v.consts()
		},
		block: func(pf x8Prefetch, b int) {
			prefetchX8(pf, 0, 8*t.wb)
			for ch := 0; ch < 4; ch++ {
				lo, hi, acc := yr(1+ch), yr(5+ch), yr(16+ch)
				v.chunk(0, ch, lo, hi)
				zero(acc)
				VPDPBUSDBcast(mem(RDI, t.qx+4*ch), lo, acc)
				VPDPBUSDBcast(mem(RDI, t.qx+16+4*ch), hi, acc)
			}
			addDwords4(Y16, Y17, Y18, Y19)
			iq4NLScale(Y16, 4*b, Y20)
			x8Scales(t, 0, Y22, Y21)
			c.VFMADD231PS(Y22, Y16, Y0)
			x8NextBlock(t)
		},
	}
}

// x8CodesAt is the offset of the code chunks in an X8 block column of
// a 32-element block type t: past the eight rows' scales, F16 or E8M0,
// and Q5_0's fifth bits.
func x8CodesAt(t *blockType) int {
	switch {
	case t.e8m0:
		return 8
	case t.hbits:
		// Q5_0: past the scales, the rows' fifth bits.
		return 48
	}
	return 16
}

// x8Scales converts the eight rows' scales of t at disp from SI to
// floats in dst: F16, or E8M0 bytes made 2^(e−128) through tmp.
func x8Scales(t *blockType, disp int, dst, tmp Register) {
	if !t.e8m0 {
		c.VCVTPH2PS(mem(RSI, disp), dst)
		return
	}
	c.VPMOVZXBD(mem(RSI, disp), dst)
	e8m0Float(dst, tmp)
}

// lutX8Levels leaves the levels plus 128 of the chunk at disp from SI in
// lo (low nibbles) and hi (high ones): Y14 holds the table, Y15 the 0x0F
// mask.
func lutX8Levels(disp int, lo, hi Register) {
	splitNibbles(mem(RSI, disp), lo, hi)
	c.VPSHUFB(lo, Y14, lo)
	c.VPSHUFB(hi, Y14, hi)
}

// iq4NLScale turns a block's dword sums s into the exact Σ level·y
// (128·Σy taken off, from the frame at disp+32 from R8) as floats times
// d_x (at disp), through dx.
func iq4NLScale(s Register, disp int, dx Register) {
	c.VPSUBD_BCST(mem(R8, disp+32), s, s)
	c.VCVTDQ2PS(s, s)
	c.VBROADCASTSS(mem(R8, disp), dx)
	c.VMULPS(dx, s, s)
}

// iq4NLX8Multi is iq4NLX8 for several tokens: the block's levels (Y1-Y8)
// and scales (Y22, through Y9) once, then per token its VPDPBUSDs (the
// activation dwords by embedded broadcast), correction, product and FMA
// as iq4NLX8 does them. Accumulators: Y0 and Y23-Y29; the token's two
// partial sums Y16+2(k%2), Y17+2(k%2), d_x Y20. The eight blocks of an
// iteration are addressed from SI and DI (and AX, tokens 4-7) as they
// stand at its top.
var iq4NLX8Multi = lutBlockX8Multi(iq4NLX8, blockIQ4NL)

// mxfp4X8Multi is mxfp4X8 for several tokens, as iq4NLX8Multi.
var mxfp4X8Multi = lutBlockX8Multi(mxfp4X8, blockMXFP4)

// lutBlockX8Multi is d, lutBlockX8(t), for several tokens: see
// iq4NLX8Multi.
func lutBlockX8Multi(d x8Decoder, t *blockType) x8Multi {
	return blockX8Multi(d, t, lutX8Values(t))
}

// blockX8Multi is d, blockX8(t, v), for several tokens: iq4NLX8Multi
// with v's values.
func blockX8Multi(d x8Decoder, t *blockType, v x8Values) x8Multi {
	return x8Multi{d: d, step: 8 * 8 * t.wb, blk: t,
		acc: iq4NLAcc,
		block: func(tokens, b, at int) {
			w, x := 8*t.wb*at, t.xb*at
			for ch := 0; ch < 4; ch++ {
				v.chunk(w, ch, yr(1+ch), yr(5+ch))
			}
			x8Scales(t, w, Y22, Y9)
			for k := 0; k < tokens; k++ {
				s0, s1 := yr(16+2*(k%2)), yr(17+2*(k%2))
				zero(s0)
				zero(s1)
				for ch := 0; ch < 4; ch++ {
					s := []Register{s0, s1}[ch%2]
					VPDPBUSDBcast(xTok(k, x+t.qx+4*ch), yr(1+ch), s)
					VPDPBUSDBcast(xTok(k, x+t.qx+16+4*ch), yr(5+ch), s)
				}
				c.VPADDD(s1, s0, s0)
				iq4NLScale(s0, d.frame*k+4*b, Y20)
				c.VFMADD231PS(Y22, s0, iq4NLAcc(k))
			}
		},
	}
}

// iq4NLAcc is token k's accumulator in iq4NLX8Multi: Y0, then Y23-Y29.
func iq4NLAcc(k int) Register {
	if k == 0 {
		return Y0
	}
	return yr(22 + k)
}
