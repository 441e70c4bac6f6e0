package main

// The IQ2 lattice types against Q8_K: IQ2_XXS, IQ2_XS and IQ2_S (see
// quant/iq2_xxs.go, iq2_xs.go, iq2_s.go). Each group of eight elements is
// one 8-byte grid entry (magnitudes 8, 25, 43) with eight signs. Per row
// and block a prologue lays out, for all 32 groups at once, the grid
// indexes (in the byte or halfword lanes of vectors, group k = 4·ib + g at
// lane k), the sign bytes (group k's byte in one of two vectors, see
// iq2Parts.stride) and the scales 2s+1 as int32 words for MLA by element.
// Per sub-block the four grid entries are then loaded by index (NEON has
// no gather: each index goes to a general register, the first entry of
// each vector loads straight into it, the second through a general
// register) into two vectors, negated where the
// signs say ((g ^ m) − m, m spread from the sign byte by TBL and tested
// by CMTST), and multiplied with the 32 activation bytes; the products
// fit int16 in pairs (43·128·2 < 2¹⁵).

// iq2Parts is what the prologue of an IQ2 row leaves for the sub-blocks.
type iq2Parts struct {
	idx  []VReg // grid indexes, lane 4·ib+g over the vectors in order
	elem Arr    // their lanes: B16 (IQ2_XXS) or H8
	// signs holds sub-blocks 0..3 and 4..7: group g of sub-block ib at
	// byte stride·g + (ib%4)·(5−stride) of signs[ib/4] (stride 1: four
	// sign bytes a sub-block; stride 4: a sub-block's byte of each group)
	signs [2]VReg
	ws    []VReg // scale words: one a sub-block, or two (halves) for XS, S
}

// The constants every IQ2 row uses come first in c: the bit of each byte's
// lane (1, 2, …, 128, twice) and the TBL indexes that spread the sign
// bytes of groups 0, 1 and 2, 3 of a sub-block over eight bytes each.
const iq2Consts = 3

func (k *kfn) iq2Common(stride int, grid string) []VReg {
	c := k.rg.many(iq2Consts)
	bits := bytesConst(1, 2, 4, 8, 16, 32, 64, 128)
	k.vconst(c[0], bits, bits)
	s := uint64(stride) * 0x0101010101010101
	k.vconst(c[1], 0, s)
	k.vconst(c[2], 2*s, 3*s)
	k.Op("MOVD $·%s(SB), R%d", grid, rGrid)
	return c
}

// iq2Load loads the 64 bytes after row p's d into four vectors of
// arrangement a and returns the first; rTmp is left at p+2+post (post
// 64: past the bytes loaded).
func (k *kfn) iq2Load(p XReg, a Arr, post int) VReg {
	v := k.rg.getN(4)
	k.Op("ADD $2, R%d, R%d", p, rTmp)
	k.I(LD1(a, v, 4, rTmp, post))
	return v
}

// signParity sets bit 7 of each byte of v (seven sign bits each) to the
// parity of the other seven: ggml's ksigns_iq2xs.
func (k *kfn) signParity(v VReg) {
	t := k.rg.get()
	k.I(CNT(B16, t, v), SHL(B16, t, t, 7), ORR(B16, v, v, t))
	k.rg.put(t)
}

// iq2Row emits the sub-blocks of one row given its prologue's parts and
// returns the row's integer sums (4 lanes).
func (k *kfn) iq2Row(c []VReg, parts iq2Parts) VReg {
	kbits, ks := c[0], [2]VReg{c[1], c[2]}
	lanes := 16
	if parts.elem.size() == 1 {
		lanes = 8
	}
	ir := k.rg.get()
	k.I(MOVIzero(ir))
	halves := len(parts.ws) == 4
	stride := 4
	if halves {
		stride = 1
	}
	for ib := 0; ib < 8; ib++ {
		g := [2]VReg{k.rg.get(), k.rg.get()}
		for grp := 0; grp < 4; grp++ {
			lane := 4*ib + grp
			r := rGather[lane%len(rGather)]
			k.I(UMOV(parts.elem, r, parts.idx[lane/lanes], lane%lanes))
			if grp%2 == 0 {
				// A scalar load clears the upper doubleword.
				k.Op("FMOVD (R%d)(R%d<<3), F%d", rGrid, r, g[grp/2])
			} else {
				k.Op("MOVD (R%d)(R%d<<3), R%d", rGrid, r, r)
				k.I(INSg(D1, g[grp/2], 1, r))
			}
		}
		sv := parts.signs[ib/4]
		var rot VReg = 255
		if sh := (ib % 4) * (5 - stride); sh != 0 {
			rot = k.rg.get()
			k.I(EXT(B16, rot, sv, sv, sh))
			sv = rot
		}
		k.signs(g, sv, ks[0], ks[1], kbits)
		if rot != 255 {
			k.rg.put(rot)
		}
		if halves {
			k.groupDots(ir, g, parts.ws, 2*ib)
			k.rg.put(g[0], g[1])
		} else {
			k.blockDot(ir, g, parts.ws, ib)
		}
	}
	k.rg.put(parts.idx...)
	k.rg.put(parts.signs[0], parts.signs[1])
	k.rg.put(parts.ws...)
	return ir
}

// nibbleScales turns the eight scale bytes in the low (hi false) or high
// half of v (low nibble for groups 0, 1 of sub-block b, high nibble for
// groups 2, 3) into sixteen scale words 2s+1, half h of sub-block b at
// word (2b+h)%4 of ws[(2b+h)/4]; v is freed.
func (k *kfn) nibbleScales(v VReg, hi bool, k0f, k01 VReg) []VReg {
	t := k.rg.get()
	k.I(USHR(B16, t, v, 4), AND(B16, v, v, k0f))
	if hi {
		k.I(ZIP2(B16, v, v, t))
	} else {
		k.I(ZIP1(B16, v, v, t))
	}
	k.I(SHL(B16, v, v, 1), ORR(B16, v, v, k01))
	k.rg.put(t)
	return k.scaleWords(v, 4)
}

// IQ2_XXS: d, then per sub-block four index bytes and a word of four
// 7-bit sign fields and the 4-bit scale at bit 28.
var iq2XXS = superType{
	name: "IQ2_XXS", file: "iq2_xxs", bytes: 66, dOff: 0, final: 0.125,
	consts: func(k *kfn) []VReg {
		c := k.iq2Common(4, "iq2xxsGrid")
		k7f, kw1 := k.rg.get(), k.rg.get()
		k.I(MOVI(B16, k7f, 0x7f, 0), MOVI(S4, kw1, 1, 0))
		return append(c, k7f, kw1)
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		k7f, kw1 := c[iq2Consts], c[iq2Consts+1]
		v := k.iq2Load(p, B16, 0)
		parts := iq2Parts{elem: B16}
		for h := 0; h < 2; h++ {
			// Words 0, 2 of the pair of vectors are the index bytes of
			// four sub-blocks, words 1, 3 their sign-and-scale words.
			a, b := v+VReg(2*h), v+VReg(2*h+1)
			idx, aux := k.rg.get(), k.rg.get()
			k.I(UZP1(S4, idx, a, b), UZP2(S4, aux, a, b))
			parts.idx = append(parts.idx, idx)
			// Scales: (aux >> 27) | 1 = 2s+1.
			w := k.rg.get()
			k.I(USHR(S4, w, aux, 27), ORR(B16, w, w, kw1))
			parts.ws = append(parts.ws, w)
			// Signs: the low byte of aux >> 7g for g = 0..3 and the four
			// sub-blocks, by two rounds of even bytes: byte 4g+ib.
			f1, f2, f3 := k.rg.get(), k.rg.get(), k.rg.get()
			k.I(USHR(S4, f1, aux, 7), USHR(S4, f2, aux, 14), USHR(S4, f3, aux, 21),
				UZP1(B16, aux, aux, f1), UZP1(B16, f2, f2, f3), UZP1(B16, aux, aux, f2), AND(B16, aux, aux, k7f))
			k.rg.put(f1, f2, f3)
			k.signParity(aux)
			parts.signs[h] = aux
		}
		k.rg.putN(v, 4)
		return k.iq2Row(c, parts), 255
	},
}

// IQ2_XS: d, 32 halfwords (nine index bits, seven sign bits), then eight
// scale bytes at 66.
var iq2XS = superType{
	name: "IQ2_XS", file: "iq2_xs", bytes: 74, dOff: 0, final: 0.125,
	consts: func(k *kfn) []VReg {
		c := k.iq2Common(1, "iq2xsGrid")
		kfe00, k0f, k01 := k.rg.get(), k.rg.get(), k.rg.get()
		k.I(MOVI(H8, kfe00, 0xfe, 8), MOVI(B16, k0f, 0x0f, 0), MOVI(B16, k01, 1, 0))
		return append(c, kfe00, k0f, k01)
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		kfe00, k0f, k01 := c[iq2Consts], c[iq2Consts+1], c[iq2Consts+2]
		v := k.iq2Load(p, H8, 64)
		parts := iq2Parts{elem: H8}
		for h := 0; h < 2; h++ {
			// The high bytes of sixteen halfwords, shifted right once,
			// are the seven sign bits of four sub-blocks' groups.
			s := k.rg.get()
			k.I(UZP2(B16, s, v+VReg(2*h), v+VReg(2*h+1)), USHR(B16, s, s, 1))
			k.signParity(s)
			parts.signs[h] = s
		}
		for i := 0; i < 4; i++ {
			idx := k.rg.get()
			k.I(BIC(B16, idx, v+VReg(i), kfe00))
			parts.idx = append(parts.idx, idx)
		}
		k.rg.putN(v, 4)
		sc := k.rg.get()
		k.I(LD1(B8, sc, 1, rTmp, 0))
		parts.ws = k.nibbleScales(sc, false, k0f, k01)
		return k.iq2Row(c, parts), 255
	},
}

// IQ2_S: d, the index low bytes at 2, the sign bytes at 34, the index
// high bits at 66 (two a group), the scale nibbles at 74.
var iq2S = superType{
	name: "IQ2_S", file: "iq2_s", bytes: 82, dOff: 0, final: 0.125,
	consts: func(k *kfn) []VReg {
		c := k.iq2Common(1, "iq2sGrid")
		more := k.rg.many(6)
		// k0f, k01, k03; TBL indexes spreading qh bytes 0..3 and 4..7
		// four times each; the shifts (0, −2, −4, −6) bringing group g's
		// bits down.
		k.I(MOVI(B16, more[0], 0x0f, 0), MOVI(B16, more[1], 1, 0), MOVI(B16, more[2], 3, 0))
		k.vconst(more[3], bytesConst(0, 0, 0, 0, 1, 1, 1, 1), bytesConst(2, 2, 2, 2, 3, 3, 3, 3))
		k.vconst(more[4], bytesConst(4, 4, 4, 4, 5, 5, 5, 5), bytesConst(6, 6, 6, 6, 7, 7, 7, 7))
		sh := bytesConst(0, -2, -4, -6, 0, -2, -4, -6)
		k.vconst(more[5], sh, sh)
		return append(c, more...)
	},
	row: func(k *kfn, p XReg, c []VReg, _ VReg) (VReg, VReg) {
		k0f, k01, k03, ksp0, ksp1, ksh := c[iq2Consts], c[iq2Consts+1], c[iq2Consts+2], c[iq2Consts+3], c[iq2Consts+4], c[iq2Consts+5]
		v := k.iq2Load(p, B16, 64)
		parts := iq2Parts{elem: H8}
		parts.signs = [2]VReg{v + 2, v + 3}
		qs := k.rg.get()
		k.I(LD1(B16, qs, 1, rTmp, 0))
		for h := 0; h < 2; h++ {
			hb := k.rg.get()
			k.I(TBL(B16, hb, qs, 1, [2]VReg{ksp0, ksp1}[h]), USHL(B16, hb, hb, ksh), AND(B16, hb, hb, k03))
			i0, i1 := k.rg.get(), k.rg.get()
			k.I(ZIP1(B16, i0, v+VReg(h), hb), ZIP2(B16, i1, v+VReg(h), hb))
			parts.idx = append(parts.idx, i0, i1)
			k.rg.put(hb)
		}
		k.rg.put(v, v+1)
		parts.ws = k.nibbleScales(qs, true, k0f, k01)
		return k.iq2Row(c, parts), 255
	},
}
