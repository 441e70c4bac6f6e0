package main

import "fmt"

// The quantized dot-product kernels of package quant.
//
// Every kernel keeps the order of float32 operations of its pure-Go twin
// as the Go compiler builds it for arm64, so that its results are the
// twin's, bit for bit: per block the integer dot product is exact (in any
// order), and it is scaled and added to the running sum with the same
// roundings and fused multiply-adds the twin's one line per block compiles
// to. A kernel for h rows keeps the h running sums in the lanes of one
// vector, one lane per row, so h independent chains of additions fill the
// pipeline where one row's chain would stall it.

// level is a CPU feature level.
type level int

const (
	neon    level = iota // ARMv8.0 Advanced SIMD: SMULL and SADALP
	dotprod              // FEAT_DotProd: SDOT
	i8mm                 // FEAT_I8MM: SMMLA
)

func (l level) suffix() string { return [...]string{"NEON", "Dotprod", "I8MM"}[l] }

// General registers of the tile kernels. R18 is the platform register
// and R26–R30 belong to Go; the kernels use R0–R17.
const (
	rW, rWStride, rX, rXStride, rNB, rOut, rOutStride XReg = 0, 1, 2, 3, 4, 5, 6
	rRow0                                             XReg = 7  // rows in R7–R10
	rCol0                                             XReg = 11 // columns in R11–R14
	rTmp                                              XReg = 15
	rTmp2                                             XReg = 16
)

// kfn is the state of one kernel being generated.
type kfn struct {
	*Func
	rg   *vregs
	lvl  level
	h    int // rows, one per lane: 1 or 4
	cols int
}

var tileArgs = []Arg{
	{"w", "*byte"}, {"wStride", "int"}, {"x", "*byte"}, {"xStride", "int"},
	{"nb", "int"}, {"out", "*float32"}, {"outStride", "int"},
}

var dotArgs = []Arg{{"w", "*byte"}, {"x", "*byte"}, {"nb", "int"}}

// newKernel starts a dot kernel (h = 1, cols = 1, returning the sum) or a
// tile kernel of h rows and cols columns and loads its pointers: row r at
// R7+r, column c at R11+c, the block count in R4.
func newKernel(f *File, lvl level, name string, h, cols int) *kfn {
	var fn *Func
	if h == 1 && cols == 1 {
		fn = f.NewFunc(name, fmt.Sprintf("%s returns the dot product of nb blocks of w and x (%s).", name, lvl.suffix()),
			dotArgs, []Arg{{"ret", "float32"}})
		fn.Load("w x nb", rRow0, rCol0, rNB)
	} else {
		fn = f.NewFunc(name, fmt.Sprintf("%s sets out[c*outStride+r] to the dot product of nb blocks of row r of w and column c of x for r < %d, c < %d (%s); strides are in bytes for w and x.", name, h, cols, lvl.suffix()),
			tileArgs, nil)
		fn.Load("w wStride x xStride nb", rRow0, rWStride, rCol0, rXStride, rNB)
		for r := 1; r < h; r++ {
			fn.Op("ADD R%d, R%d, R%d", rWStride, rRow0+XReg(r-1), rRow0+XReg(r))
		}
		for c := 1; c < cols; c++ {
			fn.Op("ADD R%d, R%d, R%d", rXStride, rCol0+XReg(c-1), rCol0+XReg(c))
		}
	}
	fn.Op("CBZ R%d, done", rNB)
	return &kfn{Func: fn, rg: newVRegs(name), lvl: lvl, h: h, cols: cols}
}

func (k *kfn) row(r int) XReg { return rRow0 + XReg(r) }
func (k *kfn) col(c int) XReg { return rCol0 + XReg(c) }

// loopEnd closes the block loop.
func (k *kfn) loopEnd() {
	k.CountDown(rNB, "loop")
	k.EndLoop()
}

// finish stores the running sums: acc[c] holds column c, lane r row r.
func (k *kfn) finish(acc []VReg) {
	if k.h == 1 && k.cols == 1 {
		k.Op("FMOVS F%d, %s", acc[0], k.Arg("ret"))
		k.Op("RET")
		k.Label("done")
		k.Op("MOVW ZR, %s", k.Arg("ret"))
		k.Op("RET")
		return
	}
	check(k.h == 4, "%s: tile kernels take 4 rows", k.Name)
	k.Load("out outStride", rOut, rOutStride)
	k.Op("LSL $2, R%d, R%d", rOutStride, rOutStride)
	for c := 0; c < k.cols; c++ {
		k.I(ST1(S4, acc[c], 1, rOut, 0))
		if c+1 < k.cols {
			k.Op("ADD R%d, R%d, R%d", rOutStride, rOut, rOut)
		}
	}
	k.Return()
}

// zeroAcc returns n cleared float accumulators.
func (k *kfn) zeroAcc(n int) []VReg {
	acc := make([]VReg, n)
	for i := range acc {
		acc[i] = k.rg.get()
		k.I(MOVIzero(acc[i]))
	}
	return acc
}

// dot32 returns a fresh 4-lane int32 vector whose lanes sum to the dot
// product of the signed bytes w[0], w[1] with x[0], x[1] (32 of each).
// small says every product pair fits int16 (|w| ≤ 64), which lets the
// NEON form add two products before widening.
func (k *kfn) dot32(w, x [2]VReg, small bool) VReg {
	acc := k.rg.get()
	switch k.lvl {
	case dotprod, i8mm:
		k.I(MOVIzero(acc), SDOT(acc, w[0], x[0]), SDOT(acc, w[1], x[1]))
	case neon:
		t0, t1 := k.rg.get(), k.rg.get()
		if small {
			k.I(SMULL(B8, t0, w[0], x[0]), SMULL(B8, t1, w[1], x[1]),
				SMLAL(B16, t0, w[0], x[0]), SMLAL(B16, t1, w[1], x[1]),
				SADDLP(H8, acc, t0), SADALP(H8, acc, t1))
		} else {
			k.I(SMULL(B8, t0, w[0], x[0]), SMULL(B16, t1, w[0], x[0]),
				SADDLP(H8, acc, t0), SADALP(H8, acc, t1),
				SMULL(B8, t0, w[1], x[1]), SMULL(B16, t1, w[1], x[1]),
				SADALP(H8, acc, t0), SADALP(H8, acc, t1))
		}
		k.rg.put(t0, t1)
	}
	return acc
}

// dot16 is dot32 for one vector of 16 bytes whose products fit int16 in
// pairs.
func (k *kfn) dot16(w, x VReg) VReg {
	acc := k.rg.get()
	switch k.lvl {
	case dotprod, i8mm:
		k.I(MOVIzero(acc), SDOT(acc, w, x))
	case neon:
		t := k.rg.get()
		k.I(SMULL(B8, t, w, x), SMLAL(B16, t, w, x), SADDLP(H8, acc, t))
		k.rg.put(t)
	}
	return acc
}

// rowSums reduces the per-row vectors vs (one per row, h of them) to one
// vector whose lane r is the sum of the lanes of vs[r]; it frees vs.
func (k *kfn) rowSums(vs []VReg) VReg {
	switch len(vs) {
	case 1:
		k.I(ADDV(S4, vs[0], vs[0]))
		return vs[0]
	case 4:
		k.I(ADDP(S4, vs[0], vs[0], vs[1]), ADDP(S4, vs[2], vs[2], vs[3]), ADDP(S4, vs[0], vs[0], vs[2]))
		k.rg.put(vs[1], vs[2], vs[3])
		return vs[0]
	}
	panic("rowSums: 1 or 4 rows")
}

// --- Q4_0 and Q8_0: 32-element blocks with an fp16 scale first, against
// Q8_0 activations. ---

type q32Type struct {
	name  string // "Q4_0"
	file  string // "q4_0"
	small bool   // products fit int16 in pairs
	// min: the weights carry an fp16 min m after d, the activations
	// (Q8_1) s = d·Σq after theirs, and the block adds m·s (Q4_1).
	min bool
	// e8m0: the weight scale is one E8M0 byte e (MXFP4), 2^(e−128) as
	// ggml's ggml_e8m0_to_fp32_half makes it (see e8m0Floats), not an
	// fp16.
	e8m0 bool
	// unpack loads the quants of one block of row r (its pointer at the
	// quants) as 32 signed bytes and advances the pointer past them.
	unpack func(k *kfn, p XReg, consts []VReg) [2]VReg
	consts func(k *kfn) []VReg
}

var q4_0 = q32Type{
	name: "Q4_0", file: "q4_0", small: true,
	consts: func(k *kfn) []VReg {
		m, e := k.rg.get(), k.rg.get()
		k.I(MOVI(B16, m, 0x0f, 0), MOVI(B16, e, 8, 0))
		return []VReg{m, e}
	},
	// Byte j holds element j in its low nibble and j+16 in its high one;
	// the value is the nibble minus 8.
	unpack: func(k *kfn, p XReg, c []VReg) [2]VReg {
		lo, hi := k.rg.get(), k.rg.get()
		k.I(LD1(B16, hi, 1, p, 16), AND(B16, lo, hi, c[0]), USHR(B16, hi, hi, 4),
			SUB(B16, lo, lo, c[1]), SUB(B16, hi, hi, c[1]))
		return [2]VReg{lo, hi}
	},
}

var q4_1 = q32Type{
	name: "Q4_1", file: "q4_1", small: true, min: true,
	consts: func(k *kfn) []VReg {
		m := k.rg.get()
		k.I(MOVI(B16, m, 0x0f, 0))
		return []VReg{m}
	},
	// As Q4_0 without the offset: the value is the nibble.
	unpack: func(k *kfn, p XReg, c []VReg) [2]VReg {
		lo, hi := k.rg.get(), k.rg.get()
		k.I(LD1(B16, hi, 1, p, 16), AND(B16, lo, hi, c[0]), USHR(B16, hi, hi, 4))
		return [2]VReg{lo, hi}
	},
}

// Q5_0: after d, a little-endian word qh holds the fifth bit of element j
// in bit j; the value is nibble | fifth<<4, minus 16.
var q5_0 = q32Type{
	name: "Q5_0", file: "q5_0", small: true,
	consts: func(k *kfn) []VReg {
		c := k.rg.many(5)
		k.I(MOVI(B16, c[0], 0x0f, 0), MOVI(B16, c[1], 0x10, 0))
		// c[2]: bit j%8 in byte j; c[3], c[4]: TBL indexes spreading
		// qh bytes 0,1 and 2,3 over 8 bytes each.
		k.Op("MOVD $0x8040201008040201, R%d", rTmp)
		k.I(DUPg(D2, c[2], rTmp), MOVIzero(c[3]))
		k.Op("MOVD $0x0101010101010101, R%d", rTmp)
		k.I(INSg(D1, c[3], 1, rTmp))
		k.Op("MOVD $0x0202020202020202, R%d", rTmp)
		k.I(DUPg(D2, c[4], rTmp))
		k.Op("MOVD $0x0303030303030303, R%d", rTmp)
		k.I(INSg(D1, c[4], 1, rTmp))
		return c
	},
	unpack: q5Unpack(true),
}

// Q5_1: Q5_0's quants with a min, against Q8_1; the value is nibble |
// fifth<<4, unsigned.
var q5_1 = q32Type{
	name: "Q5_1", file: "q5_1", small: true, min: true,
	consts: q5_0.consts,
	unpack: q5Unpack(false),
}

// q5Unpack is the unpack of Q5_0 (signed) and Q5_1: qh's word spread by
// TBL and tested by CMTST gives h, 16 or 0 per element; Q5_0 takes h 16
// where the fifth bit is clear and the value nibble - h, Q5_1 h 16 where
// it is set and the value nibble | h.
func q5Unpack(signed bool) func(k *kfn, p XReg, c []VReg) [2]VReg {
	return func(k *kfn, p XReg, c []VReg) [2]VReg {
		fifth := func(v VReg) Inst { return AND(B16, v, v, c[1]) }
		merge := ORR
		if signed {
			fifth = func(v VReg) Inst { return BIC(B16, v, c[1], v) }
			merge = SUB
		}
		lo, hi, h := k.rg.get(), k.rg.get(), k.rg.get()
		k.Op("MOVWU.P 4(R%d), R%d", p, rTmp)
		k.I(INSg(S2, h, 0, rTmp), LD1(B16, hi, 1, p, 16),
			TBL(B16, lo, h, 1, c[3]), TBL(B16, h, h, 1, c[4]),
			CMTST(B16, lo, lo, c[2]), CMTST(B16, h, h, c[2]),
			fifth(lo), fifth(h))
		q := k.rg.get()
		k.I(AND(B16, q, hi, c[0]), USHR(B16, hi, hi, 4), merge(B16, lo, q, lo), merge(B16, hi, hi, h))
		k.rg.put(q, h)
		return [2]VReg{lo, hi}
	}
}

// IQ4_NL: Q4_0's nibbles, each looked up in the sixteen non-uniform levels
// (TBL) instead of offset by 8.
var iq4_nl = lutType("IQ4_NL", "iq4_nl", (*kfn).iq4Table)

// MXFP4: IQ4_NL's layout with the doubled E2M1 values (ggml's
// kvalues_mxfp4) for levels and a one-byte E8M0 scale.
var mxfp4 = func() q32Type {
	t := lutType("MXFP4", "mxfp4", func(k *kfn, d VReg) {
		k.vconst(d, bytesConst(0, 1, 2, 3, 4, 6, 8, 12), bytesConst(0, -1, -2, -3, -4, -6, -8, -12))
	})
	t.e8m0 = true
	return t
}()

// lutType is a 32-element type whose nibbles (Q4_0's order) index a table
// of sixteen signed levels, which table loads into a register.
func lutType(name, file string, table func(k *kfn, d VReg)) q32Type {
	return q32Type{
		name: name, file: file, small: true,
		consts: func(k *kfn) []VReg {
			m, tab := k.rg.get(), k.rg.get()
			k.I(MOVI(B16, m, 0x0f, 0))
			table(k, tab)
			return []VReg{m, tab}
		},
		unpack: func(k *kfn, p XReg, c []VReg) [2]VReg {
			lo, hi := k.rg.get(), k.rg.get()
			k.I(LD1(B16, hi, 1, p, 16), AND(B16, lo, hi, c[0]), USHR(B16, hi, hi, 4),
				TBL(B16, lo, c[1], 1, lo), TBL(B16, hi, c[1], 1, hi))
			return [2]VReg{lo, hi}
		},
	}
}

var q8_0 = q32Type{
	name: "Q8_0", file: "q8_0", small: false,
	consts: func(*kfn) []VReg { return nil },
	unpack: func(k *kfn, p XReg, _ []VReg) [2]VReg {
		w := k.rg.getN(2)
		k.I(LD1(B16, w, 2, p, 32))
		return [2]VReg{w, w + 1}
	},
}

// genQ32 writes the dot and tile kernels of a 32-element type: per block
// sum += (d_w·d_x)·float32(Σ q_w·q_x), one fused multiply-add, as the twins
// dotQ4_0 and dotQ8_0 compile on arm64.
func genQ32(f *File, t q32Type, lvl level, h, cols int) {
	name := "dot" + t.name + lvl.suffix()
	if h > 1 || cols > 1 {
		name = fmt.Sprintf("tile%s%s%dx%d", t.name, lvl.suffix(), h, cols)
	}
	k := newKernel(f, lvl, name, h, cols)
	c := t.consts(k)
	acc := k.zeroAcc(cols)
	dw, dx := k.rg.get(), k.rg.get()
	k.Loop("loop", h*cols, fmt.Sprintf("%d×%d blocks of 32", h, cols))
	// Scales first: each pointer then sits at its quants.
	mw, sx := k.loadScales(t, dw, dx)
	w := make([][2]VReg, h)
	for r := range w {
		w[r] = t.unpack(k, k.row(r), c)
	}
	for c := 0; c < cols; c++ {
		x := k.rg.getN(2)
		k.I(LD1(B16, x, 2, k.col(c), 32))
		sums := make([]VReg, h)
		for r := range sums {
			sums[r] = k.dot32(w[r], [2]VReg{x, x + 1}, t.small)
		}
		k.rg.putN(x, 2)
		s := k.rowSums(sums)
		p := k.rg.get()
		k.I(SCVTF(S4, s, s), FMULe(S4, p, dw, dx, c))
		if t.min {
			// sum += ((d_w·d_x)·fsumi + m·s), the inner sum one fused
			// multiply-add, as dotQ4_1 compiles.
			k.I(FMUL(S4, s, p, s), FMLAe(S4, s, mw, sx, c), FADD(S4, acc[c], acc[c], s))
		} else {
			k.I(FMLA(S4, acc[c], s, p))
		}
		k.rg.put(s, p)
	}
	for r := range w {
		k.rg.put(w[r][0], w[r][1])
	}
	k.putScales(t, dw, dx, mw, sx)
	k.loopEnd()
	k.finish(acc)
}

// loadScales loads the block headers: d_w of row r into lane r of dw, d_x
// of column c into lane c of dx, both widened to float32, and for types
// with mins m_w into mw and s_x into sx alike. The row and column pointers
// then sit at the quants.
func (k *kfn) loadScales(t q32Type, dw, dx VReg) (mw, sx VReg) {
	if t.e8m0 {
		// Each exponent byte into the low byte of its row's word.
		k.I(MOVIzero(dw))
		for r := 0; r < k.h; r++ {
			k.I(LD1L(B16, dw, 4*r, k.row(r), 1))
		}
		for c := 0; c < k.cols; c++ {
			k.I(LD1L(H4, dx, c, k.col(c), 2))
		}
		k.I(FCVTL(H4, dx, dx))
		k.e8m0Floats(dw)
		return 255, 255
	}
	if !t.min {
		for r := 0; r < k.h; r++ {
			k.I(LD1L(H4, dw, r, k.row(r), 2))
		}
		for c := 0; c < k.cols; c++ {
			k.I(LD1L(H4, dx, c, k.col(c), 2))
		}
		k.I(FCVTL(H4, dw, dw), FCVTL(H4, dx, dx))
		return 255, 255
	}
	mw, sx = k.rg.get(), k.rg.get()
	for r := 0; r < k.h; r++ {
		k.I(LD1L(S2, dw, r, k.row(r), 4))
	}
	for c := 0; c < k.cols; c++ {
		k.I(LD1L(S2, dx, c, k.col(c), 4))
	}
	k.I(UZP2(H8, mw, dw, dw), UZP1(H8, dw, dw, dw), UZP2(H8, sx, dx, dx), UZP1(H8, dx, dx, dx),
		FCVTL(H4, dw, dw), FCVTL(H4, dx, dx), FCVTL(H4, mw, mw), FCVTL(H4, sx, sx))
	return mw, sx
}

// e8m0Floats turns the E8M0 exponents e (0..255) in the words of e into
// ggml's ggml_e8m0_to_fp32_half, 2^(e−128), in place: the signed maximum
// of (e−1)<<23 (the float's bits for e ≥ 2) and (e+1)<<21 (the subnormal
// 0x00200000<<e for e < 2), the first the larger exactly when e ≥ 2.
func (k *kfn) e8m0Floats(e VReg) {
	one, lo := k.rg.get(), k.rg.get()
	k.I(MOVI(S4, one, 1, 0), ADD(S4, lo, e, one), SHL(S4, lo, lo, 21),
		SUB(S4, e, e, one), SHL(S4, e, e, 23), SMAX(S4, e, e, lo))
	k.rg.put(one, lo)
}

func (k *kfn) putScales(t q32Type, dw, dx, mw, sx VReg) {
	if t.min {
		k.rg.put(mw, sx)
	}
}

// genQ32MM writes the 4×4 tile of a 32-element type with SMMLA: rows in
// pairs and columns in pairs, each SMMLA adding a 2×2 block of 8-byte dot
// products. The lanes of a pair's accumulator are (r0,c0), (r0,c1),
// (r1,c0), (r1,c1); the scales are laid out to match.
func genQ32MM(f *File, t q32Type) {
	const h, cols = 4, 4
	name := fmt.Sprintf("tile%s%s%dx%d", t.name, i8mm.suffix(), h, cols)
	k := newKernel(f, i8mm, name, h, cols)
	c := t.consts(k)
	// acc[rp*2+cp] for row pair rp and column pair cp.
	acc := k.zeroAcc(4)
	dw, dx := k.rg.get(), k.rg.get()
	k.Loop("loop", h*cols, fmt.Sprintf("%d×%d blocks of 32", h, cols))
	mw, sx := k.loadScales(t, dw, dx)
	// Interleave the rows of each pair by 8 bytes: z[rp][i] holds bytes
	// 8i..8i+7 of both rows.
	var z [2][4]VReg
	for rp := 0; rp < 2; rp++ {
		a := t.unpack(k, k.row(2*rp), c)
		b := t.unpack(k, k.row(2*rp+1), c)
		for i := 0; i < 4; i++ {
			z[rp][i] = k.rg.get()
		}
		k.I(ZIP1(D2, z[rp][0], a[0], b[0]), ZIP2(D2, z[rp][1], a[0], b[0]),
			ZIP1(D2, z[rp][2], a[1], b[1]), ZIP2(D2, z[rp][3], a[1], b[1]))
		k.rg.put(a[0], a[1], b[0], b[1])
	}
	// Row scales (and mins) as (r0, r0, r1, r1) per pair.
	dwp := [2]VReg{k.rg.get(), k.rg.get()}
	k.I(ZIP1(S4, dwp[0], dw, dw), ZIP2(S4, dwp[1], dw, dw))
	var mwp [2]VReg
	if t.min {
		mwp = [2]VReg{k.rg.get(), k.rg.get()}
		k.I(ZIP1(S4, mwp[0], mw, mw), ZIP2(S4, mwp[1], mw, mw))
	}
	for cp := 0; cp < 2; cp++ {
		xa := k.rg.getN(2)
		xb := k.rg.getN(2)
		k.I(LD1(B16, xa, 2, k.col(2*cp), 32), LD1(B16, xb, 2, k.col(2*cp+1), 32))
		var xz [4]VReg
		for i := range xz {
			xz[i] = k.rg.get()
		}
		k.I(ZIP1(D2, xz[0], xa, xb), ZIP2(D2, xz[1], xa, xb),
			ZIP1(D2, xz[2], xa+1, xb+1), ZIP2(D2, xz[3], xa+1, xb+1))
		k.rg.putN(xa, 2)
		k.rg.putN(xb, 2)
		// Column scales as (c0, c1, c0, c1).
		dxp, sxp := k.rg.get(), VReg(255)
		k.I(DUPe(D2, dxp, dx, cp))
		if t.min {
			sxp = k.rg.get()
			k.I(DUPe(D2, sxp, sx, cp))
		}
		for rp := 0; rp < 2; rp++ {
			s := k.rg.get()
			k.I(MOVIzero(s))
			for i := 0; i < 4; i++ {
				k.I(SMMLA(s, z[rp][i], xz[i]))
			}
			p := k.rg.get()
			k.I(SCVTF(S4, s, s), FMUL(S4, p, dwp[rp], dxp))
			if t.min {
				k.I(FMUL(S4, s, p, s), FMLA(S4, s, mwp[rp], sxp), FADD(S4, acc[rp*2+cp], acc[rp*2+cp], s))
			} else {
				k.I(FMLA(S4, acc[rp*2+cp], s, p))
			}
			k.rg.put(s, p)
		}
		k.rg.put(dxp)
		if t.min {
			k.rg.put(sxp)
		}
		for i := range xz {
			k.rg.put(xz[i])
		}
	}
	k.rg.put(dwp[0], dwp[1])
	if t.min {
		k.rg.put(mwp[0], mwp[1])
	}
	k.putScales(t, dw, dx, mw, sx)
	for rp := range z {
		for i := range z[rp] {
			k.rg.put(z[rp][i])
		}
	}
	k.loopEnd()
	// Column c's rows: lanes (r0,c) and (r1,c) of both row pairs.
	out := k.rg.getN(4)
	for cp := 0; cp < 2; cp++ {
		k.I(UZP1(S4, out+VReg(2*cp), acc[cp], acc[2+cp]), UZP2(S4, out+VReg(2*cp+1), acc[cp], acc[2+cp]))
	}
	k.finish([]VReg{out, out + 1, out + 2, out + 3})
}

// kernelName is dotT<Level> for one row and tileT<Level>hxc for tiles.
func kernelName(t string, lvl level, h, cols int) string {
	if h == 1 && cols == 1 {
		return "dot" + t + lvl.suffix()
	}
	return fmt.Sprintf("tile%s%s%dx%d", t, lvl.suffix(), h, cols)
}

// pairSums adds vs[r] and vs[r+1] pairwise into vs[r] once both rows are
// done, so that four rows hold at most three vectors at a time; rowSums
// then finishes.
func (k *kfn) pairSums(vs []VReg, r int) {
	if k.h == 4 && r%2 == 1 {
		k.I(ADDP(S4, vs[r-1], vs[r-1], vs[r]))
		k.rg.put(vs[r])
	}
}

// finishRowSums is rowSums after pairSums.
func (k *kfn) finishRowSums(vs []VReg) VReg {
	if k.h == 1 {
		k.I(ADDV(S4, vs[0], vs[0]))
		return vs[0]
	}
	k.I(ADDP(S4, vs[0], vs[0], vs[2]))
	k.rg.put(vs[2])
	return vs[0]
}

// byteLane sets d (4 words) to byte b of each word of src, zero-extended.
func (k *kfn) byteLane(d, src VReg, b int, kff VReg) {
	switch b {
	case 0:
		k.I(AND(B16, d, src, kff))
	case 3:
		k.I(USHR(S4, d, src, 24))
	default:
		k.I(USHR(S4, d, src, 8*b), AND(B16, d, d, kff))
	}
}

// genQK45 writes the Q4_K (five false) or Q5_K dot kernel (h 1) or 4×1
// tile (h 4) against Q8_K activations. The twin per super-block:
//
//	sumi = Σ_j sc_j·Σ q·y, summ = Σ_j m_j·(bsums of sub-block j)
//	sum += d·dy·float32(sumi) - dmin·dy·float32(summ)
//
// which arm64 Go compiles to t = (d·dy)·fsumi; r = t - (dmin·dy)·fsumm
// (one fused multiply-subtract); sum += r. The kernel computes the same
// per lane with FMUL, FMLS and FADD. The integer sums of each sub-block go
// across the rows first (one lane per row) and are then scaled by a vector
// of that sub-block's scale for every row.
func genQK45(f *File, five bool, lvl level, h int) {
	tn, bytes := "Q4_K", 144
	if five {
		tn, bytes = "Q5_K", 176
	}
	k := newKernel(f, lvl, kernelName(tn, lvl, h, 1), h, 1)
	k0f, k3f, kff := k.rg.get(), k.rg.get(), k.rg.get()
	k.I(MOVI(B16, k0f, 0x0f, 0), MOVI(B16, k3f, 0x3f, 0), MOVI(S4, kff, 0xff, 0))
	var k01, k10 VReg
	if five {
		k01, k10 = k.rg.get(), k.rg.get()
		k.I(MOVI(B16, k01, 1, 0), MOVI(B16, k10, 0x10, 0))
	}
	acc := k.zeroAcc(1)[0]
	xp := k.col(0)
	k.Loop("loop", h, fmt.Sprintf("%d×1 blocks of 256", h))
	// Per row, d and dmin (one word: d low, dmin high) and the 12 bytes of
	// scales and mins as three words u0, u1, u2, one lane per row.
	dd, u0, u1, u2 := k.rg.get(), k.rg.get(), k.rg.get(), k.rg.get()
	for r := 0; r < h; r++ {
		p := k.row(r)
		k.I(LD1L(S2, dd, r, p, 4), LD1L(S2, u0, r, p, 4), LD1L(S2, u1, r, p, 4), LD1L(S2, u2, r, p, 4))
	}
	// Scales sc_0..3 are the low six bits of u0's bytes, mins m_0..3 those
	// of u1; sc_4..7 are u2's low nibbles with u0's top two bits above, m_4..7
	// u2's high nibbles with u1's top two bits above.
	sclo, schi, mlo := k.rg.get(), k.rg.get(), k.rg.get()
	k.I(AND(B16, sclo, u0, k3f), AND(B16, mlo, u1, k3f),
		USHR(B16, u0, u0, 6), AND(B16, schi, u2, k0f), SLI(B16, schi, u0, 4),
		USHR(B16, u1, u1, 6), USHR(B16, u2, u2, 4), SLI(B16, u2, u1, 4))
	mhi := u2
	k.rg.put(u0, u1)
	dy := k.rg.get()
	k.I(LD1R(S4, dy, xp, 4))
	sumi := k.rg.get()
	k.I(MOVIzero(sumi))
	qoff := 0 // offset of the quants from the row pointers, which now sit after the scales
	if five {
		qoff = 32
	}
	for c := 0; c < 4; c++ {
		x := k.rg.getN(4)
		k.I(LD1(B16, x, 4, xp, 64))
		lo, hi := make([]VReg, h), make([]VReg, h)
		for r := 0; r < h; r++ {
			p := k.row(r)
			q0, q1, t0, t1 := k.rg.get(), k.rg.get(), k.rg.get(), k.rg.get()
			k.I(LDR(16, q0, p, qoff+32*c), LDR(16, q1, p, qoff+32*c+16))
			if five {
				// Fifth bits: bit 2c of qh[l] for the low nibbles, 2c+1 for
				// the high ones.
				h0, h1 := k.rg.get(), k.rg.get()
				k.I(LDR(16, h0, p, 0), LDR(16, h1, p, 16))
				if c > 0 {
					k.I(USHR(B16, h0, h0, 2*c), USHR(B16, h1, h1, 2*c))
				}
				k.I(SHL(B16, t0, h0, 3), SHL(B16, t1, h1, 3), AND(B16, t0, t0, k10), AND(B16, t1, t1, k10),
					SRI(B16, t0, q0, 4), SRI(B16, t1, q1, 4),
					AND(B16, h0, h0, k01), AND(B16, h1, h1, k01), SLI(B16, q0, h0, 4), SLI(B16, q1, h1, 4))
				k.rg.put(h0, h1)
			} else {
				k.I(USHR(B16, t0, q0, 4), USHR(B16, t1, q1, 4), AND(B16, q0, q0, k0f), AND(B16, q1, q1, k0f))
			}
			lo[r] = k.dot32([2]VReg{q0, q1}, [2]VReg{x, x + 1}, true)
			hi[r] = k.dot32([2]VReg{t0, t1}, [2]VReg{x + 2, x + 3}, true)
			k.rg.put(q0, q1, t0, t1)
			k.pairSums(lo, r)
			k.pairSums(hi, r)
		}
		k.rg.putN(x, 4)
		for i, vs := range [][]VReg{lo, hi} {
			j := 2*c + i
			s := k.finishRowSums(vs)
			sc := k.rg.get()
			src := sclo
			if j >= 4 {
				src = schi
			}
			k.byteLane(sc, src, j%4, kff)
			k.I(MLA(S4, sumi, s, sc))
			k.rg.put(s, sc)
		}
	}
	k.rg.put(sclo, schi)
	// Mins times the sums of the activations' sub-blocks, from bsums.
	b := k.rg.getN(2)
	// Widened before adding, as the twin adds them in int32.
	k.I(LD1(H8, b, 2, xp, 32), SADDLP(H8, b, b), SADDLP(H8, b+1, b+1))
	summ, m := k.rg.get(), k.rg.get()
	k.I(MOVIzero(summ))
	for j := 0; j < 8; j++ {
		src := mlo
		if j >= 4 {
			src = mhi
		}
		k.byteLane(m, src, j%4, kff)
		k.I(MLAe(S4, summ, m, b+VReg(j/4), j%4))
	}
	k.rg.putN(b, 2)
	k.rg.put(mlo, mhi)
	dm := m
	k.I(SCVTF(S4, sumi, sumi), SCVTF(S4, summ, summ),
		UZP2(H8, dm, dd, dd), UZP1(H8, dd, dd, dd), FCVTL(H4, dd, dd), FCVTL(H4, dm, dm),
		FMUL(S4, dd, dd, dy), FMUL(S4, dm, dm, dy),
		FMUL(S4, dd, dd, sumi), FMLS(S4, dd, dm, summ), FADD(S4, acc, acc, dd))
	k.rg.put(dd, dm, sumi, summ, dy)
	for r := 0; r < h; r++ {
		k.Op("ADD $%d, R%d, R%d", bytes-16, k.row(r), k.row(r))
	}
	k.loopEnd()
	k.finish([]VReg{acc})
}

// genQ6K writes the Q6_K dot kernel (h 1) or 4×1 tile (h 4): per
// super-block sumi = Σ_g scale_g·Σ (q-32)·y over 16 groups of 16, then
// sum += (d·dy)·float32(sumi), one fused multiply-add. Each row keeps a
// vector of partial sums, each 16-element group's dot product multiplied
// by its scale, which the row reduction sums at the end of the block.
func genQ6K(f *File, lvl level, h int) {
	k := newKernel(f, lvl, kernelName("Q6_K", lvl, h, 1), h, 1)
	k30, k03, k20 := k.rg.get(), k.rg.get(), k.rg.get()
	k.I(MOVI(B16, k30, 0x30, 0), MOVI(B16, k03, 3, 0), MOVI(B16, k20, 32, 0))
	acc := k.zeroAcc(1)[0]
	xp := k.col(0)
	k.Loop("loop", h, fmt.Sprintf("%d×1 blocks of 256", h))
	dv, dy := k.rg.get(), k.rg.get()
	for r := 0; r < h; r++ {
		k.Op("ADD $208, R%d, R%d", k.row(r), rTmp)
		k.I(LD1L(H4, dv, r, rTmp, 0))
	}
	k.I(LD1R(S4, dy, xp, 4))
	ir := make([]VReg, h)
	for r := range ir {
		ir[r] = k.rg.get()
		k.I(MOVIzero(ir[r]))
	}
	// Half hh covers 128 elements. Pass 0 takes ql[0..31] of the half, the
	// elements l (low nibbles, qh bits 0-1) and l+64 (high nibbles, bits
	// 4-5); pass 1 ql[32..63], the elements l+32 (bits 2-3) and l+96 (bits
	// 6-7).
	for hh := 0; hh < 2; hh++ {
		for pass := 0; pass < 2; pass++ {
			x := k.rg.getN(4)
			xo := 128*hh + 32*pass
			k.I(LDR(16, x, xp, xo), LDR(16, x+1, xp, xo+16), LDR(16, x+2, xp, xo+64), LDR(16, x+3, xp, xo+80))
			for r := 0; r < h; r++ {
				p := k.row(r)
				l0, l1, q0, q1, t0, t1 := k.rg.get(), k.rg.get(), k.rg.get(), k.rg.get(), k.rg.get(), k.rg.get()
				qo := 64*hh + 32*pass
				k.I(LDR(16, l0, p, qo), LDR(16, l1, p, qo+16), LDR(16, q0, p, 128+32*hh), LDR(16, q1, p, 128+32*hh+16))
				if pass == 1 {
					k.I(USHR(B16, q0, q0, 2), USHR(B16, q1, q1, 2))
				}
				k.I(AND(B16, t0, q0, k30), AND(B16, t1, q1, k30), SRI(B16, t0, l0, 4), SRI(B16, t1, l1, 4),
					AND(B16, q0, q0, k03), AND(B16, q1, q1, k03), SLI(B16, l0, q0, 4), SLI(B16, l1, q1, 4),
					SUB(B16, l0, l0, k20), SUB(B16, l1, l1, k20), SUB(B16, t0, t0, k20), SUB(B16, t1, t1, k20))
				// The scales of the half as words: sc[8hh+0..3] and sc[8hh+4..7].
				k.I(LDR(8, q0, p, 192+8*hh), SSHLL(B8, q0, q0, 0), SSHLL(H8, q1, q0, 0), SSHLL(H4, q0, q0, 0))
				for i, v := range []VReg{l0, l1, t0, t1} {
					s := k.dot16(v, x+VReg(i))
					// l0, l1 are groups 2pass, 2pass+1 of the quarter; t0, t1
					// are 4 groups further.
					g := 2*pass + i%2
					sc := q0
					if i >= 2 {
						sc = q1
					}
					k.I(MLAe(S4, ir[r], s, sc, g))
					k.rg.put(s)
				}
				k.rg.put(l0, l1, q0, q1, t0, t1)
			}
			k.rg.putN(x, 4)
		}
	}
	for r := 0; r < h; r++ {
		k.pairSums(ir, r)
	}
	s := k.finishRowSums(ir)
	k.I(FCVTL(H4, dv, dv), SCVTF(S4, s, s), FMUL(S4, dv, dv, dy), FMLA(S4, acc, s, dv))
	k.rg.put(s, dv, dy)
	for r := 0; r < h; r++ {
		k.Op("ADD $210, R%d, R%d", k.row(r), k.row(r))
	}
	k.Op("ADD $288, R%d, R%d", xp, xp)
	k.loopEnd()
	k.finish([]VReg{acc})
}
