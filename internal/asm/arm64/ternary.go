package main

// The ternary types against Q8_K (see quant/tq.go): weights d·(c−1) with
// codes c of 0, 1 or 2. As the twins, the kernels sum Σ c·y per block and
// take Σ y off it from the block sums (so any activation bytes give the
// twins' bits), then scale the block unfused.

// subBsums subtracts Σ y, the sum of the sixteen block sums in bs (two
// registers of halves), from ir.
func (k *kfn) subBsums(ir, bs VReg) {
	s := k.rg.get()
	k.I(SADDLP(H8, s, bs), SADALP(H8, s, bs+1), SUB(S4, ir, ir, s))
	k.rg.put(s)
}

// sumNext32 sets ir = op(ir, the dot product of the 32 small bytes w (two
// registers, freed) with the next 32 activation bytes at rXq), op ADD or
// SUB.
func (k *kfn) sumNext32(ir VReg, w [2]VReg, op func(a Arr, d, n, m VReg) Inst) {
	x := k.rg.getN(2)
	k.I(LD1(B16, x, 2, rXq, 32))
	d := k.dot32(w, [2]VReg{x, x + 1}, true)
	k.I(op(S4, ir, ir, d))
	k.rg.put(d, w[0], w[1])
	k.rg.putN(x, 2)
}

// TQ2_0: 64 bytes of 2-bit codes in the Q2_K order, d at 64.
var tq2_0 = superType{
	name: "TQ2_0", file: "tq2_0", bytes: 66, dOff: 64, bsums: true, unfused: true,
	consts: func(k *kfn) []VReg {
		k03 := k.rg.get()
		k.I(MOVI(B16, k03, 3, 0))
		return []VReg{k03}
	},
	row: func(k *kfn, p XReg, c []VReg, bs VReg) (VReg, VReg) {
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		for hh := 0; hh < 2; hh++ {
			q := [2]VReg{k.rg.get(), k.rg.get()}
			k.I(LDR(16, q[0], p, 32*hh), LDR(16, q[1], p, 16+32*hh))
			for j := 0; j < 4; j++ {
				lo := [2]VReg{k.rg.get(), k.rg.get()}
				k.twoBits(lo, q, j, c[0])
				k.sumNext32(ir, lo, ADD)
			}
			k.rg.put(q[0], q[1])
		}
		k.subBsums(ir, bs)
		return ir, 255
	},
}

// TQ1_0: five base-3 digits a byte in qs[0:32] and qs[32:48], four in qh
// at 48, d at 52. Digit n of a byte q is 0 while q·3^n mod 256 is below
// 86, 1 below 171, 2 from there: on s = q ^ 0x80, whose products by 3
// stay in step ((q·3) ^ 0x80 = 3·s mod 256), the two signed compares
// s > −43 and s > 42, whose masks add up to −c. qh's word is replicated
// and its copies multiplied by 1, 3, 9 and 27, the codes of elements
// 240..255 in order.
var tq1_0 = superType{
	name: "TQ1_0", file: "tq1_0", bytes: 54, dOff: 52, bsums: true, unfused: true,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(5)
		// k80, k3, −43, 42, and qh's multipliers.
		k.I(MOVI(B16, c[0], 0x80, 0), MOVI(B16, c[1], 3, 0), MOVI(B16, c[2], 0xd5, 0), MOVI(B16, c[3], 42, 0))
		k.vconst(c[4], bytesConst(1, 1, 1, 1, 3, 3, 3, 3), bytesConst(9, 9, 9, 9, 27, 27, 27, 27))
		return c
	},
	row: func(k *kfn, p XReg, c []VReg, bs VReg) (VReg, VReg) {
		k80, k3, kLo, kHi, kqh := c[0], c[1], c[2], c[3], c[4]
		ir := k.rg.get()
		k.I(MOVIzero(ir))
		// negCodes sets w to −c of each byte of s.
		negCodes := func(w, s VReg) {
			t := k.rg.get()
			k.I(CMGT(B16, w, s, kLo), CMGT(B16, t, s, kHi), ADD(B16, w, w, t))
			k.rg.put(t)
		}
		// qs[0:32]: five digits of 32 codes.
		s := [2]VReg{k.rg.get(), k.rg.get()}
		k.I(LDR(16, s[0], p, 0), LDR(16, s[1], p, 16), EOR(B16, s[0], s[0], k80), EOR(B16, s[1], s[1], k80))
		for n := 0; n < 5; n++ {
			if n > 0 {
				k.I(MUL(B16, s[0], s[0], k3), MUL(B16, s[1], s[1], k3))
			}
			w := [2]VReg{k.rg.get(), k.rg.get()}
			negCodes(w[0], s[0])
			negCodes(w[1], s[1])
			k.sumNext32(ir, w, SUB)
		}
		k.rg.put(s[1])
		// qs[32:48]: five digits of 16 codes, then qh's 16.
		k.I(LDR(16, s[0], p, 32), EOR(B16, s[0], s[0], k80))
		for n := 0; n < 6; n++ {
			switch {
			case n == 5:
				k.Op("ADD $48, R%d, R%d", p, rTmp)
				k.I(LD1R(S4, s[0], rTmp, 0), EOR(B16, s[0], s[0], k80), MUL(B16, s[0], s[0], kqh))
			case n > 0:
				k.I(MUL(B16, s[0], s[0], k3))
			}
			w, x := k.rg.get(), k.rg.get()
			negCodes(w, s[0])
			k.I(LD1(B16, x, 1, rXq, 16))
			d := k.dot16(w, x)
			k.I(SUB(S4, ir, ir, d))
			k.rg.put(d, w, x)
		}
		k.rg.put(s[0])
		k.subBsums(ir, bs)
		return ir, 255
	},
}
