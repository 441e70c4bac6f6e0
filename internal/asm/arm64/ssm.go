package main

import "math"

// The state-space kernels of package internal/ssm in plain NEON: the
// Mamba-2 scan of one head over one token (scanHeadGo's twin), the Mamba-1
// scan of a block of channels (selectiveGo's) and its time steps' softplus
// (softplusGo's). The twins round every product and sum to float32 (Go
// fuses none of them on arm64: their explicit conversions forbid it), so
// the kernels take FMUL then FADD, never FMLA. A row's sum over the state
// is the twin's: lane i mod 16 of the blocks of 16 in four registers of
// four lanes, folded j + j+8 (registers 0+2, 1+3), j + j+4 (the two
// sums), j + j+2 (the upper half moved down) and 0 + 1 (FADDP), then the
// tail's scalar sum added. Every lane of Expf and logf runs the twin's
// float32 operations in its order; a lone element runs the same vector
// code on lane 0.

func ssmFiles() []*File {
	f := &File{Pkg: "ssm", Name: "kernels_neon",
		Doc: "State-space scan kernels (Mamba-2's head, Mamba-1's channels and their softplus, the RWKV heads) for ARMv8.0 NEON, with the Go twins' order of operations."}
	genScanHead(f)
	genSelective(f)
	genSoftplus(f)
	genRWKVHeads(f)
	return []*File{f}
}

// f32 is the word of a float32 constant, as the twin spells it.
func f32(v float32) uint32 { return math.Float32bits(v) }

// The constants of softmax.Expf: log2(e), ln2's two parts, the floor and
// the polynomial's coefficients 1/7! … 1/0!.
var (
	expLog2e  = f32(1.44269504088896341)
	expLn2Hi  = f32(0.693359375)
	expLn2Lo  = f32(-2.12194440e-4)
	expFloor  = f32(-87.33654)
	expCoefs  = []uint32{f32(1.0 / 5040), f32(1.0 / 720), f32(1.0 / 120), f32(1.0 / 24), f32(1.0 / 6), f32(0.5), f32(1), f32(1)}
	logCoefs  = []uint32{f32(7.0376836292e-2), f32(-1.1514610310e-1), f32(1.1676998740e-1), f32(-1.2420140846e-1), f32(1.4249322787e-1), f32(-1.6668057665e-1), f32(2.0000714765e-1), f32(-2.4999993993e-1), f32(3.3333331174e-1)}
	logSqrt2  = f32(1.41421356)
	one       = f32(1)
	half      = f32(0.5)
	mantissa  = uint32(0x007fffff)
	twenty    = f32(20)
	expBias   = uint32(127)
	constTemp = XReg(19) // the general register constants pass through
)

// dupConst sets every lane of v to the word w.
func dupConst(fn *Func, v VReg, w uint32) {
	fn.Op("MOVW $0x%08x, R%d", w, constTemp)
	fn.I(DUPg(S4, v, constTemp))
}

// laneConsts sets lane i of v to ws[i], for the by-element multiplies.
func laneConsts(fn *Func, v VReg, ws ...uint32) {
	for i, w := range ws {
		fn.Op("MOVW $0x%08x, R%d", w, constTemp)
		fn.I(INSg(S2, v, i, constTemp))
	}
}

// expConsts are the registers of Expf's constants: mul holds log2(e),
// ln2's high and low parts and 1/7! in lanes 0-3; add the further
// coefficients 1/6! … 1/0! (the last two, both 1, one register, whose
// word is also 127<<23); floor in every lane.
type expConsts struct {
	mul, floor VReg
	add        []VReg
}

func newExpConsts(fn *Func, rg *vregs) expConsts {
	k := expConsts{mul: rg.get(), floor: rg.get()}
	laneConsts(fn, k.mul, expLog2e, expLn2Hi, expLn2Lo, expCoefs[0])
	dupConst(fn, k.floor, expFloor)
	for _, w := range expCoefs[1:7] {
		v := rg.get()
		dupConst(fn, v, w)
		k.add = append(k.add, v)
	}
	k.add = append(k.add, k.add[5]) // 1/1! and 1/0!
	return k
}

// expNEON replaces each xs[i] by Expf of its lanes into ps[i], in Expf's
// order: m = x < floor, n = round-to-even(x·log2e), r = x − n·ln2hi −
// n·ln2lo, Horner's rule from 1/7!, times 2ⁿ, whose word (int32(n) +
// 127)<<23 is int32(n)<<23 + 127<<23 modulo 2³² (FCVTZS saturates as Go's
// conversion does on arm64; 127<<23 is the word of 1.0), and 0 where m. A
// NaN x carries through every operation to the result, as Expf returns
// it. xs are left holding r, ns and ms scratch; the registers of each
// slice are independent chains, interleaved.
func expNEON(fn *Func, k expConsts, xs, ns, ps, ms []VReg) {
	each := func(f func(i int) Inst) {
		for i := range xs {
			fn.I(f(i))
		}
	}
	each(func(i int) Inst { return FCMGT(S4, ms[i], k.floor, xs[i]) })
	each(func(i int) Inst { return FMULe(S4, ns[i], xs[i], k.mul, 0) })
	each(func(i int) Inst { return FRINTN(S4, ns[i], ns[i]) })
	each(func(i int) Inst { return FMULe(S4, ps[i], ns[i], k.mul, 1) })
	each(func(i int) Inst { return FSUB(S4, xs[i], xs[i], ps[i]) })
	each(func(i int) Inst { return FMULe(S4, ps[i], ns[i], k.mul, 2) })
	each(func(i int) Inst { return FSUB(S4, xs[i], xs[i], ps[i]) })
	each(func(i int) Inst { return FMULe(S4, ps[i], xs[i], k.mul, 3) })
	for j, c := range k.add {
		if j > 0 {
			each(func(i int) Inst { return FMUL(S4, ps[i], ps[i], xs[i]) })
		}
		each(func(i int) Inst { return FADD(S4, ps[i], ps[i], c) })
	}
	each(func(i int) Inst { return FCVTZS(S4, ns[i], ns[i]) })
	each(func(i int) Inst { return SHL(S4, ns[i], ns[i], 23) })
	each(func(i int) Inst { return ADD(S4, ns[i], ns[i], k.add[5]) })
	each(func(i int) Inst { return FMUL(S4, ps[i], ps[i], ns[i]) })
	each(func(i int) Inst { return BIC(B16, ps[i], ps[i], ms[i]) })
}

// foldRow sums the four accumulators from acc into lane 0 of acc in
// scanRowGo's fold order, t scratch.
func foldRow(fn *Func, acc, t VReg) {
	fn.I(FADD(S4, acc, acc, acc+2), FADD(S4, acc+1, acc+1, acc+3), FADD(S4, acc, acc, acc+1),
		EXT(B16, t, acc, acc, 8), FADD(S2, acc, acc, t), FADDPs(acc, acc))
}

// scanRegs are the general registers of the scan kernels' loops: the
// row's blocks of 16 (kept) and the pass's count, the tail's length (kept)
// and count, B's and C's pointers for the row.
const (
	rBlocks XReg = 11
	rTail   XReg = 12
	rCount  XReg = 13
	rB      XReg = 14
	rC      XReg = 15
)

// rowRegs are the registers a row's loops share between the scans: the
// accumulators from acc, the tail's sum, t and u scratch, x·dt in lane
// xdtLane of xdt and x·d (D) in xd; the rows' B and C, y (advanced) and
// the rows left.
type rowRegs struct {
	acc, tail, t, u, xdt, xd VReg
	xdtLane                  int
	B, C, y, rows            XReg
}

// rowLoops emits a row's loops over its state elements and ends the row:
// the accumulators and the tail's sum zeroed, B and C from their row
// starts, block (16 elements, s advanced) while whole blocks remain, then
// the fold and, for each element left, decayed (which returns a register
// holding the element's state before B·x·dt, its lane 0 on the block
// loop's order) and the twin's remaining steps on lane 0 (s advanced);
// then y = (fold + tail) + x·d, on to the next row, and RET at "done".
func rowLoops(fn *Func, r rowRegs, block func(), decayed func() VReg) {
	acc, tail := r.acc, r.tail
	for i := VReg(0); i < 4; i++ {
		fn.I(MOVIzero(acc + i))
	}
	fn.I(MOVIzero(tail))
	fn.Op("MOVD R%d, R%d", r.B, rB)
	fn.Op("MOVD R%d, R%d", r.C, rC)
	fn.Op("CBZ R%d, fold", rBlocks)
	fn.Op("MOVD R%d, R%d", rBlocks, rCount)
	fn.Loop("block", 1, "16 state elements")
	block()
	fn.CountDown(rCount, "block")
	fn.EndLoop()
	fn.Label("fold")
	foldRow(fn, acc, r.t)
	fn.Op("CBZ R%d, out", rTail)
	fn.Op("MOVD R%d, R%d", rTail, rCount)
	fn.Label("tail")
	v := decayed()
	fn.Op("FMOVS.P 4(R%d), F%d", rB, r.t)
	fn.I(FMULe(S4, r.t, r.t, r.xdt, r.xdtLane))
	fn.Op("FADDS F%d, F%d, F%d", r.t, v, v)
	fn.Op("FMOVS.P F%d, 4(R0)", v)
	fn.Op("FMOVS.P 4(R%d), F%d", rC, r.u)
	fn.Op("FMULS F%d, F%d, F%d", v, r.u, r.u)
	fn.Op("FADDS F%d, F%d, F%d", r.u, tail, tail)
	fn.CountDown(rCount, "tail")
	fn.Label("out")
	fn.Op("FADDS F%d, F%d, F%d", tail, acc, acc)
	fn.Op("FADDS F%d, F%d, F%d", r.xd, acc, acc)
	fn.Op("FMOVS.P F%d, 4(R%d)", acc, r.y)
	fn.CountDown(r.rows, "row")
	fn.Return()
}

// splitN sets rBlocks and rTail from the state's length in register n.
func splitN(fn *Func, n XReg) {
	fn.Op("LSR $4, R%d, R%d", n, rBlocks)
	fn.Op("AND $15, R%d, R%d", n, rTail)
}

// genScanHead writes scanHeadNEON(s, in, B, C, x, y, rows, n, dA, dt, d):
// R0 s, R1 in (both advanced through the rows), R2 B, R3 C, R4 x, R5 y,
// R6 rows.
func genScanHead(f *File) {
	fn := f.NewFunc("scanHeadNEON", "scanHeadNEON advances rows rows of n floats by a token: s = in·dA + B·(x[p]·dt), y[p] = Σ s·C + x[p]·d, in scanHeadGo's order.",
		[]Arg{{"s", "*float32"}, {"in", "*float32"}, {"b", "*float32"}, {"c", "*float32"}, {"x", "*float32"}, {"y", "*float32"},
			{"rows", "int"}, {"n", "int"}, {"dA", "float32"}, {"dt", "float32"}, {"d", "float32"}}, nil)
	rg := newVRegs(fn.Name)
	dA, dt, d, xdt, xd := rg.get(), rg.get(), rg.get(), rg.get(), rg.get()
	acc, tail, t := rg.getN(4), rg.get(), rg.get()
	v, b, c := rg.getN(4), rg.getN(4), rg.getN(4)
	fn.Load("s in b c x y rows n", 0, 1, 2, 3, 4, 5, 6, 7)
	fn.LoadF("dA dt d", dA, dt, d)
	fn.Op("CBZ R6, done")
	splitN(fn, 7)
	fn.Label("row")
	fn.Op("FMOVS.P 4(R4), F%d", xd)
	fn.Op("FMULS F%d, F%d, F%d", dt, xd, xdt)
	fn.Op("FMULS F%d, F%d, F%d", d, xd, xd)
	rowLoops(fn, rowRegs{acc: acc, tail: tail, t: t, u: c, xdt: xdt, xd: xd, B: 2, C: 3, y: 5, rows: 6}, func() {
		fn.I(LD1(S4, v, 4, 1, 64), LD1(S4, b, 4, rB, 64), LD1(S4, c, 4, rC, 64))
		for i := VReg(0); i < 4; i++ {
			fn.I(FMULe(S4, v+i, v+i, dA, 0), FMULe(S4, b+i, b+i, xdt, 0), FADD(S4, v+i, v+i, b+i))
		}
		fn.I(ST1(S4, v, 4, 0, 64))
		for i := VReg(0); i < 4; i++ {
			fn.I(FMUL(S4, c+i, v+i, c+i), FADD(S4, acc+i, acc+i, c+i))
		}
	}, func() VReg {
		fn.Op("FMOVS.P 4(R1), F%d", v)
		fn.Op("FMULS F%d, F%d, F%d", dA, v, v)
		return v
	})
}

// genSelective writes selectiveNEON(s, in, A, B, C, x, dt, D, y, rows,
// n): R0 s, R1 in, R2 A (all three advanced through the rows), R3 B, R4
// C, R5 x, R6 dt, R7 D, R8 y, R9 rows. A block's 16 exponentials are four
// interleaved expNEON chains.
func genSelective(f *File) {
	fn := f.NewFunc("selectiveNEON", "selectiveNEON advances rows channels of n state floats by a token: s = in·Expf(dt[p]·A) + B·(x[p]·dt[p]), y[p] = Σ s·C + x[p]·D[p], in selectiveGo's order.",
		[]Arg{{"s", "*float32"}, {"in", "*float32"}, {"A", "*float32"}, {"b", "*float32"}, {"c", "*float32"}, {"x", "*float32"},
			{"dt", "*float32"}, {"D", "*float32"}, {"y", "*float32"}, {"rows", "int"}, {"n", "int"}}, nil)
	rg := newVRegs(fn.Name)
	k := newExpConsts(fn, rg)
	// dt[p] in lane 0 of dtx, x[p]·dt[p] in lane 1.
	dtx, xD := rg.get(), rg.get()
	acc, tail := rg.getN(4), rg.get()
	xs, ns, ps, ms := rg.getN(4), rg.getN(4), rg.getN(4), rg.many(4)
	regs := func(v VReg, n int) []VReg {
		r := make([]VReg, n)
		for i := range r {
			r[i] = v + VReg(i)
		}
		return r
	}
	fn.Load("s in A b c x dt D y rows n", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	fn.Op("CBZ R9, done")
	splitN(fn, 10)
	fn.Label("row")
	fn.Op("FMOVS.P 4(R5), F%d", xD)
	fn.Op("FMOVS.P 4(R6), F%d", dtx)
	fn.Op("FMULS F%d, F%d, F%d", dtx, xD, ns)
	fn.I(INSe(S2, dtx, 1, ns, 0))
	fn.Op("FMOVS.P 4(R7), F%d", ns)
	fn.Op("FMULS F%d, F%d, F%d", ns, xD, xD)
	rowLoops(fn, rowRegs{acc: acc, tail: tail, t: ns, u: xs, xdt: dtx, xdtLane: 1, xd: xD, B: 3, C: 4, y: 8, rows: 9}, func() {
		fn.I(LD1(S4, xs, 4, 2, 64))
		for i := VReg(0); i < 4; i++ {
			fn.I(FMULe(S4, xs+i, xs+i, dtx, 0))
		}
		expNEON(fn, k, regs(xs, 4), regs(ns, 4), regs(ps, 4), ms)
		fn.I(LD1(S4, xs, 4, 1, 64))
		for i := VReg(0); i < 4; i++ {
			fn.I(FMUL(S4, ps+i, xs+i, ps+i))
		}
		fn.I(LD1(S4, ns, 4, rB, 64))
		for i := VReg(0); i < 4; i++ {
			fn.I(FMULe(S4, ns+i, ns+i, dtx, 1), FADD(S4, ps+i, ps+i, ns+i))
		}
		fn.I(ST1(S4, ps, 4, 0, 64), LD1(S4, xs, 4, rC, 64))
		for i := VReg(0); i < 4; i++ {
			fn.I(FMUL(S4, xs+i, ps+i, xs+i), FADD(S4, acc+i, acc+i, xs+i))
		}
	}, func() VReg {
		fn.Op("FMOVS.P 4(R2), F%d", xs)
		fn.I(FMULe(S4, xs, xs, dtx, 0))
		expNEON(fn, k, []VReg{xs}, []VReg{ns}, []VReg{ps}, ms[:1])
		fn.Op("FMOVS.P 4(R1), F%d", xs)
		fn.Op("FMULS F%d, F%d, F%d", ps, xs, ps)
		return ps
	})
}

// genSoftplus writes softplusNEON(dst, x, bias, n): four lanes a pass,
// then one element at a time on lane 0 of the same code. R0 dst, R1 x, R2
// bias, R3 n.
func genSoftplus(f *File) {
	fn := f.NewFunc("softplusNEON", "softplusNEON sets dst[i] to the softplus of x[i] + bias[i] for n floats, as softplusGo.",
		[]Arg{{"dst", "*float32"}, {"x", "*float32"}, {"bias", "*float32"}, {"n", "int"}}, nil)
	rg := newVRegs(fn.Name)
	k := newExpConsts(fn, rg)
	// lmul: logCoef[0], ½; ladd: the further coefficients.
	lmul, vOne, sqrt2, mant, vTwenty, bias := rg.get(), rg.get(), rg.get(), rg.get(), rg.get(), rg.get()
	laneConsts(fn, lmul, logCoefs[0], half)
	dupConst(fn, bias, expBias)
	dupConst(fn, vOne, one)
	dupConst(fn, sqrt2, logSqrt2)
	dupConst(fn, mant, mantissa)
	dupConst(fn, vTwenty, twenty)
	ladd := rg.many(len(logCoefs) - 1)
	for i, v := range ladd {
		dupConst(fn, v, logCoefs[i+1])
	}
	v, w := rg.get(), rg.get()
	x, n, p, m, t := rg.get(), rg.get(), rg.get(), rg.get(), rg.get()
	fn.Load("dst x bias n", 0, 1, 2, 3)
	fn.Op("LSR $2, R3, R4")
	fn.Op("AND $3, R3, R3")
	body := func() {
		fn.I(FADD(S4, v, v, w), ORR(B16, x, v, v))
		expNEON(fn, k, []VReg{x}, []VReg{n}, []VReg{p}, []VReg{m})
		// logf(y), y = 1 + e: k = exponent − 127 (n), m = mantissa in
		// [1, 2) (m), halved and k raised where m >= √2 (lt = m < √2 in t).
		y, kk, mm, f, z := x, n, m, w, t
		fn.I(FADD(S4, y, vOne, p),
			USHR(S4, kk, y, 23), SUB(S4, kk, kk, bias), SCVTF(S4, kk, kk),
			AND(B16, mm, y, mant), ORR(B16, mm, mm, vOne),
			FCMGT(S4, t, sqrt2, mm), FMULe(S4, p, mm, lmul, 1), BIT(B16, p, mm, t),
			BIC(B16, t, vOne, t), FADD(S4, kk, kk, t),
			FSUB(S4, f, p, vOne), FMUL(S4, z, f, f),
			FMULe(S4, p, f, lmul, 0))
		for j, c := range ladd {
			if j > 0 {
				fn.I(FMUL(S4, p, p, f))
			}
			fn.I(FADD(S4, p, p, c))
		}
		// mm is free from here: the scratch of the sums.
		fn.I(FMUL(S4, p, p, f), FMUL(S4, p, p, z),
			FMULe(S4, mm, kk, k.mul, 2), FADD(S4, p, p, mm),
			FMULe(S4, mm, z, lmul, 1), FSUB(S4, p, p, mm),
			FADD(S4, p, f, p),
			FMULe(S4, mm, kk, k.mul, 1), FADD(S4, p, p, mm),
			FSUB(S4, mm, y, y), FADD(S4, p, p, mm),
			FCMGT(S4, mm, v, vTwenty), BIT(B16, p, v, mm))
	}
	fn.Op("CBZ R4, one")
	fn.Loop("four", 1, "4 time steps")
	fn.I(LD1(S4, v, 1, 1, 16), LD1(S4, w, 1, 2, 16))
	body()
	fn.I(ST1(S4, p, 1, 0, 16))
	fn.CountDown(4, "four")
	fn.EndLoop()
	fn.Label("one")
	fn.Op("CBZ R3, done")
	fn.Repeat("loop1", 3, func() {
		fn.Op("FMOVS.P 4(R1), F%d", v)
		fn.Op("FMOVS.P 4(R2), F%d", w)
		body()
		fn.Op("FMOVS.P F%d, 4(R0)", p)
	})
	fn.Return()
}

// rwkvPtrs are the general registers of the RWKV heads: the block's
// columns left, a row's count, in's and st's block in the row, a row's
// bytes, and the pointers into r, w, k and u (wkv6Head's) of the row,
// reset each block.
const (
	rwBlocks XReg = 9
	rwRows   XReg = 10
	rwIn     XReg = 11
	rwSt     XReg = 12
	rwStride XReg = 13
	rwR      XReg = 20
	rwW      XReg = 21
	rwK      XReg = 22
	rwU      XReg = 23
)

// rwkvHead emits the loops of an RWKV head kernel, the twin's operations
// (wkv6HeadGo's, glaHeadGo's) on 16 columns at a time in four registers:
// the columns outermost, so that y's block stays in the accumulators acc
// over the rows (y[j] still sums over i in the twin's order, from zero)
// and v's block is loaded once into vv. R0 st and R1 in (advanced a
// block at a time), R2 r, R3 w, R4 k, R5 v (advanced), R6 u, R7 y
// (advanced), R8 n, a multiple of 16. scalars lists the vectors r, w, k,
// u whose row element row reads (FMOVS.P from rwR … rwU); row emits one
// row's work, in's block loaded into si (rwIn advanced a row), its new
// state stored from si to rwSt by the loop.
func rwkvHead(fn *Func, rg *vregs, scalars []XReg, row func(acc, vv, si VReg)) {
	acc, vv, si := rg.getN(4), rg.getN(4), rg.getN(4)
	fn.Op("LSR $4, R8, R%d", rwBlocks)
	fn.Op("CBZ R%d, done", rwBlocks)
	fn.Op("LSL $2, R8, R%d", rwStride)
	fn.Label("block")
	for i := VReg(0); i < 4; i++ {
		fn.I(MOVIzero(acc + i))
	}
	fn.I(LD1(S4, vv, 4, 5, 64))
	fn.Op("MOVD R1, R%d", rwIn)
	fn.Op("MOVD R0, R%d", rwSt)
	for i, p := range scalars {
		fn.Op("MOVD R%d, R%d", []XReg{2, 3, 4, 6}[i], p)
	}
	fn.Op("MOVD R8, R%d", rwRows)
	fn.Label("row")
	fn.I(LD1Post(S4, si, 4, rwIn, rwStride))
	row(acc, vv, si)
	fn.I(ST1(S4, si, 4, rwSt, 0))
	fn.Op("ADD R%d, R%d, R%d", rwStride, rwSt, rwSt)
	fn.CountDown(rwRows, "row")
	fn.I(ST1(S4, acc, 4, 7, 64))
	fn.Op("ADD $64, R0, R0")
	fn.Op("ADD $64, R1, R1")
	fn.CountDown(rwBlocks, "block")
	fn.Return()
}

// genRWKVHeads writes wkv6HeadNEON(st, in, r, w, k, v, u, y, n) and
// glaHeadNEON(st, in, r, w, k, v, y, n, scale), on rwkvHead's loops.
func genRWKVHeads(f *File) {
	vec := func(names ...string) []Arg {
		args := make([]Arg, len(names))
		for i, n := range names {
			args[i] = Arg{n, "*float32"}
		}
		return args
	}
	fn := f.NewFunc("wkv6HeadNEON", "wkv6HeadNEON advances an n×n head's state by a token, so[j] = si[j]·w[i] + k[i]·v[j], y[j] = Σ_i (k[i]·v[j]·u[i] + si[j])·r[i], in wkv6HeadGo's order; n a multiple of 16.",
		append(vec("st", "in", "r", "w", "k", "v", "u", "y"), Arg{"n", "int"}), nil)
	rg := newVRegs(fn.Name)
	r, w, k, u := rg.get(), rg.get(), rg.get(), rg.get()
	kv, t := rg.getN(4), rg.getN(4)
	fn.Load("st in r w k v u y n", 0, 1, 2, 3, 4, 5, 6, 7, 8)
	rwkvHead(fn, rg, []XReg{rwR, rwW, rwK, rwU}, func(acc, vv, si VReg) {
		for _, l := range []struct {
			p XReg
			v VReg
		}{{rwK, k}, {rwU, u}, {rwR, r}, {rwW, w}} {
			fn.Op("FMOVS.P 4(R%d), F%d", l.p, l.v)
		}
		for i := VReg(0); i < 4; i++ {
			fn.I(FMULe(S4, kv+i, vv+i, k, 0), FMULe(S4, t+i, kv+i, u, 0), FADD(S4, t+i, t+i, si+i),
				FMULe(S4, t+i, t+i, r, 0), FADD(S4, acc+i, acc+i, t+i),
				FMULe(S4, si+i, si+i, w, 0), FADD(S4, si+i, si+i, kv+i))
		}
	})

	fn = f.NewFunc("glaHeadNEON", "glaHeadNEON advances an n×n head's state by a token, so[j] = si[j]·w[i] + k[i]·v[j], y[j] = Σ_i so[j]·(r[i]·scale), in glaHeadGo's order; n a multiple of 16.",
		append(vec("st", "in", "r", "w", "k", "v", "y"), Arg{"n", "int"}, Arg{"scale", "float32"}), nil)
	rg = newVRegs(fn.Name)
	r, w, k, scale := rg.get(), rg.get(), rg.get(), rg.get()
	kv, t = rg.getN(4), rg.getN(4)
	fn.Load("st in r w k v y n", 0, 1, 2, 3, 4, 5, 7, 8)
	fn.LoadF("scale", scale)
	rwkvHead(fn, rg, []XReg{rwR, rwW, rwK}, func(acc, vv, si VReg) {
		for _, l := range []struct {
			p XReg
			v VReg
		}{{rwK, k}, {rwR, r}, {rwW, w}} {
			fn.Op("FMOVS.P 4(R%d), F%d", l.p, l.v)
		}
		fn.Op("FMULS F%d, F%d, F%d", scale, r, r)
		for i := VReg(0); i < 4; i++ {
			fn.I(FMULe(S4, kv+i, vv+i, k, 0), FMULe(S4, si+i, si+i, w, 0), FADD(S4, si+i, si+i, kv+i),
				FMULe(S4, t+i, si+i, r, 0), FADD(S4, acc+i, acc+i, t+i))
		}
	})
}
