package main

import "fmt"

// The lattice types IQ3_XXS, IQ1_S and IQ1_M against Q8_K: dot kernels
// only (their tiles are the dot kernel run per output, quant.Tiles). Like
// IQ3_S they look each group's lattice point up through general registers
// (NEON has no gather) and otherwise work on whole vectors: per sub-block
// one 32-byte dot product (dot32 or two dot16), scaled into a 4-lane int32
// sum by MLA by element.
//
// The IQ1 twins sum two integers, Σ ls·Σ grid·y and Σ ls·Σ ±y, and take
// d·dy·fma(float32(second), 1/8, float32(first)). Both are below 2^24 in
// magnitude (at most 8·15·2·32768), so both conversions are exact, and the
// kernels sum 8·first + second (below 2^31) instead and multiply its
// conversion by 1/8: one rounding of the same exact value.

// IQ3_XXS: see quant/iq3_xxs.go. d at 0, the 64 index bytes at 2, eight
// words at 66 with a sub-block's four 7-bit sign fields and its scale.
var iq3XXS = superType{
	name: "IQ3_XXS", file: "iq3_xxs", bytes: 98, dOff: 0, final: 0.25,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(6)
		// The TBL indexes taking byte 4b of table register k (the words
		// shifted right by 7k) to byte 4b+k; k7f; 1 per word; the bit of
		// each byte's lane; the spreads of sign bytes 0,1 and 2,3.
		k.vconst(c[0], bytesConst(0, 16, 32, 48, 4, 20, 36, 52), bytesConst(8, 24, 40, 56, 12, 28, 44, 60))
		k.I(MOVI(B16, c[1], 0x7f, 0), MOVI(S4, c[2], 1, 0))
		bits := bytesConst(1, 2, 4, 8, 16, 32, 64, 128)
		k.vconst(c[3], bits, bits)
		k.vconst(c[4], 0, 0x0101010101010101)
		k.vconst(c[5], 0x0202020202020202, 0x0303030303030303)
		k.Op("MOVD $·iq3xxsGrid(SB), R%d", rGrid)
		return c
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		kidx, k7f, k1, kbits, ks01, ks23 := c[0], c[1], c[2], c[3], c[4], c[5]
		// The eight sign words: sg[h] byte 4b+k is sign byte k of
		// sub-block 4h+b (the seven stored bits and their parity), ws[h]
		// lane b its scale 2s+1 = (aux>>27)|1.
		var sg, ws [2]VReg
		k.Op("ADD $66, R%d, R%d", p, rTmp)
		for h := 0; h < 2; h++ {
			a := k.rg.getN(4)
			post := 16
			if h == 1 {
				post = 0
			}
			k.I(LD1(S4, a, 1, rTmp, post))
			for j := 1; j < 4; j++ {
				k.I(USHR(S4, a+VReg(j), a, 7*j))
			}
			sg[h], ws[h] = k.rg.get(), k.rg.get()
			k.I(USHR(S4, ws[h], a, 27), ORR(B16, ws[h], ws[h], k1),
				TBL(B16, sg[h], a, 4, kidx), AND(B16, sg[h], sg[h], k7f))
			k.rg.putN(a, 4)
			par := k.rg.get()
			k.I(CNT(B16, par, sg[h]), SHL(B16, par, par, 7), ORR(B16, sg[h], sg[h], par))
			k.rg.put(par)
		}
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		k.Op("ADD $2, R%d, R%d", p, rWq)
		isum, summ := k.blockDots(ir, ws[:], func(b int) [2]VReg {
			// Group j's eight magnitudes: grid entries of index bytes 2j
			// and 2j+1, doubleword lane j%2 of g[j/2].
			g := [2]VReg{k.rg.get(), k.rg.get()}
			k.Op("MOVD.P 8(R%d), R%d", rWq, rTmp2)
			for j := 0; j < 4; j++ {
				r0, r1 := rGather[2*(j%3)], rGather[2*(j%3)+1]
				k.Op("UBFX $%d, R%d, $8, R%d", 16*j, rTmp2, r0)
				k.Op("UBFX $%d, R%d, $8, R%d", 16*j+8, rTmp2, r1)
				k.Op("MOVWU (R%d)(R%d<<2), R%d", rGrid, r0, r0)
				k.Op("MOVWU (R%d)(R%d<<2), R%d", rGrid, r1, r1)
				k.Op("ORR R%d<<32, R%d, R%d", r1, r0, r0)
				k.insD(g[j/2], j%2, r0)
			}
			s := k.rg.get()
			k.I(DUPe(S4, s, sg[b/4], b%4))
			k.signs(g, s, ks01, ks23, kbits)
			k.rg.put(s)
			return g
		})
		k.rg.put(sg[0], sg[1])
		return isum, summ
	},
}

// insD sets doubleword lane (0 or 1) of d to general register r; lane 0
// with FMOVD, which clears lane 1 and so leaves no dependence on d's
// previous value (the registers of one sub-block's lattice points are
// reused by the next).
func (k *kfn) insD(d VReg, lane int, r XReg) {
	if lane == 0 {
		k.Op("FMOVD R%d, F%d", r, d)
		return
	}
	k.I(INSg(D1, d, 1, r))
}

// iq1Gather sets w (two registers) to the lattice points of the four
// groups of a sub-block, whose halfword grid indexes are lanes l0..l0+3 of
// idx: group j in doubleword lane j%2 of w[j/2].
func (k *kfn) iq1Gather(w [2]VReg, idx VReg, l0 int) {
	for j := 0; j < 4; j++ {
		r := rGather[(l0+j)%len(rGather)]
		k.I(UMOV(H8, r, idx, l0+j))
		k.Op("MOVD (R%d)(R%d<<3), R%d", rGrid, r, r)
		k.insD(w[j/2], j%2, r)
	}
}

// IQ1_S: see quant/iq1_s.go. d at 0, the index low bytes at 2, a
// halfword per sub-block at 34 (the index high bits, the scale, the sign
// of δ). The block's integer sum is Σ_b (8ls_b·Σ grid·y + ±ls_b·(the
// sub-block's two bsums)).
var iq1S = superType{
	name: "IQ1_S", file: "iq1_s", bytes: 50, dOff: 0, isumScale: 0.125,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(4)
		// The halfword shifts bringing bits 3g..3g+2 to 8..10 (g = 0..3,
		// twice); 0x0700, 7 and 1 per halfword.
		sh := func(s int) uint64 { return uint64(uint16(int16(s))) }
		shifts := sh(8) | sh(5)<<16 | sh(2)<<32 | sh(-1)<<48
		k.vconst(c[0], shifts, shifts)
		k.I(MOVI(H8, c[1], 7, 8), MOVI(H8, c[2], 7, 0), MOVI(H8, c[3], 1, 0))
		k.Op("MOVD $·iq1sGrid(SB), R%d", rGrid)
		return c
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		ksh, k700, k7, k1 := c[0], c[1], c[2], c[3]
		q, qh := k.rg.getN(2), k.rg.get()
		k.Op("ADD $2, R%d, R%d", p, rTmp)
		k.I(LD1(B16, q, 2, rTmp, 32), LD1(H8, qh, 1, rTmp, 0))
		// Scales: ls = 2s+1, lsn = ±ls (negative with δ), per halfword.
		ls, lsn, m := k.rg.get(), k.rg.get(), k.rg.get()
		k.I(USHR(H8, ls, qh, 12), AND(B16, ls, ls, k7), SHL(H8, ls, ls, 1), ORR(B16, ls, ls, k1),
			SSHR(H8, m, qh, 15), EOR(B16, lsn, ls, m), SUB(H8, lsn, lsn, m))
		k.rg.put(m)
		// The δ part: Σ_b lsn_b·(bsums 2b + 2b+1), exact in int32.
		ir, bs := k.rg.get(), k.rg.getN(2)
		k.Op("ADD $256, R%d, R%d", rXq, rTmp)
		k.I(LD1(H8, bs, 2, rTmp, 0), SADDLP(H8, bs, bs), SADDLP(H8, bs+1, bs+1))
		ln := k.rg.get()
		k.I(SSHLL(H4, ln, lsn, 0), MUL(S4, ir, bs, ln), SSHLL(H8, ln, lsn, 0), MLA(S4, ir, bs+1, ln))
		k.rg.put(ln, lsn)
		k.rg.putN(bs, 2)
		// 8ls per sub-block as words, for the lattice sums.
		k.I(SHL(H8, ls, ls, 3))
		ws := []VReg{k.rg.get(), k.rg.get()}
		k.I(USHLL(H4, ws[0], ls, 0), USHLL(H8, ws[1], ls, 0))
		k.rg.put(ls)
		// The 32 grid indexes as halfwords: idx[j] lane 4s+g is group g of
		// sub-block 2j+s.
		var idx [4]VReg
		z := [2]VReg{k.rg.get(), k.rg.get()}
		k.I(ZIP1(H8, z[0], qh, qh), ZIP2(H8, z[1], qh, qh))
		for j := range idx {
			idx[j] = k.rg.get()
			hb := k.rg.get()
			if j%2 == 0 {
				k.I(ZIP1(H8, hb, z[j/2], z[j/2]))
			} else {
				k.I(ZIP2(H8, hb, z[j/2], z[j/2]))
			}
			k.I(USHL(H8, hb, hb, ksh))
			if j%2 == 0 {
				k.I(USHLL(B8, idx[j], q+VReg(j/2), 0))
			} else {
				k.I(USHLL(B16, idx[j], q+VReg(j/2), 0))
			}
			k.I(BIT(B16, idx[j], hb, k700))
			k.rg.put(hb)
		}
		k.rg.put(z[0], z[1], qh)
		k.rg.putN(q, 2)
		isum, summ := k.blockDots(ir, ws, func(b int) [2]VReg {
			g := [2]VReg{k.rg.get(), k.rg.get()}
			k.iq1Gather(g, idx[b/2], 4*(b%2))
			return g
		})
		k.rg.put(idx[:]...)
		return isum, summ
	},
}

// IQ1_M: see quant/iq1_m.go. The index low bytes at 0, a nibble per group
// at 32 (three high index bits and the sign of δ), the sixteen 3-bit
// scales of the half sub-blocks and the fp16 d in four halfwords at 48.
// Each group's eight weights are 8·grid ± 1, so one dot product per half
// sub-block gives 8·Σ grid·y ± Σ y, scaled by its ls.
var iq1M = superType{
	name: "IQ1_M", file: "iq1_m", bytes: 56, isumScale: 0.125,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(10)
		// k0f, k07, k08, k01 (bytes); the spreads of bytes 0,1 and 2,3;
		// the halfword shifts (1, -2, -5, -8, twice) bringing scale c of
		// a scale word to bits 1..3; the shifts (0, 4, 8, 12) assembling
		// d's nibbles; 0x000e and 1 per halfword.
		k.I(MOVI(B16, c[0], 0x0f, 0), MOVI(B16, c[1], 7, 0), MOVI(B16, c[2], 8, 0), MOVI(B16, c[3], 1, 0))
		k.vconst(c[4], 0, 0x0101010101010101)
		k.vconst(c[5], 0x0202020202020202, 0x0303030303030303)
		sh := func(s int) uint64 { return uint64(uint16(int16(s))) }
		scsh := sh(1) | sh(-2)<<16 | sh(-5)<<32 | sh(-8)<<48
		k.vconst(c[6], scsh, scsh)
		k.vconst(c[7], sh(0)|sh(4)<<16|sh(8)<<32|sh(12)<<48, 0)
		k.I(MOVI(H8, c[8], 0x0e, 0), MOVI(H8, c[9], 1, 0))
		k.Op("MOVD $·iq1sGrid(SB), R%d", rGrid)
		return c
	},
	dBits: func(k *kfn, c []VReg, dd VReg, r int, p XReg) {
		check(r == 0, "IQ1_M: dot kernels only")
		// The top nibbles of the scale words, shifted into place and
		// summed: sc0>>12 | sc1>>8&0xf0 | sc2>>4&0xf00 | sc3&0xf000.
		k.I(LDR(8, dd, p, 48), USHR(H4, dd, dd, 12), USHL(H4, dd, dd, c[7]), ADDV(H4, dd, dd))
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		k0f, k07, k08, k01, ks01, ks23, ksh, kh0e, kh01 := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[8], c[9]
		q, n := k.rg.getN(2), [2]VReg{k.rg.get(), k.rg.get()}
		t := k.rg.get()
		k.I(LD1(B16, q, 2, p, 0), LDR(16, t, p, 32),
			AND(B16, n[0], t, k0f), USHR(B16, t, t, 4), ZIP2(B16, n[1], n[0], t), ZIP1(B16, n[0], n[0], t))
		// idx[j] lanes: the grid indexes of groups 8j..8j+7, as halfwords
		// (low byte from q, high from the nibble's low three bits).
		var idx [4]VReg
		for h := 0; h < 2; h++ {
			k.I(AND(B16, t, n[h], k07))
			idx[2*h], idx[2*h+1] = k.rg.get(), k.rg.get()
			k.I(ZIP1(B16, idx[2*h], q+VReg(h), t), ZIP2(B16, idx[2*h+1], q+VReg(h), t))
			// δ per group: -1 where bit 3 is set, else 1.
			k.I(CMTST(B16, n[h], n[h], k08), ORR(B16, n[h], n[h], k01))
		}
		k.rg.putN(q, 2)
		// The scales 2c+1 of the sixteen half sub-blocks as words: ws[i]
		// lane l is half 4i+l, scale c at bits 3(l) of scale word i.
		a, b := k.rg.get(), k.rg.get()
		k.I(LDR(8, t, p, 48), ZIP1(H8, t, t, t), ZIP1(H8, a, t, t), ZIP2(H8, b, t, t),
			USHL(H8, a, a, ksh), USHL(H8, b, b, ksh),
			AND(B16, a, a, kh0e), AND(B16, b, b, kh0e), ORR(B16, a, a, kh01), ORR(B16, b, b, kh01))
		k.rg.put(t)
		ws := k.rg.many(4)
		k.I(USHLL(H4, ws[0], a, 0), USHLL(H8, ws[1], a, 0), USHLL(H4, ws[2], b, 0), USHLL(H8, ws[3], b, 0))
		k.rg.put(a, b)
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		for sb := 0; sb < 8; sb++ {
			g := [2]VReg{k.rg.get(), k.rg.get()}
			k.iq1Gather(g, idx[sb/2], 4*(sb%2))
			// w = 8·grid + δ: δ's bytes 4(sb%4)..+3 of n[sb/4], each
			// spread over its group's eight lanes.
			s := k.rg.get()
			k.I(DUPe(S4, s, n[sb/4], sb%4))
			var w [2]VReg
			for i, ks := range []VReg{ks01, ks23} {
				w[i] = k.rg.get()
				k.I(TBL(B16, w[i], s, 1, ks), MLA(B16, w[i], g[i], k08))
				k.rg.put(g[i])
			}
			k.rg.put(s)
			k.groupDots(ir, w, ws, 2*sb)
			k.rg.put(w[0], w[1])
		}
		k.rg.put(idx[:]...)
		k.rg.put(n[0], n[1])
		k.rg.put(ws...)
		return ir, 255
	},
}

func iqFiles() []*File {
	var files []*File
	for _, t := range []superType{iq3XXS, iq1S, iq1M} {
		f := &File{Pkg: "quant", Name: t.file,
			Doc: fmt.Sprintf("Dot product kernels for %s weights against Q8_K activations, for ARMv8.0 NEON and FEAT_DotProd.", t.name)}
		for _, lvl := range []level{neon, dotprod} {
			genSuper(f, t, lvl, 1)
		}
		files = append(files, f)
	}
	return files
}
