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
		fn.Op("MOVD %s, R%d", fn.Arg("w"), rRow0)
		fn.Op("MOVD %s, R%d", fn.Arg("x"), rCol0)
		fn.Op("MOVD %s, R%d", fn.Arg("nb"), rNB)
	} else {
		fn = f.NewFunc(name, fmt.Sprintf("%s sets out[c*outStride+r] to the dot product of nb blocks of row r of w and column c of x for r < %d, c < %d (%s); strides are in bytes for w and x.", name, h, cols, lvl.suffix()),
			tileArgs, nil)
		fn.Op("MOVD %s, R%d", fn.Arg("w"), rRow0)
		fn.Op("MOVD %s, R%d", fn.Arg("wStride"), rWStride)
		fn.Op("MOVD %s, R%d", fn.Arg("x"), rCol0)
		fn.Op("MOVD %s, R%d", fn.Arg("xStride"), rXStride)
		fn.Op("MOVD %s, R%d", fn.Arg("nb"), rNB)
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
	k.Op("SUBS $1, R%d, R%d", rNB, rNB)
	k.Op("BNE loop")
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
	k.Op("MOVD %s, R%d", k.Arg("out"), rOut)
	k.Op("MOVD %s, R%d", k.Arg("outStride"), rOutStride)
	k.Op("LSL $2, R%d, R%d", rOutStride, rOutStride)
	for c := 0; c < k.cols; c++ {
		k.I(ST1(S4, acc[c], 1, rOut, 0))
		if c+1 < k.cols {
			k.Op("ADD R%d, R%d, R%d", rOutStride, rOut, rOut)
		}
	}
	k.Label("done")
	k.Op("RET")
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
	for r := 0; r < h; r++ {
		k.I(LD1L(H4, dw, r, k.row(r), 2))
	}
	for c := 0; c < cols; c++ {
		k.I(LD1L(H4, dx, c, k.col(c), 2))
	}
	k.I(FCVTL(H4, dw, dw), FCVTL(H4, dx, dx))
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
		k.I(SCVTF(S4, s, s), FMULe(S4, p, dw, dx, c), FMLA(S4, acc[c], s, p))
		k.rg.put(s, p)
	}
	for r := range w {
		k.rg.put(w[r][0], w[r][1])
	}
	k.loopEnd()
	k.finish(acc)
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
	for r := 0; r < h; r++ {
		k.I(LD1L(H4, dw, r, k.row(r), 2))
	}
	for c := 0; c < cols; c++ {
		k.I(LD1L(H4, dx, c, k.col(c), 2))
	}
	k.I(FCVTL(H4, dw, dw), FCVTL(H4, dx, dx))
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
	// Row scales as (r0, r0, r1, r1) per pair.
	dwp := [2]VReg{k.rg.get(), k.rg.get()}
	k.I(ZIP1(S4, dwp[0], dw, dw), ZIP2(S4, dwp[1], dw, dw))
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
		dxp := k.rg.get()
		k.I(DUPe(D2, dxp, dx, cp))
		for rp := 0; rp < 2; rp++ {
			s := k.rg.get()
			k.I(MOVIzero(s))
			for i := 0; i < 4; i++ {
				k.I(SMMLA(s, z[rp][i], xz[i]))
			}
			p := k.rg.get()
			k.I(SCVTF(S4, s, s), FMUL(S4, p, dwp[rp], dxp), FMLA(S4, acc[rp*2+cp], s, p))
			k.rg.put(s, p)
		}
		k.rg.put(dxp)
		for i := range xz {
			k.rg.put(xz[i])
		}
	}
	k.rg.put(dwp[0], dwp[1])
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
