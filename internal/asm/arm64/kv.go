package main

import (
	"fmt"
	"math"
)

// The attention kernels of package kv over F16 and INT8 cache rows, in
// plain NEON (all of it is float32 arithmetic). Like the quant kernels
// they keep their Go twins' order of operations as Go compiles the twins
// for arm64: a dot product is four running sums, lane i taking elements
// i, i+4, …, each step one fused multiply-add, the leftover elements going
// into lane 0, and the lanes added as (s0+s1)+(s2+s3); an axpy is one
// fused multiply-add per element, axpy2 dst += fma(a0, x, a1·y).

// elemKind is the type of a cache row.
type elemKind struct {
	name  string // "F16", "I8"
	gtype string // Go element type
	size  int    // bytes per element
}

var (
	kindF16 = elemKind{"F16", "uint16", 2}
	kindI8  = elemKind{"I8", "int8", 1}
)

// load4 loads 4 elements from p (advancing it) as 4 floats into d.
func (e elemKind) load4(fn *Func, d VReg, p XReg) {
	if e.size == 2 {
		fn.I(LD1(H4, d, 1, p, 8), FCVTL(H4, d, d))
		return
	}
	fn.I(LD1L(S2, d, 0, p, 4), SSHLL(B8, d, d, 0), SSHLL(H4, d, d, 0), SCVTF(S4, d, d))
}

// load16 loads 16 elements from p (advancing it) as floats into d..d+3,
// using t (two consecutive registers) as scratch.
func (e elemKind) load16(fn *Func, d, t VReg, p XReg) {
	if e.size == 2 {
		fn.I(LD1(H8, t, 2, p, 32), FCVTL(H4, d, t), FCVTL(H8, d+1, t), FCVTL(H4, d+2, t+1), FCVTL(H8, d+3, t+1))
		return
	}
	fn.I(LD1(B16, t, 1, p, 16), SSHLL(B8, t+1, t, 0), SSHLL(B16, t, t, 0),
		SSHLL(H4, d, t+1, 0), SSHLL(H8, d+1, t+1, 0), SSHLL(H4, d+2, t, 0), SSHLL(H8, d+3, t, 0),
		SCVTF(S4, d, d), SCVTF(S4, d+1, d+1), SCVTF(S4, d+2, d+2), SCVTF(S4, d+3, d+3))
}

// load1 loads one element from Rp (advancing it) as a float into F(d),
// through R5.
func (e elemKind) load1(fn *Func, d VReg, p XReg) {
	if e.size == 2 {
		fn.Op("MOVHU.P 2(R%d), R5", p)
		fn.Op("FMOVS R5, F%d", d)
		fn.Op("FCVTHS F%d, F%d", d, d)
		return
	}
	fn.Op("MOVB.P 1(R%d), R5", p)
	fn.Op("SCVTFWS R5, F%d", d)
}

// genDot writes dot<E>F32NEON(k, q, n): Σ k[i]·q[i] as dotGeneric
// computes it.
func genDot(f *File, e elemKind) {
	fn := f.NewFunc(fmt.Sprintf("dot%sF32NEON", e.name), fmt.Sprintf("dot%sF32NEON returns Σ k[i]·q[i] for i < n, as dotGeneric does.", e.name),
		[]Arg{{"k", "*" + e.gtype}, {"q", "*float32"}, {"n", "int"}}, []Arg{{"ret", "float32"}})
	rg := newVRegs(fn.Name)
	fn.Load("k q n", 0, 1, 2)
	acc := rg.get()
	fn.I(MOVIzero(acc))
	fn.Op("LSR $4, R2, R3")
	fn.Op("CBZ R3, four")
	kv, t, qv := rg.getN(4), rg.getN(2), rg.getN(4)
	loops16And4(fn, func() {
		e.load16(fn, kv, t, 0)
		fn.I(LD1(S4, qv, 4, 1, 64))
		for i := 0; i < 4; i++ {
			fn.I(FMLA(S4, acc, kv+VReg(i), qv+VReg(i)))
		}
	}, func() {
		e.load4(fn, kv, 0)
		fn.I(LD1(S4, qv, 1, 1, 16), FMLA(S4, acc, kv, qv))
	})
	fn.Op("BEQ sum")
	// The leftover elements go into lane 0, one fused multiply-add each.
	s := t
	fn.Op("FMOVS F%d, F%d", acc, s)
	fn.Repeat("loop1", 2, func() {
		e.load1(fn, kv, 0)
		fn.Op("FMOVS.P 4(R1), F%d", qv)
		fn.Op("FMADDS F%d, F%d, F%d, F%d", qv, s, kv, s)
	})
	fn.I(INSe(S2, acc, 0, s, 0))
	fn.Label("sum")
	fn.I(FADDP(S4, acc, acc, acc), FADDPs(acc, acc))
	fn.Op("FMOVS F%d, %s", acc, fn.Arg("ret"))
	fn.Op("RET")
}

// loops16And4 emits the row kernels' loops over n (R2; R3 counts passes)
// elements, from label "four" when fewer than 16: 16 elements a pass with
// body16 while 16 remain, then 4 with body4, leaving the last n%4 in R2
// (flags set) at label "tail".
func loops16And4(fn *Func, body16, body4 func()) {
	fn.Loop("loop", 1, "16 elements")
	body16()
	fn.CountDown(3, "loop")
	fn.EndLoop()
	fn.Label("four")
	fn.Op("AND $15, R2, R2")
	fn.Op("LSR $2, R2, R3")
	fn.Op("CBZ R3, tail")
	fn.Repeat("loop4", 3, body4)
	fn.Label("tail")
	fn.Op("ANDS $3, R2, R2")
}

// genAxpy writes axpy<E>NEON(dst, a, v, n): dst[i] += a·v[i], fused.
func genAxpy(f *File, e elemKind) {
	fn := f.NewFunc(fmt.Sprintf("axpy%sNEON", e.name), fmt.Sprintf("axpy%sNEON adds a·v[i] to dst[i] for i < n, as axpyGeneric does.", e.name),
		[]Arg{{"dst", "*float32"}, {"a", "float32"}, {"v", "*" + e.gtype}, {"n", "int"}}, nil)
	rg := newVRegs(fn.Name)
	a := rg.get()
	fn.Load("dst", 0)
	fn.LoadF("a", a)
	fn.Load("v", 1)
	d, vv, t := rg.getN(4), rg.getN(4), rg.getN(2)
	axpyLoops(fn, d, func() {
		e.load16(fn, vv, t, 1)
		for i := 0; i < 4; i++ {
			fn.I(FMLAe(S4, d+VReg(i), vv+VReg(i), a, 0))
		}
	}, func() {
		e.load4(fn, vv, 1)
		fn.I(FMLAe(S4, d, vv, a, 0))
	}, func() {
		e.load1(fn, vv, 1)
		fn.Op("FMADDS F%d, F%d, F%d, F%d", vv, d, a, d)
	})
}

// axpyLoops emits the loops of the axpy kernels: dst (R0) and n (R2)
// taken 16 elements at a time, then 4, then 1. d holds dst's elements as
// loaded; add16, add4 and add1 add the products to d, 16, 4 and 1 of them.
func axpyLoops(fn *Func, d VReg, add16, add4, add1 func()) {
	fn.Op("MOVD %s, R2", fn.Arg("n"))
	fn.Op("LSR $4, R2, R3")
	fn.Op("CBZ R3, four")
	loops16And4(fn, func() {
		fn.I(LD1(S4, d, 4, 0, 0))
		add16()
		fn.I(ST1(S4, d, 4, 0, 64))
	}, func() {
		fn.I(LD1(S4, d, 1, 0, 0))
		add4()
		fn.I(ST1(S4, d, 1, 0, 16))
	})
	fn.Op("BEQ done")
	fn.Repeat("loop1", 2, func() {
		fn.Op("FMOVS (R0), F%d", d)
		add1()
		fn.Op("FMOVS.P F%d, 4(R0)", d)
	})
	fn.Return()
}

// genAxpy2 writes axpy2<E>NEON(dst, a0, a1, v0, v1, n): dst[i] +=
// fma(a0, v0[i], a1·v1[i]), as axpy2Generic compiles on arm64.
func genAxpy2(f *File, e elemKind) {
	fn := f.NewFunc(fmt.Sprintf("axpy2%sNEON", e.name), fmt.Sprintf("axpy2%sNEON adds a0·v0[i] + a1·v1[i] to dst[i] for i < n, as axpy2Generic does.", e.name),
		[]Arg{{"dst", "*float32"}, {"a0", "float32"}, {"a1", "float32"}, {"v0", "*" + e.gtype}, {"v1", "*" + e.gtype}, {"n", "int"}}, nil)
	rg := newVRegs(fn.Name)
	a0, a1 := rg.get(), rg.get()
	fn.Load("dst", 0)
	fn.LoadF("a0 a1", a0, a1)
	fn.Load("v0 v1", 1, 4)
	d, x, y, t := rg.getN(4), rg.getN(4), rg.getN(4), rg.getN(2)
	axpyLoops(fn, d, func() {
		e.load16(fn, x, t, 1)
		e.load16(fn, y, t, 4)
		for i := VReg(0); i < 4; i++ {
			fn.I(FMULe(S4, y+i, y+i, a1, 0), FMLAe(S4, y+i, x+i, a0, 0), FADD(S4, d+i, d+i, y+i))
		}
	}, func() {
		e.load4(fn, x, 1)
		e.load4(fn, y, 4)
		fn.I(FMULe(S4, y, y, a1, 0), FMLAe(S4, y, x, a0, 0), FADD(S4, d, d, y))
	}, func() {
		e.load1(fn, x, 1)
		e.load1(fn, y, 4)
		fn.Op("FMULS F%d, F%d, F%d", a1, y, y)
		fn.Op("FMADDS F%d, F%d, F%d, F%d", a0, y, x, y)
		fn.Op("FADDS F%d, F%d, F%d", y, d, d)
	})
}

// scoresArgs is the argument list of the scores kernels: lead, then k,
// the int8 rows' scales, q, rows and d.
func (e elemKind) scoresArgs(lead ...Arg) []Arg {
	args := append(lead, Arg{"k", "*" + e.gtype})
	if e.size == 1 {
		args = append(args, Arg{"scales", "*float32"})
	}
	return append(args, Arg{"q", "*float32"}, Arg{"rows", "int"}, Arg{"d", "int"})
}

// rowBytes sets register Rdst to the bytes of a row of Rd elements.
func (e elemKind) rowBytes(fn *Func, d, dst int) {
	if e.size == 2 {
		fn.Op("LSL $1, R%d, R%d", d, dst)
	} else {
		fn.Op("MOVD R%d, R%d", d, dst)
	}
}

// genScores writes scores<E>NEON: dst[i] = row i of k · q (times scales[i]
// for INT8) for rows a positive multiple of 4 and d a positive multiple of
// 4. Four rows go at once, each with its own four running sums, the same
// as one dot<E>F32 call per row.
func genScores(f *File, e elemKind) {
	args := e.scoresArgs(Arg{"dst", "*float32"})
	doc := fmt.Sprintf("scores%sNEON sets dst[i] to the dot product of row i of k with q, rows of d elements, for rows and d positive multiples of 4, as dotGeneric computes each.", e.name)
	if e.size == 1 {
		doc = "scoresI8NEON sets dst[i] to the dot product of row i of k with q times scales[i], rows of d elements, for rows and d positive multiples of 4, as scoresI8Rows computes each."
	}
	fn := f.NewFunc(fmt.Sprintf("scores%sNEON", e.name), doc, args, nil)
	rg := newVRegs(fn.Name)
	fn.Load("dst k scales? q rows d", 0, 1, 12, 2, 3, 4)
	e.rowBytes(fn, 4, 5)
	fn.Op("LSR $2, R4, R4") // steps of 4 per row
	acc := rg.getN(4)
	kv := rg.getN(4)
	qv := rg.get()
	fn.Label("rows")
	fn.Chain(1, 5, 6, 7, 8, 9)
	fn.Op("MOVD R2, R10")
	fn.Op("MOVD R4, R11")
	for i := VReg(0); i < 4; i++ {
		fn.I(MOVIzero(acc + i))
	}
	fn.Loop("loop", 4, "4 elements × 1 row")
	fn.I(LD1(S4, qv, 1, 10, 16))
	for r := VReg(0); r < 4; r++ {
		e.load4(fn, kv+r, 6+XReg(r))
	}
	for r := VReg(0); r < 4; r++ {
		fn.I(FMLA(S4, acc+r, kv+r, qv))
	}
	fn.CountDown(11, "loop")
	fn.EndLoop()
	fn.I(FADDP(S4, acc, acc, acc+1), FADDP(S4, acc+2, acc+2, acc+3), FADDP(S4, acc, acc, acc+2))
	if e.size == 1 {
		fn.I(LD1(S4, kv, 1, 12, 16), FMUL(S4, acc, acc, kv))
	}
	fn.I(ST1(S4, acc, 1, 0, 16))
	fn.Op("MOVD R9, R1") // row 4: where row 3 ended
	fn.Op("SUBS $4, R3, R3")
	fn.Op("BNE rows")
	fn.Op("RET")
}

func kvFiles() []*File {
	f := &File{Pkg: "kv", Name: "kernels_neon",
		Doc: "Attention kernels over F16 and INT8 cache rows for ARMv8.0 NEON, with the Go twins' order of operations."}
	for _, e := range []elemKind{kindF16, kindI8} {
		genDot(f, e)
		genAxpy(f, e)
		genAxpy2(f, e)
		genScores(f, e)
	}
	for _, e := range []elemKind{kindF16, kindI8} {
		genScoresX4(f, e)
	}
	q4 := &File{Pkg: "kv", Name: "kernels_int4_neon",
		Doc: "Attention kernels over INT4 (q4_0) cache rows for ARMv8.0 NEON, with the Go twins' order of operations."}
	genScoresQ4(q4)
	genScoresQ4x4(q4)
	genAxpyQ4(q4)
	genAxpy2Q4(q4)
	return []*File{f, q4}
}

// genScoresX4 writes scores<E>x4NEON: four query heads (q, d floats each)
// against the same rows of k, dst[h·stride+i] = row i · head h (times
// scales[i] for INT8), for rows a positive multiple of 4 and d of 4. Each
// key row is read once for the four heads; each (head, row) keeps its own
// four running sums, as dotGeneric does, so every result is the
// one-head kernel's, bit for bit. Sixteen independent chains per pass.
func genScoresX4(f *File, e elemKind) {
	args := e.scoresArgs(Arg{"dst", "*float32"}, Arg{"stride", "int"})
	doc := fmt.Sprintf("scores%sx4NEON sets dst[h*stride+i] to the dot product of row i of k with head h of q (d floats each), for h < 4, rows a positive multiple of 4 and d of 4, as dotGeneric computes each.", e.name)
	if e.size == 1 {
		doc = "scoresI8x4NEON sets dst[h*stride+i] to the dot product of row i of k with head h of q (d floats each) times scales[i], for h < 4, rows a positive multiple of 4 and d of 4, as scoresI8Rows computes each."
	}
	fn := f.NewFunc(fmt.Sprintf("scores%sx4NEON", e.name), doc, args, nil)
	rg := newVRegs(fn.Name)
	fn.Load("dst stride", 0, 1)
	fn.Op("LSL $2, R1, R1") // bytes between heads' outputs
	fn.Load("k scales? q rows d", 2, 6, 3, 4, 5)
	e.rowBytes(fn, 5, 7)
	fn.Op("LSL $2, R5, R14") // bytes between heads' queries
	fn.Op("LSR $2, R5, R5")  // steps of 4 per row
	// acc[h*4+r]: head h, row r.
	acc := rg.many(16)
	kv, qv := rg.getN(4), rg.getN(4)
	fn.Label("rows")
	fn.Chain(2, 7, 8, 9, 10, 11)
	// Head h's query at R12, R15, R16, R17.
	fn.Chain(3, 14, 12, 15, 16, 17)
	fn.Op("MOVD R5, R13")
	for _, a := range acc {
		fn.I(MOVIzero(a))
	}
	fn.Loop("loop", 16, "4 elements × 4 rows × 4 heads")
	for r := VReg(0); r < 4; r++ {
		e.load4(fn, kv+r, 8+XReg(r))
	}
	for h, p := range []XReg{12, 15, 16, 17} {
		fn.I(LD1(S4, qv+VReg(h), 1, p, 16))
		for r := 0; r < 4; r++ {
			fn.I(FMLA(S4, acc[4*h+r], kv+VReg(r), qv+VReg(h)))
		}
	}
	fn.CountDown(13, "loop")
	fn.EndLoop()
	sc := kv
	if e.size == 1 {
		fn.I(LD1(S4, sc, 1, 6, 16))
	}
	fn.Op("MOVD R0, R15")
	for h := 0; h < 4; h++ {
		a := acc[4*h:]
		fn.I(FADDP(S4, a[0], a[0], a[1]), FADDP(S4, a[2], a[2], a[3]), FADDP(S4, a[0], a[0], a[2]))
		if e.size == 1 {
			fn.I(FMUL(S4, a[0], a[0], sc))
		}
		fn.I(ST1(S4, a[0], 1, 15, 0))
		if h < 3 {
			fn.Op("ADD R1, R15, R15")
		}
	}
	fn.Op("ADD $16, R0, R0")
	fn.Op("MOVD R11, R2") // row 4: where row 3 ended
	fn.Op("SUBS $4, R4, R4")
	fn.Op("BNE rows")
	fn.Op("RET")
}

// --- INT4 rows: q4_0 blocks of 32 (kv/int4.go, kv/kernels_int4.go) ---

// q4Consts returns the nibble mask and the two TBL tables that map a code
// n to the low and high byte of bfloat16(n-8): every n-8 in -8..7 is a
// bfloat16 value exactly, so a table lookup and SHLL give the float32 the
// twins read from q4Lo and q4Hi.
func q4Consts(fn *Func, rg *vregs) (k0f, tabLo, tabHi VReg) {
	k0f, tabLo, tabHi = rg.get(), rg.get(), rg.get()
	fn.I(MOVI(B16, k0f, 0x0f, 0))
	var lo, hi [2]uint64
	for n := 0; n < 16; n++ {
		b := math.Float32bits(float32(n)-8) >> 16
		lo[n/8] |= uint64(b&0xff) << (8 * (n % 8))
		hi[n/8] |= uint64(b>>8) << (8 * (n % 8))
	}
	for _, t := range []struct {
		d VReg
		v [2]uint64
	}{{tabLo, lo}, {tabHi, hi}} {
		fn.Op("MOVD $0x%016x, R%d", t.v[0], rTmp)
		fn.I(INSg(D1, t.d, 0, rTmp))
		fn.Op("MOVD $0x%016x, R%d", t.v[1], rTmp)
		fn.I(INSg(D1, t.d, 1, rTmp))
	}
	return k0f, tabLo, tabHi
}

// q4Floats returns the 16 codes (one per byte) of z, minus 8, as four
// float vectors in byte order; z is left alone.
func q4Floats(fn *Func, rg *vregs, z, tabLo, tabHi VReg) [4]VReg {
	var f [4]VReg
	tl, th, h := rg.get(), rg.get(), rg.get()
	fn.I(TBL(B16, tl, tabLo, 1, z), TBL(B16, th, tabHi, 1, z))
	for i := 0; i < 2; i++ {
		f[2*i], f[2*i+1] = rg.get(), rg.get()
		if i == 0 {
			fn.I(ZIP1(B16, h, tl, th))
		} else {
			fn.I(ZIP2(B16, h, tl, th))
		}
		fn.I(SHLL(H4, f[2*i], h), SHLL(H8, f[2*i+1], h))
	}
	rg.put(tl, th, h)
	return f
}

// genScoresQ4 writes scoresQ4NEON(dst, k, q, rows, d): dst[i] = row i of
// k · q for rows a positive multiple of 4 and d a positive multiple of 32,
// as dotQ4F32Generic computes each, with q permuted by the caller
// (permuteQ4Query): per block, vector i is q[2i], q[2i+16], q[2i+1],
// q[2i+17], the products the twin's four running sums s0..s3 take at step
// i. The codes are put in the same order (ZIP of the low and high
// nibbles), so lane l of a block's vector is the twin's s_l, one fused
// multiply-add per step; the lanes are added as (s0+s1)+(s2+s3) and the
// block's sum added to the row's with one more fused multiply-add by d.
// Four rows go at once, their sums in the lanes of one vector.
func genScoresQ4(f *File) {
	fn := f.NewFunc("scoresQ4NEON", "scoresQ4NEON sets dst[i] to the dot product of q4_0 row i of k with q, rows of d elements, for rows a positive multiple of 4 and d of 32, as dotQ4F32Generic computes each; q is permuted by permuteQ4Query.",
		[]Arg{{"dst", "*float32"}, {"k", "*byte"}, {"q", "*float32"}, {"rows", "int"}, {"d", "int"}}, nil)
	rg := newVRegs(fn.Name)
	fn.Load("dst k q rows d", 0, 1, 2, 3, 4)
	fn.Op("LSR $5, R4, R4") // blocks per row
	fn.Op("MOVD $18, R5")
	fn.Op("MUL R4, R5, R5") // row bytes
	k0f, tabLo, tabHi := q4Consts(fn, rg)
	acc, dv := rg.get(), rg.get()
	qv := rg.getN(8)
	fn.Label("rows")
	fn.Chain(1, 5, 6, 7, 8, 9)
	fn.Op("MOVD R2, R10")
	fn.Op("MOVD R4, R11")
	fn.I(MOVIzero(acc))
	fn.Loop("loop", 4, "1 block of 32 × 4 rows")
	fn.I(LD1(S4, qv, 4, 10, 64), LD1(S4, qv+4, 4, 10, 64))
	s := make([]VReg, 4)
	for r := 0; r < 4; r++ {
		p := XReg(6 + r)
		c, lo := rg.get(), rg.get()
		fn.I(LD1L(H4, dv, r, p, 2), LD1(B16, c, 1, p, 16), AND(B16, lo, c, k0f), USHR(B16, c, c, 4))
		z := [2]VReg{rg.get(), rg.get()}
		fn.I(ZIP1(B16, z[0], lo, c), ZIP2(B16, z[1], lo, c))
		rg.put(c, lo)
		s[r] = rg.get()
		fn.I(MOVIzero(s[r]))
		for i, zz := range z {
			fs := q4Floats(fn, rg, zz, tabLo, tabHi)
			for j, fv := range fs {
				fn.I(FMLA(S4, s[r], fv, qv+VReg(4*i+j)))
			}
			rg.put(fs[:]...)
		}
		rg.put(z[0], z[1])
		if r%2 == 1 {
			fn.I(FADDP(S4, s[r-1], s[r-1], s[r]))
			rg.put(s[r])
		}
	}
	fn.I(FADDP(S4, s[0], s[0], s[2]), FCVTL(H4, dv, dv), FMLA(S4, acc, s[0], dv))
	rg.put(s[0], s[2])
	fn.CountDown(11, "loop")
	fn.EndLoop()
	fn.I(ST1(S4, acc, 1, 0, 16))
	fn.Op("MOVD R9, R1") // row 4: where row 3 ended
	fn.Op("SUBS $4, R3, R3")
	fn.Op("BNE rows")
	fn.Op("RET")
}

// genScoresQ4x4 writes scoresQ4x4NEON(dst, stride, k, q, rows, d): four
// query heads against the same q4_0 rows, dst[h·stride+i] = row i · head
// h, for rows ≥ 1 and d a positive multiple of 32, each result the one-head
// kernel's bits. Each block's codes are widened to floats once for the
// four heads. q is permuted by permuteQ4Query4: per block and step i, the
// four heads' vectors of genScoresQ4 one after another. A row's four sums
// are the lanes of one vector, each block's added with one fused
// multiply-add by the block's d.
func genScoresQ4x4(f *File) {
	fn := f.NewFunc("scoresQ4x4NEON", "scoresQ4x4NEON sets dst[h*stride+i] to the dot product of q4_0 row i of k with head h of q, for h < 4, rows ≥ 1 and d a positive multiple of 32, as dotQ4F32Generic computes each; q holds the four heads permuted by permuteQ4Query4.",
		[]Arg{{"dst", "*float32"}, {"stride", "int"}, {"k", "*byte"}, {"q", "*float32"}, {"rows", "int"}, {"d", "int"}}, nil)
	rg := newVRegs(fn.Name)
	fn.Load("dst stride", 0, 1)
	fn.Op("LSL $2, R1, R1") // bytes between heads' outputs
	fn.Load("k q rows d", 2, 3, 4, 5)
	fn.Op("LSR $5, R5, R5") // blocks per row
	k0f, tabLo, tabHi := q4Consts(fn, rg)
	acc, dv := rg.get(), rg.get()
	qv := rg.getN(4)
	fn.Label("rows")
	fn.Op("MOVD R3, R10")
	fn.Op("MOVD R5, R11")
	fn.I(MOVIzero(acc))
	fn.Loop("loop", 4, "1 block of 32 × 1 row × 4 heads")
	c, lo := rg.get(), rg.get()
	fn.I(LD1R(H4, dv, 2, 2), LD1(B16, c, 1, 2, 16), AND(B16, lo, c, k0f), USHR(B16, c, c, 4))
	z := [2]VReg{rg.get(), rg.get()}
	fn.I(ZIP1(B16, z[0], lo, c), ZIP2(B16, z[1], lo, c))
	rg.put(c, lo)
	s := make([]VReg, 4)
	for h := range s {
		s[h] = rg.get()
		fn.I(MOVIzero(s[h]))
	}
	for _, zz := range z {
		fs := q4Floats(fn, rg, zz, tabLo, tabHi)
		for _, fv := range fs {
			fn.I(LD1(S4, qv, 4, 10, 64))
			for h := range s {
				fn.I(FMLA(S4, s[h], fv, qv+VReg(h)))
			}
		}
		rg.put(fs[:]...)
	}
	rg.put(z[0], z[1])
	fn.I(FADDP(S4, s[0], s[0], s[1]), FADDP(S4, s[2], s[2], s[3]), FADDP(S4, s[0], s[0], s[2]),
		FCVTL(H4, dv, dv), FMLA(S4, acc, s[0], dv))
	rg.put(s...)
	fn.CountDown(11, "loop")
	fn.EndLoop()
	fn.Op("MOVD R0, R12")
	for h := 0; h < 4; h++ {
		fn.I(ST1L(S2, acc, h, 12, 0))
		if h < 3 {
			fn.Op("ADD R1, R12, R12")
		}
	}
	fn.Op("ADD $4, R0, R0")
	fn.CountDown(4, "rows")
	fn.Op("RET")
}

// genAxpyQ4 writes axpyQ4NEON(dst, a, v, n): per block of 32, ad = a·d and
// dst[j] = fma(ad, code_j - 8, dst[j]), as axpyQ4Generic compiles.
func genAxpyQ4(f *File) {
	fn := f.NewFunc("axpyQ4NEON", "axpyQ4NEON adds a·v[i] to dst[i] for the n elements (a positive multiple of 32) of the q4_0 row v, as axpyQ4Generic does.",
		[]Arg{{"dst", "*float32"}, {"a", "float32"}, {"v", "*byte"}, {"n", "int"}}, nil)
	rg := newVRegs(fn.Name)
	a := rg.get()
	fn.Load("dst", 0)
	fn.LoadF("a", a)
	fn.Load("v n", 1, 2)
	fn.Op("LSR $5, R2, R2")
	k0f, tabLo, tabHi := q4Consts(fn, rg)
	o := rg.getN(8)
	ad, c, lo := rg.get(), rg.get(), rg.get()
	fn.Loop("loop", 1, "1 block of 32")
	fn.I(LD1L(H4, ad, 0, 1, 2), FCVTL(H4, ad, ad))
	fn.Op("FMULS F%d, F%d, F%d", ad, a, ad)
	fn.I(LD1(B16, c, 1, 1, 16), AND(B16, lo, c, k0f), USHR(B16, c, c, 4),
		LD1(S4, o, 4, 0, 64), LD1(S4, o+4, 4, 0, 0))
	fn.Op("SUB $64, R0, R0")
	for i, z := range []VReg{lo, c} {
		fs := q4Floats(fn, rg, z, tabLo, tabHi)
		for j, fv := range fs {
			fn.I(FMLAe(S4, o+VReg(4*i+j), fv, ad, 0))
		}
		rg.put(fs[:]...)
	}
	fn.I(ST1(S4, o, 4, 0, 64), ST1(S4, o+4, 4, 0, 64))
	fn.CountDown(2, "loop")
	fn.EndLoop()
	fn.Op("RET")
}

// genAxpy2Q4 writes axpy2Q4NEON(dst, a0, a1, v0, v1, n): per block, ad0 =
// a0·d0, ad1 = a1·d1 and dst[j] += fma(ad0, x_j, ad1·y_j), as
// axpy2Q4Generic compiles on arm64.
func genAxpy2Q4(f *File) {
	fn := f.NewFunc("axpy2Q4NEON", "axpy2Q4NEON adds a0·v0[i] + a1·v1[i] to dst[i] for the n elements (a positive multiple of 32) of the q4_0 rows v0 and v1, as axpy2Q4Generic does.",
		[]Arg{{"dst", "*float32"}, {"a0", "float32"}, {"a1", "float32"}, {"v0", "*byte"}, {"v1", "*byte"}, {"n", "int"}}, nil)
	rg := newVRegs(fn.Name)
	a0, a1 := rg.get(), rg.get()
	fn.Load("dst", 0)
	fn.LoadF("a0 a1", a0, a1)
	fn.Load("v0 v1 n", 1, 4, 2)
	fn.Op("LSR $5, R2, R2")
	k0f, tabLo, tabHi := q4Consts(fn, rg)
	o := rg.getN(8)
	ad0, ad1 := rg.get(), rg.get()
	fn.Loop("loop", 2, "1 block of 32 × 2 rows")
	fn.I(LD1L(H4, ad0, 0, 1, 2), LD1L(H4, ad1, 0, 4, 2), FCVTL(H4, ad0, ad0), FCVTL(H4, ad1, ad1))
	fn.Op("FMULS F%d, F%d, F%d", ad0, a0, ad0)
	fn.Op("FMULS F%d, F%d, F%d", ad1, a1, ad1)
	cx, lx, cy, ly := rg.get(), rg.get(), rg.get(), rg.get()
	fn.I(LD1(B16, cx, 1, 1, 16), AND(B16, lx, cx, k0f), USHR(B16, cx, cx, 4),
		LD1(B16, cy, 1, 4, 16), AND(B16, ly, cy, k0f), USHR(B16, cy, cy, 4),
		LD1(S4, o, 4, 0, 64), LD1(S4, o+4, 4, 0, 0))
	fn.Op("SUB $64, R0, R0")
	for i, zz := range [][2]VReg{{lx, ly}, {cx, cy}} {
		xs := q4Floats(fn, rg, zz[0], tabLo, tabHi)
		ys := q4Floats(fn, rg, zz[1], tabLo, tabHi)
		for j := range xs {
			fn.I(FMULe(S4, ys[j], ys[j], ad1, 0), FMLAe(S4, ys[j], xs[j], ad0, 0), FADD(S4, o+VReg(4*i+j), o+VReg(4*i+j), ys[j]))
		}
		rg.put(xs[:]...)
		rg.put(ys[:]...)
	}
	rg.put(cx, lx, cy, ly)
	fn.I(ST1(S4, o, 4, 0, 64), ST1(S4, o+4, 4, 0, 64))
	fn.CountDown(2, "loop")
	fn.EndLoop()
	fn.Op("RET")
}
