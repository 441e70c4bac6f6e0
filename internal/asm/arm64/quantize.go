package main

import "fmt"

// The activation quantizers of package quant, byte for byte the Go
// quantQ8_0 and quantQ8_K: the same roundings, NaN and overflow cases
// included. Plain NEON; there is nothing for SDOT to do.

// quantizeFunc starts quant<t>NEON(dst *byte, src *float32, nb int), of
// blocks of n floats: dst in R0, src in R1, nb in R2, and nothing to do
// when nb is 0.
func quantizeFunc(f *File, t string, n int) (*Func, *vregs) {
	name := "quant" + t + "NEON"
	fn := f.NewFunc(name, fmt.Sprintf("%s quantizes nb blocks of %d floats from src to %s blocks at dst, as quant%s does.", name, n, t, t),
		[]Arg{{"dst", "*byte"}, {"src", "*float32"}, {"nb", "int"}}, nil)
	fn.Load("dst src nb", 0, 1, 2)
	fn.Op("CBZ R2, done")
	return fn, newVRegs(name)
}

// floatConst broadcasts the float32 with bits v to every lane of d.
func floatConst(fn *Func, d VReg, bits uint32) {
	fn.Op("MOVW $0x%08x, R%d", bits, rTmp)
	fn.I(DUPg(S4, d, rTmp))
}

// absMaxStep folds |v| into the running maximum m where it is larger: a
// NaN is never larger, as in Go's absMax. With ms it also keeps the signed
// element of m, the first one of a lane on ties.
func absMaxStep(fn *Func, rg *vregs, m, ms, v VReg) {
	a, g := rg.get(), rg.get()
	fn.I(FABS(S4, a, v), FCMGT(S4, g, a, m), BIT(B16, m, a, g))
	if ms != 255 {
		fn.I(BIT(B16, ms, v, g))
	}
	rg.put(a, g)
}

// genQuantQ8_0 writes quantQ8_0NEON: per block of 32, amax over |x| (NaN
// skipped), d = fp16(amax/127), and each quant x·(127/amax) rounded to
// nearest even and saturated, NaN and |x| ≥ 2^31 becoming -128, as the x86
// sequence the Go code follows does.
func genQuantQ8_0(f *File) {
	fn, rg := quantizeFunc(f, "Q8_0", 32)
	c127, c2p31, kmin, zero := rg.get(), rg.get(), rg.get(), rg.get()
	floatConst(fn, c127, 0x42fe0000)  // 127
	floatConst(fn, c2p31, 0x4f000000) // 2^31
	fn.I(MOVI(S4, kmin, 0x80, 24), MOVIzero(zero))
	fn.Loop("loop", 1, "1 block of 32")
	x := rg.getN(8)
	fn.I(LD1(S4, x, 4, 1, 64), LD1(S4, x+4, 4, 1, 64))
	m0, m1 := rg.get(), rg.get()
	fn.I(MOVIzero(m0), MOVIzero(m1))
	for i := 0; i < 8; i += 2 {
		absMaxStep(fn, rg, m0, 255, x+VReg(i))
		absMaxStep(fn, rg, m1, 255, x+VReg(i+1))
	}
	fn.I(FMAX(S4, m0, m0, m1), FMAXV(m0, m0))
	amax, d := m0, m1
	fn.Op("FDIVS F%d, F%d, F%d", c127, amax, d)
	fn.Op("FCVTSH F%d, F%d", d, d)
	fn.I(ST1L(H4, d, 0, 0, 2))
	id := d
	fn.Op("FDIVS F%d, F%d, F%d", amax, c127, id)
	fn.Op("FCMPS $(0.0), F%d", amax)
	fn.Op("FCSELS EQ, F%d, F%d, F%d", zero, id, id)
	t := rg.get()
	for i := 0; i < 8; i++ {
		v := x + VReg(i)
		fn.I(FMULe(S4, v, v, id, 0), FCVTNS(S4, t, v), FACGT(S4, v, c2p31, v), BSL(B16, v, t, kmin))
	}
	h := rg.getN(4)
	for i := 0; i < 4; i++ {
		fn.I(SQXTN(H4, h+VReg(i), x+VReg(2*i)), SQXTN(H8, h+VReg(i), x+VReg(2*i+1)))
	}
	b := x // two consecutive registers
	fn.I(SQXTN(B8, b, h), SQXTN(B16, b, h+1), SQXTN(B8, b+1, h+2), SQXTN(B16, b+1, h+3), ST1(B16, b, 2, 0, 32))
	fn.CountDown(2, "loop")
	fn.EndLoop()
	fn.Return()
}

// genQuantQ8_K writes quantQ8_KNEON: per block of 256, the element of
// largest magnitude with its sign (the first on ties, NaN skipped),
// iscale = -127/max, quants min(127, nearest_int(iscale·x)) truncated to a
// byte, the sums of 16 quants, and d = 1/iscale; an all-zero block is all
// zero bytes.
//
// The running maxima go in four chains of lanes, each lane keeping the
// first element of its largest magnitude. The first element of the block
// with that magnitude is the first of its own lane, so if the lanes'
// candidates all have one sign, that is the sign; only when both signs tie
// for the maximum does a scalar scan find the first.
func genQuantQ8_K(f *File) {
	fn, rg := quantizeFunc(f, "Q8_K", 256)
	magic, mant, k400, k127 := rg.get(), rg.get(), rg.get(), rg.get()
	floatConst(fn, magic, 0x4b400000) // 1.5·2^23, nearest_int's addend
	fn.Op("MOVW $0x007fffff, R%d", rTmp)
	fn.I(DUPg(S4, mant, rTmp), MOVI(S4, k400, 0x40, 16), MOVI(S4, k127, 127, 0))
	fn.Loop("loop", 1, "1 block of 256")
	fn.Op("MOVD R1, R3") // block start, for the second pass and the scan
	var m, ms [4]VReg
	for i := range m {
		m[i], ms[i] = rg.get(), rg.get()
		fn.I(MOVIzero(m[i]), MOVIzero(ms[i]))
	}
	for i := 0; i < 64; i += 4 {
		v := rg.getN(4)
		fn.I(LD1(S4, v, 4, 1, 64))
		for j := 0; j < 4; j++ {
			absMaxStep(fn, rg, m[j], ms[j], v+VReg(j))
		}
		rg.putN(v, 4)
	}
	fn.I(FMAX(S4, m[0], m[0], m[1]), FMAX(S4, m[2], m[2], m[3]), FMAX(S4, m[0], m[0], m[2]), FMAXV(m[0], m[0]))
	amax := m[0]
	rg.put(m[1], m[2], m[3])
	fn.Op("FCMPS $(0.0), F%d", amax)
	fn.Op("BEQ zero")
	// Candidates equal to +amax and to -amax, in any lane.
	av, nv, pos, neg := rg.get(), rg.get(), rg.get(), rg.get()
	fn.I(DUPe(S4, av, amax, 0), FNEG(S4, nv, av),
		FCMEQ(S4, pos, ms[0], av), FCMEQ(S4, neg, ms[0], nv))
	t := rg.get()
	for i := 1; i < 4; i++ {
		fn.I(FCMEQ(S4, t, ms[i], av), ORR(B16, pos, pos, t), FCMEQ(S4, t, ms[i], nv), ORR(B16, neg, neg, t))
	}
	for i := range ms {
		rg.put(ms[i])
	}
	fn.I(UMOV(D1, 5, pos, 0), UMOV(D1, 6, pos, 1))
	fn.Op("ORR R5, R6, R6") // any +amax
	fn.I(UMOV(D1, 5, neg, 0), UMOV(D1, 7, neg, 1))
	fn.Op("ORR R5, R7, R7") // any -amax
	mx := t
	fn.Op("FMOVS F%d, F%d", amax, mx)
	fn.Op("CBZ R7, signed") // no -amax: max is +amax
	fn.Op("FNEGS F%d, F%d", amax, mx)
	fn.Op("CBZ R6, signed") // no +amax: max is -amax
	fn.Op("MOVD R3, R8")    // both: the first element of magnitude amax
	fn.Label("scan")
	fn.Op("FMOVS.P 4(R8), F%d", mx)
	fn.Op("FABSS F%d, F%d", mx, pos)
	fn.Op("FCMPS F%d, F%d", amax, pos)
	fn.Op("BNE scan")
	fn.Label("signed")
	is := av
	floatConst(fn, neg, 0xc2fe0000) // -127
	fn.Op("FDIVS F%d, F%d, F%d", mx, neg, is)
	fn.Op("FMOVS $(1.0), F%d", nv)
	fn.Op("FDIVS F%d, F%d, F%d", is, nv, nv)
	fn.Op("FMOVS F%d, (R0)", nv)
	fn.Op("ADD $4, R0, R0")
	rg.put(amax, nv, pos, neg, t)
	bs := rg.getN(2) // the 16 sums as halves
	for g := 0; g < 16; g++ {
		v := rg.getN(4)
		fn.I(LD1(S4, v, 4, 3, 64))
		for j := 0; j < 4; j++ {
			q := v + VReg(j)
			fn.I(FMULe(S4, q, q, is, 0), FADD(S4, q, q, magic), AND(B16, q, q, mant), SUB(S4, q, q, k400), SMIN(S4, q, q, k127))
		}
		fn.I(XTN(H4, v, v), XTN(H8, v, v+1), XTN(H4, v+2, v+2), XTN(H8, v+2, v+3), XTN(B8, v, v), XTN(B16, v, v+2),
			ST1(B16, v, 1, 0, 16), SADDLV(B16, v, v), INSe(H4, bs+VReg(g/8), g%8, v, 0))
		rg.putN(v, 4)
	}
	fn.I(ST1(H8, bs, 2, 0, 32))
	fn.Label("next")
	fn.CountDown(2, "loop")
	fn.EndLoop()
	fn.Return()
	// An all-zero block.
	fn.Label("zero")
	z := rg.getN(4)
	for i := 0; i < 4; i++ {
		fn.I(MOVIzero(z + VReg(i)))
	}
	fn.Op("MOVW ZR, (R0)")
	fn.Op("ADD $4, R0, R0")
	for i := 0; i < 4; i++ {
		fn.I(ST1(B16, z, 4, 0, 64))
	}
	fn.I(ST1(B16, z, 2, 0, 32))
	fn.Op("B next")
}
