package main

import (
	"strings"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ssmFiles lists the files of package internal/ssm: the Mamba-2 scan of
// one head over one token, the twin of scanHeadGo in internal/ssm, and the
// Mamba-1 scan of a block of channels over one token, selectiveGo's. The
// twin fixes the order: every product and sum rounded to float32 (no
// FMA), each row's sum over the state in 16 partial sums (lane i mod 16 of
// the blocks of 16), folded halves, then pairs, then neighbours (hsum),
// plus the tail's scalar sum; so AVX2 (two Y accumulators, lanes 0-7 and
// 8-15) and AVX-512 (one Z) give the twin's bits. Mamba-1's exponential
// is softmax.Expf lane by lane (expPS, kv's softmax's).
func ssmFiles() []outFile {
	return []outFile{{"kernels", func() {
		for _, nt := range []bool{false, true} {
			ssmScanHead(avx2, nt)
			ssmScanHead(avx512, nt)
		}
		ssmSelective(avx2)
		ssmSelective(avx512)
		for _, w := range []width{avx2, avx512} {
			for _, k := range rwkvKernels {
				rwkvHead(w, k)
			}
		}
		ssmSoftplus()
	}}}
}

// rwkvKernel is one RWKV head kernel: its name (before the width's
// suffix), Go signature, doc (after the name), arguments and their
// registers (rwkvHead's), what it sets up once (or nil), and one row's
// work for rwkvHead.
type rwkvKernel struct {
	name, sig, doc string
	args           string
	regs           []Register
	setup          func()
	row            func(w width, at, each func(Register) Mem)
}

// rwkvKernels are the RWKV heads: wkv6Head (R12 u; Z/Y2 kv, Z/Y3 y's term,
// Z/Y4 in's block) and glaHead (X6 scale; Z/Y2 k·v, Z/Y3 the new state,
// Z/Y4 w's broadcast, Z/Y5 r·scale's).
var rwkvKernels = []rwkvKernel{{
	name: "wkv6Head",
	sig:  "func(st, in, r, w, k, v, u, y *float32, n int)",
	doc: " advances an n×n head's state by a token, so[j] = si[j]·w[i] + k[i]·v[j],\n" +
		"y[j] = Σ_i (k[i]·v[j]·u[i] + si[j])·r[i], in wkv6HeadGo's order; n a multiple of the lanes.",
	args: "st in r w k v u y n",
	regs: []Register{RDI, RSI, R8, R9, R10, R11, R12, R13, RDX},
	row: func(w width, at, each func(Register) Mem) {
		c.VBROADCASTSS(each(R10), w.vec(2))
		c.VMULPS(w.vec(1), w.vec(2), w.vec(2))
		c.VBROADCASTSS(each(R12), w.vec(3))
		c.VMULPS(w.vec(3), w.vec(2), w.vec(3))
		c.VMOVUPS(at(RSI), w.vec(4))
		c.VADDPS(w.vec(4), w.vec(3), w.vec(3))
		c.VBROADCASTSS(each(R8), w.vec(5))
		c.VMULPS(w.vec(5), w.vec(3), w.vec(3))
		c.VADDPS(w.vec(3), w.vec(0), w.vec(0))
		c.VBROADCASTSS(each(R9), w.vec(5))
		c.VMULPS(w.vec(5), w.vec(4), w.vec(5))
		c.VADDPS(w.vec(2), w.vec(5), w.vec(5))
		c.VMOVUPS(w.vec(5), at(RDI))
	},
}, {
	name: "glaHead",
	sig:  "func(st, in, r, w, k, v, y *float32, n int, scale float32)",
	doc: " advances an n×n head's state by a token, so[j] = si[j]·w[i] + k[i]·v[j],\n" +
		"y[j] = Σ_i so[j]·(r[i]·scale), in glaHeadGo's order; n a multiple of the lanes.",
	args:  "st in r w k v y n",
	regs:  []Register{RDI, RSI, R8, R9, R10, R11, R13, RDX},
	setup: func() { c.VMOVSS(param("scale"), X6) },
	row: func(w width, at, each func(Register) Mem) {
		c.VBROADCASTSS(each(R10), w.vec(2))
		c.VMULPS(w.vec(1), w.vec(2), w.vec(2))
		c.VBROADCASTSS(each(R9), w.vec(4))
		c.VMULPS(at(RSI), w.vec(4), w.vec(3))
		c.VADDPS(w.vec(2), w.vec(3), w.vec(3))
		c.VMOVUPS(w.vec(3), at(RDI))
		c.VMULSS(each(R8), X6, X5)
		c.VBROADCASTSS(X5, w.vec(5))
		c.VMULPS(w.vec(5), w.vec(3), w.vec(3))
		c.VADDPS(w.vec(3), w.vec(0), w.vec(0))
	},
}}

// rwkvHead emits kernel k at width w: the twin's operations (wkv6HeadGo's,
// glaHeadGo's) on a vector of columns j at a time, the columns outermost,
// so that y's block stays in the accumulator Z/Y0 over the rows i (y[j]
// still sums over i in the twin's order, from zero) and v's block is
// loaded once into Z/Y1. DI st, SI in, R8 r, R9 w, R10 k, R11 v, R13 y,
// DX n (a multiple of the lanes), BX a row's bytes, AX the block's column,
// R14 the row's element offset in bytes, CX the row i. k.row emits one
// row's work, given the row's block of a state (at) and row i's element
// of a vector (each); Z/Y2-Z/Y5 are its scratch. No FMA: the twins round
// every product and sum.
func rwkvHead(w width, k rwkvKernel) {
	name := k.name + w.suffix()
	text(name, NOSPLIT, k.sig, strings.Split(name+k.doc, "\n")...)
	loadArgs(k.args, k.regs...)
	if k.setup != nil {
		k.setup()
	}
	c.MOVQ(RDX, RBX)
	c.SHLQ(U8(2), RBX)
	c.XORQ(RAX, RAX)
	label("block")
	c.CMPQ(RAX, RDX)
	c.JGE(ref("done"))
	c.VXORPS(w.vec(0), w.vec(0), w.vec(0))
	c.VMOVUPS(memx(R11, 0, RAX, 4), w.vec(1))
	c.MOVQ(RAX, R14)
	c.SHLQ(U8(2), R14)
	c.XORQ(RCX, RCX)
	label("row")
	k.row(w, func(base Register) Mem { return memx(base, 0, R14, 1) },
		func(base Register) Mem { return memx(base, 0, RCX, 4) })
	c.ADDQ(RBX, R14)
	c.INCQ(RCX)
	c.CMPQ(RCX, RDX)
	c.JLT(ref("row"))
	c.VMOVUPS(w.vec(0), memx(R13, 0, RAX, 4))
	c.ADDQ(U8(w.lanes()), RAX)
	c.JMP(ref("block"))
	label("done")
	retVoid()
}

// ssmScanHead: DI the state's row, SI the row it follows (in, maybe DI),
// R8 B, R9 C, R10 x, R11 y, CX rows left, DX the state's length, BX its
// bytes, R12 its blocks of 16 (in floats), AX the index; Z/Y14 dA
// broadcast, Z/Y15 x·dt broadcast, X13 dt, X12 d, X2 x·d; accumulators
// Y0 (and Y1 for AVX2 lanes 8-15), X6 the tail's sum; X3-X5 scratch.
//
// With nt the blocks' stores are non-temporal (VMOVNTPS, then SFENCE): for
// a state written out of place and too large for the caches, which would
// otherwise read every line of s before writing it; s must then be
// aligned to the vector width and n a multiple of 16.
func ssmScanHead(w width, nt bool) {
	name := "scanHead" + w.suffix()
	doc := []string{name + " advances rows rows of n floats by a token: s = in·dA + B·(x[p]·dt),",
		"y[p] = Σ s·C + x[p]·d, in scanHeadGo's order."}
	if nt {
		name = "scanHeadNT" + w.suffix()
		doc = []string{name + " is scanHead" + w.suffix() + " with non-temporal stores of the state,",
			"which must be aligned to the vector width, in rows of a multiple of 16."}
	}
	text(name, NOSPLIT, "func(s, in, B, C, x, y *float32, rows, n int, dA, dt, d float32)", doc...)
	loadArgs("s in B C x y rows n", RDI, RSI, R8, R9, R10, R11, RCX, RDX)
	c.VBROADCASTSS(param("dA"), w.vec(14))
	c.VMOVSS(param("dt"), X13)
	c.VMOVSS(param("d"), X12)
	c.MOVQ(RDX, RBX)
	c.SHLQ(U8(2), RBX)
	c.MOVQ(RDX, R12)
	c.ANDQ(I32(-16), R12)
	jumpIfZero(RCX, "done")
	label("row")
	c.VMOVSS(mem(R10, 0), X0)
	c.VMULSS(X13, X0, X1)
	c.VMULSS(X12, X0, X2)
	c.VBROADCASTSS(X1, w.vec(15))
	ssmBlocks()
	halves := 1
	if !w.wide() {
		halves = 2
	}
	for h := 0; h < halves; h++ {
		at := func(base Register) Mem { return memx(base, 32*h, RAX, 4) }
		v, t, acc := w.vec(3), w.vec(4), w.vec(h)
		c.VMULPS(at(RSI), w.vec(14), v)
		c.VMULPS(at(R8), w.vec(15), t)
		c.VADDPS(t, v, v)
		if nt {
			c.VMOVNTPS(v, at(RDI))
		} else {
			c.VMOVUPS(v, at(RDI))
		}
		c.VMULPS(at(R9), v, t)
		c.VADDPS(t, acc, acc)
	}
	ssmReduce(w)
	c.VMULSS(memx(RSI, 0, RAX, 4), X14, X3)
	ssmTailStep(X3, X4)
	c.VADDSS(X2, X0, X0)
	c.VMOVSS(X0, mem(R11, 0))
	c.ADDQ(RBX, RDI)
	c.ADDQ(RBX, RSI)
	c.ADDQ(U8(4), R10)
	c.ADDQ(U8(4), R11)
	decJNZ(RCX, "row")
	label("done")
	if nt {
		c.SFENCE()
	}
	retVoid()
}

// ssmSelective: DI the state's row, SI the row it follows (in, maybe DI),
// R13 the row's decays A, R8 B, R9 C, R10 the row's index p (x, dt, D
// and y are read through R11 from the frame, once a row), CX rows, DX the
// state's length, BX its bytes, R12 its blocks of 16 (in floats), AX the
// index; Z/Y14 dt broadcast, Z/Y15 x·dt broadcast, Y13 (and Z20 for
// AVX-512) Expf's floor, X7 x·D; accumulators Y0 (and Y1 for AVX2 lanes
// 8-15), X6 the tail's sum. A block's exponentials are one expPS over its
// 16 lanes (AVX2 two Y registers side by side); the tail's one lane at a
// time on X registers, the same operations.
func ssmSelective(w width) {
	name := "selective" + w.suffix()
	text(name, NOSPLIT, "func(s, in, A, B, C, x, dt, D, y *float32, rows, n int)",
		name+" advances rows channels of n state floats by a token: s = in·Expf(dt[p]·A) + B·(x[p]·dt[p]),",
		"y[p] = Σ s·C + x[p]·D[p], in selectiveGo's order.")
	loadArgs("s in A B C rows n", RDI, RSI, R13, R8, R9, RCX, RDX)
	c.VMOVUPS(expfConsts().Offset(expfFloor), Y13)
	if w.wide() {
		c.VBROADCASTSS(X13, Z20)
	}
	c.MOVQ(RDX, RBX)
	c.SHLQ(U8(2), RBX)
	c.MOVQ(RDX, R12)
	c.ANDQ(I32(-16), R12)
	c.XORQ(R10, R10)
	jumpIfZero(RCX, "done")
	at := func(name string) Mem {
		load(name, R11)
		return memx(R11, 0, R10, 4)
	}
	label("row")
	c.VMOVSS(at("x"), X0)
	c.VBROADCASTSS(at("dt"), w.vec(14))
	c.VMULSS(X14, X0, X1)
	c.VBROADCASTSS(X1, w.vec(15))
	c.VMULSS(at("D"), X0, X7)
	ssmBlocks()
	el := func(base Register, h int) Mem { return memx(base, 32*h, RAX, 4) }
	var xs, ts, ms, ps []Register
	floor := Register(Y13)
	if w.wide() {
		xs, ts, ms, ps, floor = []Register{Z16}, []Register{Z17}, []Register{K1}, []Register{Z18}, Z20
	} else {
		xs, ts, ms, ps = []Register{Y2, Y3}, []Register{Y4, Y5}, []Register{Y8, Y9}, []Register{Y10, Y11}
	}
	for h, x := range xs {
		c.VMULPS(el(R13, h), w.vec(14), x)
	}
	expPS(xs, ts, ms, ps, floor, w.wide())
	for h, p := range ps {
		x := xs[h]
		c.VMULPS(el(RSI, h), p, p)
		c.VMULPS(el(R8, h), w.vec(15), x)
		c.VADDPS(x, p, p)
		c.VMOVUPS(p, el(RDI, h))
		c.VMULPS(el(R9, h), p, x)
		c.VADDPS(x, w.vec(h), w.vec(h))
	}
	ssmReduce(w)
	c.VMOVSS(memx(R13, 0, RAX, 4), X2)
	c.VMULSS(X14, X2, X2)
	expPS([]Register{X2}, []Register{X4}, []Register{X8}, []Register{X10}, X13, false)
	c.VMULSS(memx(RSI, 0, RAX, 4), X10, X10)
	ssmTailStep(X10, X3)
	c.VADDSS(X7, X0, X0)
	c.VMOVSS(X0, at("y"))
	c.ADDQ(RBX, RDI)
	c.ADDQ(RBX, RSI)
	c.ADDQ(RBX, R13)
	c.INCQ(R10)
	c.CMPQ(R10, RCX)
	c.JLT(ref("row"))
	label("done")
	retVoid()
}

// logfConsts is the table of ssm's logf beside Expf's (ln2's two parts are
// expfConsts'), eight copies of each: the mantissa mask, 1, √2, ½, the
// exponent bias 127, the polynomial's coefficients (highest degree
// first), and softplus's threshold 20.
func logfConsts() Mem {
	cs := []uint32{
		0x007fffff,                                                 // mantissa
		0x3f800000,                                                 // 1
		0x3fb504f3,                                                 // √2
		0x3f000000,                                                 // ½
		127,                                                        // bias
		0x3d9021bb, 0xbdebd1b8, 0x3def251a, 0xbdfe5d4f, 0x3e11e9bf, // logCoef
		0xbe2aae50, 0x3e4cceac, 0xbe7ffffc, 0x3eaaaaaa,
		0x41a00000, // 20
	}
	return table32("logfC", copies8(cs)...)
}

// Offsets in logfConsts.
const (
	logfMant = 32 * iota
	logfOne
	logfSqrt2
	logfHalf
	logfBias
	logfC8
	logfTwenty = logfC8 + 32*9
)

// ssmSoftplus emits softplusAVX2(dst, x, bias *float32, n int), softplusGo
// eight lanes at a time and then one (the same operations on X
// registers): DI dst, SI x, R8 bias, CX n; Y13 Expf's floor.
func ssmSoftplus() {
	text("softplusAVX2", NOSPLIT, "func(dst, x, bias *float32, n int)",
		"softplusAVX2 sets dst[i] to the softplus of x[i] + bias[i] for n floats, as softplusGo.")
	loadArgs("dst x bias n", RDI, RSI, R8, RCX)
	c.VMOVUPS(expfConsts().Offset(expfFloor), Y13)
	label("loop8")
	c.CMPQ(RCX, U8(8))
	c.JLT(ref("loop1"))
	c.VMOVUPS(mem(RSI, 0), Y0)
	c.VADDPS(mem(R8, 0), Y0, Y0)
	softplusPS(yr)
	c.VMOVUPS(Y0, mem(RDI, 0))
	for _, r := range []Register{RSI, R8, RDI} {
		c.ADDQ(U8(32), r)
	}
	c.SUBQ(U8(8), RCX)
	c.JMP(ref("loop8"))
	label("loop1")
	jumpIfZero(RCX, "done")
	c.VMOVSS(mem(RSI, 0), X0)
	c.VADDSS(mem(R8, 0), X0, X0)
	softplusPS(func(i int) VecPhysical { return xs[i] })
	c.VMOVSS(X0, mem(RDI, 0))
	for _, r := range []Register{RSI, R8, RDI} {
		c.ADDQ(U8(4), r)
	}
	c.DECQ(RCX)
	c.JMP(ref("loop1"))
	label("done")
	retVoid()
}

// softplusPS replaces v (register 0 of r, Y or X) by ssm's softplus of
// it, lane by lane in softplus's and logf's order: e = Expf(v) (expPS),
// y = 1 + e, k and m from y's bits, m halved and k raised where m >= √2,
// f = m − 1, the polynomial, its terms added, plus y − y (NaN for NaN),
// then v itself where v > 20. Registers 1-12 scratch, 13 Expf's floor.
func softplusPS(r func(int) VecPhysical) {
	l, e := logfConsts(), expfConsts()
	v, y, k, m, t, f, z, p := r(0), r(5), r(6), r(7), r(8), r(9), r(10), r(11)
	c.VMOVAPS(v, r(1))
	expPS([]Register{r(1)}, []Register{r(2)}, []Register{r(3)}, []Register{r(4)}, r(13), false)
	c.VADDPS(l.Offset(logfOne), r(4), y)
	c.VPSRLD(U8(23), y, k)
	c.VPSUBD(l.Offset(logfBias), k, k)
	c.VCVTDQ2PS(k, k)
	c.VANDPS(l.Offset(logfMant), y, m)
	c.VORPS(l.Offset(logfOne), m, m)
	c.VCMPPS(U8(0x0d), l.Offset(logfSqrt2), m, r(12)) // m >= √2
	c.VMULPS(l.Offset(logfHalf), m, t)
	c.VBLENDVPS(r(12), t, m, m)
	c.VANDPS(l.Offset(logfOne), r(12), t)
	c.VADDPS(t, k, k)
	c.VSUBPS(l.Offset(logfOne), m, f)
	c.VMULPS(f, f, z)
	c.VMULPS(l.Offset(logfC8), f, p)
	for j := 1; j < 9; j++ {
		if j > 1 {
			c.VMULPS(f, p, p)
		}
		c.VADDPS(l.Offset(logfC8+32*j), p, p)
	}
	c.VMULPS(f, p, p)
	c.VMULPS(z, p, p)
	c.VMULPS(e.Offset(expfLn2Lo), k, t)
	c.VADDPS(t, p, p)
	c.VMULPS(l.Offset(logfHalf), z, t)
	c.VSUBPS(t, p, p)
	c.VADDPS(p, f, p)
	c.VMULPS(e.Offset(expfLn2Hi), k, t)
	c.VADDPS(t, p, p)
	c.VSUBPS(y, y, t)
	c.VADDPS(t, p, p)
	c.VCMPPS(U8(0x0e), l.Offset(logfTwenty), v, r(12)) // v > 20
	c.VBLENDVPS(r(12), v, p, v)
}

// ssmReduce ends a row's block loop (AX the index, by 16, back to
// "block") and emits "reduce": the accumulators Y0 (and Y1, or Z0's high
// half) summed into lane 0 of X0 in scanRowGo's fold order; then opens
// "tail", on to "out" once AX reaches DX.
func ssmReduce(w width) {
	c.ADDQ(U8(16), RAX)
	c.JMP(ref("block"))
	label("reduce")
	if w.wide() {
		fold512(Z0, Y1)
	} else {
		c.VADDPS(Y1, Y0, Y0)
	}
	hsum(Y0, X1)
	label("tail")
	c.CMPQ(RAX, RDX)
	c.JGE(ref("out"))
}

// ssmTailStep ends a tail element of a row, whose decayed state v holds
// (t scratch): v += B·x·dt (X15), stored to s, v·C added to the tail's
// sum X6, AX on and back to "tail"; then emits "out", where the tail's sum
// joins the row's, X0.
func ssmTailStep(v, t Register) {
	c.VMULSS(memx(R8, 0, RAX, 4), X15, t)
	c.VADDSS(t, v, v)
	c.VMOVSS(v, memx(RDI, 0, RAX, 4))
	c.VMULSS(memx(R9, 0, RAX, 4), v, t)
	c.VADDSS(t, X6, X6)
	c.INCQ(RAX)
	c.JMP(ref("tail"))
	label("out")
	c.VADDSS(X6, X0, X0)
}

// ssmBlocks opens a row's block loop: the accumulators Y0, Y1 (Z0's
// lanes) and X6 zeroed, AX from 0, on to "reduce" once AX reaches R12.
func ssmBlocks() {
	c.VXORPS(Y0, Y0, Y0)
	c.VXORPS(Y1, Y1, Y1)
	c.VXORPS(X6, X6, X6)
	c.XORQ(RAX, RAX)
	label("block")
	c.CMPQ(RAX, R12)
	c.JGE(ref("reduce"))
}
