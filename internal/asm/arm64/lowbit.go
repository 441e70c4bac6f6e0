package main

import (
	"fmt"
	"math"
)

// The low-bit super-block types against Q8_K activations: Q2_K, Q3_K,
// IQ4_XS and IQ3_S (IQ4_NL, a 32-element type against Q8_0, is a q32Type
// in quant.go). Each twin sums one super-block's integer products exactly
// in int32, in any order, and then does one short float step per block
// (see superType.float); the kernels do the same per lane, one lane per
// row.
//
// Unlike genQK45 and genQ6K, which interleave the rows of a tile inside
// each block, these kernels run the rows of a tile one after another
// within a block: a row's scales (decoded from packed bits, per row) then
// stay in registers for the whole block, and the activations, re-read per
// row, come from L1. Per row the integer sums of each 16- or 32-element
// group land in a 4-lane int32 vector, multiplied by the group's scale
// (MLA by element); the rows' vectors are reduced to one lane per row at
// the end of the block.

// General registers of the low-bit kernels, beside those of newKernel
// (R4 the block count, R7–R10 the rows, R11 the column): R0–R3, R5, R6
// and R12–R17 are free inside the loop.
const (
	rXq   XReg = 12 // walks the activation quants of the block
	rWq   XReg = 13 // walks the weight quants
	rWq2  XReg = 14 // a second walk over the weights (IQ3_S signs)
	rGrid XReg = 17 // IQ3_S: the lattice table
)

// rGather are the scratch registers of the IQ3_S gather.
var rGather = [...]XReg{0, 1, 2, 3, 5, 6}

// vconst sets d to the 128 bits hi:lo through rTmp.
func (k *kfn) vconst(d VReg, lo, hi uint64) {
	k.Op("MOVD $0x%016x, R%d", lo, rTmp)
	k.I(DUPg(D2, d, rTmp))
	if hi != lo {
		k.Op("MOVD $0x%016x, R%d", hi, rTmp)
		k.I(INSg(D1, d, 1, rTmp))
	}
}

// bytesConst packs 8 bytes little-endian.
func bytesConst(b ...int) uint64 {
	var v uint64
	for i, x := range b {
		v |= uint64(uint8(x)) << (8 * i)
	}
	return v
}

// scaleWords widens the first 4·n bytes of src (signed) to n vectors of
// int32 words, for MLA by element; src is freed.
func (k *kfn) scaleWords(src VReg, n int) []VReg {
	ws := k.rg.many(n)
	t := k.rg.get()
	for half := 0; half < (n+1)/2; half++ {
		a := B8
		if half == 1 {
			a = B16
		}
		k.I(SSHLL(a, t, src, 0), SSHLL(H4, ws[2*half], t, 0))
		if 2*half+1 < n {
			k.I(SSHLL(H8, ws[2*half+1], t, 0))
		}
	}
	k.rg.put(t, src)
	return ws
}

// superType is a 256-element weight type against Q8_K.
type superType struct {
	name, file string
	bytes      int  // bytes per block
	dOff       int  // offset of the fp16 d (dmin follows it when mins)
	mins       bool // a second sum, Σ m·bsums, scaled by dmin (Q2_K)
	// bsums loads the activations' block sums for row without mins (the
	// ternary types take Σ y off isum); unfused scales the block's sum
	// as sum += float32(isum)·(d·dy) with a rounding after the product,
	// as the twins that convert it explicitly compile.
	bsums, unfused bool
	doc            string
	consts         func(k *kfn) []VReg
	// row emits one row's block (p at its start, rXq at the activation
	// quants) and returns its integer sums as 4-lane vectors: isum, and
	// for mins the min sum (bs holds the activations' bsums as 16 halves).
	row func(k *kfn, p XReg, c []VReg, bs VReg) (isum, summ VReg)
	// dBits, unless nil, sets halfword lane r of dd (its other lanes free
	// to change) to the fp16 bits of row r's d, p at the row's block, in
	// place of the load from dOff (IQ1_M).
	dBits func(k *kfn, c []VReg, dd VReg, r int, p XReg)
	// isumScale, unless 0, multiplies the block's float32(isum) (exactly:
	// a power of two) before the fused multiply-add (the IQ1 types, whose
	// isum is 8× the twin's integer sum plus its 1/8-weighted one); final,
	// unless 0, multiplies the total (IQ3_XXS's 1/4).
	isumScale, final float32
}

// genSuper writes the dot kernel (h 1) or 4×1 tile (h 4) of t. The float
// step per block and lane follows the twins as Go compiles them for arm64:
//
//	sum = fma(d·dy, float32(isum), sum)                       (Q3_K, IQ4_XS, IQ3_S, IQ3_XXS, IQ2_*)
//	sum = fma(d·dy, float32(isum)·isumScale, sum)             (IQ1_S, IQ1_M: see iq.go)
//	sum += ((d·dy)·float32(isum) − fused (dmin·dy)·float32(summ)) (Q2_K, as Q4_K)
//	sum += float32(isum)·(d·dy), unfused                        (TQ1_0, TQ2_0)
//
// and the types whose twin scales its total (final: IQ3_XXS 0.25, the IQ2
// types 0.125) multiply once after the loop.
func genSuper(f *File, t superType, lvl level, h int) {
	k := newKernel(f, lvl, kernelName(t.name, lvl, h, 1), h, 1)
	c := t.consts(k)
	acc := k.zeroAcc(1)[0]
	fc := VReg(255) // isumScale in lane 0, final in lane 1
	if t.isumScale != 0 || t.final != 0 {
		fc = k.rg.get()
		k.vconst(fc, uint64(math.Float32bits(t.isumScale))|uint64(math.Float32bits(t.final))<<32, 0)
	}
	xp := k.col(0)
	k.Loop("loop", h, fmt.Sprintf("%d×1 blocks of 256", h))
	bs := VReg(255)
	if t.mins || t.bsums {
		bs = k.rg.getN(2)
		k.Op("ADD $260, R%d, R%d", xp, rTmp)
		k.I(LD1(H8, bs, 2, rTmp, 0))
	}
	isum, summ := make([]VReg, h), make([]VReg, h)
	for r := 0; r < h; r++ {
		k.Op("ADD $4, R%d, R%d", xp, rXq)
		isum[r], summ[r] = t.row(k, k.row(r), c, bs)
		k.pairSums(isum, r)
		if t.mins {
			k.pairSums(summ, r)
		}
	}
	if t.mins || t.bsums {
		k.rg.putN(bs, 2)
	}
	si := k.finishRowSums(isum)
	dd, dy := k.rg.get(), k.rg.get()
	k.I(LD1R(S4, dy, xp, 0))
	for r := 0; r < h; r++ {
		p := k.row(r)
		if t.dOff != 0 {
			k.Op("ADD $%d, R%d, R%d", t.dOff, p, rTmp)
			p = rTmp
		}
		if t.dBits != nil {
			t.dBits(k, c, dd, r, k.row(r))
		} else if t.mins {
			k.I(LD1L(S2, dd, r, p, 0))
		} else {
			k.I(LD1L(H4, dd, r, p, 0))
		}
	}
	k.I(SCVTF(S4, si, si))
	if t.isumScale != 0 {
		k.I(FMULe(S4, si, si, fc, 0))
	}
	if t.mins {
		sm := k.finishRowSums(summ)
		dm := k.rg.get()
		k.I(SCVTF(S4, sm, sm), UZP2(H8, dm, dd, dd), UZP1(H8, dd, dd, dd), FCVTL(H4, dd, dd), FCVTL(H4, dm, dm),
			FMUL(S4, dd, dd, dy), FMUL(S4, dm, dm, dy),
			FMUL(S4, dd, dd, si), FMLS(S4, dd, dm, sm), FADD(S4, acc, acc, dd))
		k.rg.put(sm, dm)
	} else if t.unfused {
		k.I(FCVTL(H4, dd, dd), FMUL(S4, dd, dd, dy), FMUL(S4, dd, dd, si), FADD(S4, acc, acc, dd))
	} else {
		k.I(FCVTL(H4, dd, dd), FMUL(S4, dd, dd, dy), FMLA(S4, acc, si, dd))
	}
	k.rg.put(si, dd, dy)
	for r := 0; r < h; r++ {
		k.Op("ADD $%d, R%d, R%d", t.bytes, k.row(r), k.row(r))
	}
	k.Op("ADD $292, R%d, R%d", xp, xp)
	k.loopEnd()
	if t.final != 0 {
		k.I(FMULe(S4, acc, acc, fc, 1))
	}
	k.finish([]VReg{acc})
}

// twoBits sets lo (two registers) to bits 2j..2j+1 of each byte of q.
func (k *kfn) twoBits(lo, q [2]VReg, j int, k03 VReg) {
	for i := 0; i < 2; i++ {
		switch j {
		case 0:
			k.I(AND(B16, lo[i], q[i], k03))
		case 3:
			k.I(USHR(B16, lo[i], q[i], 6))
		default:
			k.I(USHR(B16, lo[i], q[i], 2*j), AND(B16, lo[i], lo[i], k03))
		}
	}
}

// groupDots adds, for the 32 signed bytes w (two registers) against the
// next 32 activation bytes at rXq, each 16-element half's dot product
// times its scale (word g%4 of ws[g/4], g = g0, g0+1) into ir.
func (k *kfn) groupDots(ir VReg, w [2]VReg, ws []VReg, g0 int) {
	x := k.rg.getN(2)
	k.I(LD1(B16, x, 2, rXq, 32))
	for i := 0; i < 2; i++ {
		g := g0 + i
		s := k.dot16(w[i], x+VReg(i))
		k.I(MLAe(S4, ir, s, ws[g/4], g%4))
		k.rg.put(s)
	}
	k.rg.putN(x, 2)
}

// blockDot adds, for the 32 small signed bytes w (two registers, freed)
// against the next 32 activation bytes at rXq, their dot product times
// block b's scale (word b%4 of ws[b/4]) into ir.
func (k *kfn) blockDot(ir VReg, w [2]VReg, ws []VReg, b int) {
	x := k.rg.getN(2)
	k.I(LD1(B16, x, 2, rXq, 32))
	s := k.dot32(w, [2]VReg{x, x + 1}, true)
	k.I(MLAe(S4, ir, s, ws[b/4], b%4))
	k.rg.put(s, w[0], w[1])
	k.rg.putN(x, 2)
}

// blockDots adds the eight 32-weight blocks of a super-block into ir by
// blockDot, block b's weights made into two registers by weights(b), then
// frees the scale words ws and returns what row returns for a type
// without mins.
func (k *kfn) blockDots(ir VReg, ws []VReg, weights func(b int) [2]VReg) (isum, summ VReg) {
	for b := 0; b < 8; b++ {
		k.blockDot(ir, weights(b), ws, b)
	}
	k.rg.put(ws...)
	return ir, 255
}

// signs negates the bytes of g where their sign bit is set, (g ^ m) - m:
// the bit of each byte's lane (kbits) picked out of s, whose bytes ks01
// and ks23 spread over g[0]'s and g[1]'s lanes.
func (k *kfn) signs(g [2]VReg, s, ks01, ks23, kbits VReg) {
	for i, ks := range []VReg{ks01, ks23} {
		m := k.rg.get()
		k.I(TBL(B16, m, s, 1, ks), CMTST(B16, m, m, kbits), EOR(B16, g[i], g[i], m), SUB(B16, g[i], g[i], m))
		k.rg.put(m)
	}
}

// Q2_K: see quant/q2_k.go. Scale codes sc_g in the low nibbles of bytes
// 0..15, min codes m_g in the high ones; quants (0..3) in the Q2_K order.
var q2K = superType{
	name: "Q2_K", file: "q2_k", bytes: 84, dOff: 80, mins: true,
	consts: func(k *kfn) []VReg {
		k03, k0f := k.rg.get(), k.rg.get()
		k.I(MOVI(B16, k03, 3, 0), MOVI(B16, k0f, 0x0f, 0))
		return []VReg{k03, k0f}
	},
	row: func(k *kfn, p XReg, c []VReg, bs VReg) (VReg, VReg) {
		k03, k0f := c[0], c[1]
		sc, m := k.rg.get(), k.rg.get()
		k.I(LDR(16, sc, p, 0), USHR(B16, m, sc, 4), AND(B16, sc, sc, k0f))
		// Σ m_g·bsums_g in int32 lanes.
		summ, t0, t1 := k.rg.get(), k.rg.get(), k.rg.get()
		k.I(USHLL(B8, t0, m, 0), USHLL(B16, t1, m, 0),
			SMULL(H4, summ, t0, bs), SMLAL(H8, summ, t0, bs), SMLAL(H4, summ, t1, bs+1), SMLAL(H8, summ, t1, bs+1))
		k.rg.put(t0, t1, m)
		ws := k.scaleWords(sc, 4)
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		k.twoBitGroups(ir, p, 16, k03, ws, nil)
		k.rg.put(ws...)
		return ir, summ
	},
}

// twoBitGroups adds into ir the dot products of the 2-bit quants at p+off
// (two halves of 32 bytes, four shifts of each, the Q2_K order) with the
// activations, group pair (hh, j) scaled from ws; adjust, unless nil,
// changes a pair's 32 values first.
func (k *kfn) twoBitGroups(ir VReg, p XReg, off int, k03 VReg, ws []VReg, adjust func(lo [2]VReg, hh, j int)) {
	for hh := 0; hh < 2; hh++ {
		q := [2]VReg{k.rg.get(), k.rg.get()}
		k.I(LDR(16, q[0], p, off+32*hh), LDR(16, q[1], p, off+16+32*hh))
		for j := 0; j < 4; j++ {
			lo := [2]VReg{k.rg.get(), k.rg.get()}
			k.twoBits(lo, q, j, k03)
			if adjust != nil {
				adjust(lo, hh, j)
			}
			k.groupDots(ir, lo, ws, 8*hh+2*j)
			k.rg.put(lo[0], lo[1])
		}
		k.rg.put(q[0], q[1])
	}
}

// Q3_K: see quant/q3_k.go. Sixteen 6-bit scale codes packed in 12 bytes
// at 96 (low nibbles in bytes 0..7, top two bits in 8..11), the high bits
// in hmask at 0, the low two bits at 32 in the Q2_K order.
var q3K = superType{
	name: "Q3_K", file: "q3_k", bytes: 110, dOff: 108,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(6)
		// k03, k04, k0f, k30, k20, and the shifts that bring the top bits
		// of scale g = 4i+b (bits 2i..2i+1 of byte 8+b) to bits 4..5.
		k.I(MOVI(B16, c[0], 3, 0), MOVI(B16, c[1], 4, 0), MOVI(B16, c[2], 0x0f, 0),
			MOVI(B16, c[3], 0x30, 0), MOVI(B16, c[4], 0x20, 0))
		k.vconst(c[5], bytesConst(4, 4, 4, 4, 2, 2, 2, 2), bytesConst(0, 0, 0, 0, -2, -2, -2, -2))
		return c
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		k03, k04, k0f, k30, k20, ksh := c[0], c[1], c[2], c[3], c[4], c[5]
		// Low nibbles of bytes 0..7 are scales 0..7, their high nibbles
		// scales 8..15; the top bits come from bytes 8..11.
		sc, hi, t := k.rg.get(), k.rg.get(), k.rg.get()
		k.I(LDR(8, sc, p, 96), LDR(4, t, p, 104),
			USHR(B8, hi, sc, 4), AND(B8, sc, sc, k0f), INSe(D1, sc, 1, hi, 0),
			DUPe(S4, t, t, 0), USHL(B16, t, t, ksh), AND(B16, t, t, k30), ORR(B16, sc, sc, t), SUB(B16, sc, sc, k20))
		k.rg.put(t, hi)
		ws := k.scaleWords(sc, 4)
		m := [2]VReg{k.rg.get(), k.rg.get()}
		k.I(LDR(16, m[0], p, 0), LDR(16, m[1], p, 16))
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		bit := k.rg.get()
		k.twoBitGroups(ir, p, 32, k03, ws, func(lo [2]VReg, hh, j int) {
			// Minus 4 where bit 4hh+j of hmask is clear.
			k.I(MOVI(B16, bit, uint8(1)<<(4*hh+j), 0))
			for i := 0; i < 2; i++ {
				hb := k.rg.get()
				k.I(CMTST(B16, hb, m[i], bit), BIC(B16, hb, k04, hb), SUB(B16, lo[i], lo[i], hb))
				k.rg.put(hb)
			}
		})
		k.rg.put(bit, m[0], m[1])
		k.rg.put(ws...)
		return ir, 255
	},
}

// iq4Table loads the sixteen IQ4_NL levels (quant.iq4nlValues) into d, for
// TBL.
func (k *kfn) iq4Table(d VReg) {
	k.vconst(d, bytesConst(-127, -104, -83, -65, -49, -35, -22, -10), bytesConst(1, 13, 25, 38, 53, 69, 89, 113))
}

// IQ4_XS: see quant/iq4_xs.go. d at 0, the scales' top bits as a uint16
// at 2, their low nibbles at 4, then eight sub-blocks of 16 code bytes.
var iq4XS = superType{
	name: "IQ4_XS", file: "iq4_xs", bytes: 136, dOff: 0,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(5)
		// k0f, k30, k20, the level table, and the shifts that bring bits
		// 2b..2b+1 of scales_h to bits 4..5 of halfword b.
		k.I(MOVI(B16, c[0], 0x0f, 0), MOVI(B16, c[1], 0x30, 0), MOVI(B16, c[2], 0x20, 0))
		k.iq4Table(c[3])
		sh := func(b int) uint64 { return uint64(uint16(int16(4 - 2*b))) }
		k.vconst(c[4], sh(0)|sh(1)<<16|sh(2)<<32|sh(3)<<48, sh(4)|sh(5)<<16|sh(6)<<32|sh(7)<<48)
		return c
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		k0f, k30, k20, tab, ksh := c[0], c[1], c[2], c[3], c[4]
		a, lo, t := k.rg.get(), k.rg.get(), k.rg.get()
		// Bytes 4..7 hold the low nibbles, sub-block b in nibble b%2 of
		// byte 4+b/2.
		k.I(LDR(8, a, p, 0), AND(B8, lo, a, k0f), USHR(B8, t, a, 4), ZIP2(B8, lo, lo, t),
			DUPe(H8, t, a, 1), USHL(H8, t, t, ksh), XTN(B8, t, t), AND(B8, t, t, k30),
			ORR(B8, lo, lo, t), SUB(B8, lo, lo, k20))
		k.rg.put(a, t)
		ws := k.scaleWords(lo, 2)
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		k.Op("ADD $8, R%d, R%d", p, rWq)
		return k.blockDots(ir, ws, func(int) [2]VReg {
			w := [2]VReg{k.rg.get(), k.rg.get()}
			k.I(LD1(B16, w[1], 1, rWq, 16), AND(B16, w[0], w[1], k0f), USHR(B16, w[1], w[1], 4),
				TBL(B16, w[0], tab, 1, w[0]), TBL(B16, w[1], tab, 1, w[1]))
			return w
		})
	},
}

// IQ3_S: see quant/iq3_s.go. d at 0, the index low bytes at 2, their
// ninth bits at 66 (a byte per sub-block), the sign bits at 74, the
// 4-bit scale codes at 106. NEON has no gather: each group's lattice
// entry is loaded from quant.iq3sGrid through general registers, two
// groups' entries making one doubleword lane.
var iq3S = superType{
	name: "IQ3_S", file: "iq3_s", bytes: 110, dOff: 0,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(6)
		// k0f, k01, the bit of each byte's lane (1, 2, …, 128, twice),
		// TBL indexes spreading sign bytes 0,1 and 2,3 over 8 bytes each,
		// and 0x0400 per halfword (the ninth index bit, times 4).
		k.I(MOVI(B16, c[0], 0x0f, 0), MOVI(B16, c[1], 1, 0))
		bits := bytesConst(1, 2, 4, 8, 16, 32, 64, 128)
		k.vconst(c[2], bits, bits)
		k.vconst(c[3], 0, 0x0101010101010101)
		k.vconst(c[4], 0x0202020202020202, 0x0303030303030303)
		k.I(MOVI(H8, c[5], 4, 8))
		k.Op("MOVD $·iq3sGrid(SB), R%d", rGrid)
		return c
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		k0f, k01, kbits, ks01, ks23, k400 := c[0], c[1], c[2], c[3], c[4], c[5]
		a, t := k.rg.get(), k.rg.get()
		k.Op("ADD $106, R%d, R%d", p, rTmp)
		k.I(LD1L(S2, a, 0, rTmp, 0), USHR(B8, t, a, 4), AND(B8, a, a, k0f), ZIP1(B8, a, a, t),
			SHL(B8, a, a, 1), ORR(B8, a, a, k01))
		k.rg.put(t)
		ws := k.scaleWords(a, 2)
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		k.Op("ADD $2, R%d, R%d", p, rWq)    // index low bytes
		k.Op("ADD $74, R%d, R%d", p, rWq2)  // signs
		k.Op("ADD $66, R%d, R%d", p, rTmp2) // ninth bits
		return k.blockDots(ir, ws, func(int) [2]VReg {
			// The eight indexes ×4, as halfwords.
			idx, hb := k.rg.get(), k.rg.get()
			k.I(LD1(B8, idx, 1, rWq, 8), USHLL(B8, idx, idx, 2),
				LD1R(B16, hb, rTmp2, 1), CMTST(B8, hb, hb, kbits), SSHLL(B8, hb, hb, 0), AND(B16, hb, hb, k400),
				ORR(B16, idx, idx, hb))
			k.rg.put(hb)
			g := [2]VReg{k.rg.get(), k.rg.get()}
			for pair := 0; pair < 4; pair++ {
				r0, r1 := rGather[2*(pair%3)], rGather[2*(pair%3)+1]
				k.I(UMOV(H4, r0, idx, 2*pair), UMOV(H4, r1, idx, 2*pair+1))
				k.Op("MOVWU (R%d)(R%d), R%d", rGrid, r0, r0)
				k.Op("MOVWU (R%d)(R%d), R%d", rGrid, r1, r1)
				k.Op("ORR R%d<<32, R%d, R%d", r1, r0, r0)
				k.I(INSg(D1, g[pair/2], pair%2, r0))
			}
			k.rg.put(idx)
			sg := k.rg.get()
			k.I(LD1L(S2, sg, 0, rWq2, 4))
			k.signs(g, sg, ks01, ks23, kbits)
			k.rg.put(sg)
			return g
		})
	},
}

func lowbitFiles() []*File {
	var files []*File
	for _, t := range []superType{q2K, q3K, iq4XS, iq3S, iq2XXS, iq2XS, iq2S, tq1_0, tq2_0} {
		f := &File{Pkg: "quant", Name: t.file,
			Doc: fmt.Sprintf("Dot product and tile kernels for %s weights against Q8_K activations, for ARMv8.0 NEON and FEAT_DotProd.", t.name)}
		for _, lvl := range []level{neon, dotprod} {
			genSuper(f, t, lvl, 1)
			genSuper(f, t, lvl, 4)
		}
		files = append(files, f)
	}
	return files
}
