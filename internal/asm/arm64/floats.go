package main

import (
	"fmt"
	"strings"
)

// Dot products of F16 and F32 rows (package quant's dotF16 and dotF32):
// four running sums, lane i taking elements i, i+4, …, one fused
// multiply-add each, the leftover elements into lane 0, and (s0+s1)+(s2+s3)
// at the end, as the twins compile on arm64.

type floatKind struct {
	name string // "F16", "F32", "BF16"
	size int    // bytes per element
	bf16 bool   // bfloat16: the upper half of a float32
}

// load4 loads 4 elements from Rp (advancing it) as floats into d.
func (e floatKind) load4(fn *Func, d VReg, p XReg) {
	if e.bf16 {
		fn.I(LD1(H4, d, 1, p, 8), SHLL(H4, d, d))
		return
	}
	if e.size == 2 {
		fn.I(LD1(H4, d, 1, p, 8), FCVTL(H4, d, d))
		return
	}
	fn.I(LD1(S4, d, 1, p, 16))
}

// load1 loads one element from Rp (advancing it) into F(d), through R5.
func (e floatKind) load1(fn *Func, d VReg, p XReg) {
	if e.bf16 {
		fn.Op("MOVHU.P 2(R%d), R5", p)
		fn.Op("LSLW $16, R5, R5")
		fn.Op("FMOVS R5, F%d", d)
		return
	}
	if e.size == 2 {
		fn.Op("MOVHU.P 2(R%d), R5", p)
		fn.Op("FMOVS R5, F%d", d)
		fn.Op("FCVTHS F%d, F%d", d, d)
		return
	}
	fn.Op("FMOVS.P 4(R%d), F%d", p, d)
}

// genFloatDot writes dot<T>NEON(w, x, n) for n elements of any count.
func genFloatDot(f *File, e floatKind) {
	k := newKernel(f, neon, "dot"+e.name+"NEON", 1, 1)
	acc := k.zeroAcc(1)[0]
	w, x := k.rg.getN(4), k.rg.getN(4)
	wp, xp := k.row(0), k.col(0)
	k.Op("LSR $4, R%d, R%d", rNB, rTmp)
	k.Op("CBZ R%d, four", rTmp)
	k.Loop("loop", 1, "16 elements")
	for i := VReg(0); i < 4; i++ {
		e.load4(k.Func, w+i, wp)
		e.load4(k.Func, x+i, xp)
	}
	for i := VReg(0); i < 4; i++ {
		k.I(FMLA(S4, acc, w+i, x+i))
	}
	k.CountDown(rTmp, "loop")
	k.EndLoop()
	k.Label("four")
	k.Op("AND $15, R%d, R%d", rNB, rNB)
	k.Op("LSR $2, R%d, R%d", rNB, rTmp)
	k.Op("CBZ R%d, tail", rTmp)
	k.Repeat("loop4", rTmp, func() {
		e.load4(k.Func, w, wp)
		e.load4(k.Func, x, xp)
		k.I(FMLA(S4, acc, w, x))
	})
	k.Label("tail")
	k.Op("ANDS $3, R%d, R%d", rNB, rNB)
	k.Op("BEQ sum")
	s := w + 1
	k.Op("FMOVS F%d, F%d", acc, s)
	k.Repeat("loop1", rNB, func() {
		e.load1(k.Func, w, wp)
		e.load1(k.Func, x, xp)
		k.Op("FMADDS F%d, F%d, F%d, F%d", x, s, w, s)
	})
	k.I(INSe(S2, acc, 0, s, 0))
	k.Label("sum")
	k.I(FADDP(S4, acc, acc, acc), FADDPs(acc, acc))
	k.finish([]VReg{acc})
}

// genFloatTile writes tile<T>NEON4x1 for nb elements, a positive multiple
// of 4: four rows at once, each with its own four running sums.
func genFloatTile(f *File, e floatKind) {
	k := newKernel(f, neon, kernelName(e.name, neon, 4, 1), 4, 1)
	acc := k.zeroAcc(4)
	w, x := k.rg.getN(4), k.rg.get()
	k.Op("LSR $2, R%d, R%d", rNB, rNB)
	k.Loop("loop", 4, "4 elements × 4 rows")
	e.load4(k.Func, x, k.col(0))
	for r := 0; r < 4; r++ {
		e.load4(k.Func, w+VReg(r), k.row(r))
	}
	for r := 0; r < 4; r++ {
		k.I(FMLA(S4, acc[r], w+VReg(r), x))
	}
	k.loopEnd()
	k.I(FADDP(S4, acc[0], acc[0], acc[1]), FADDP(S4, acc[2], acc[2], acc[3]), FADDP(S4, acc[0], acc[0], acc[2]))
	k.finish([]VReg{acc[0]})
}

func floatFiles() []*File {
	var files []*File
	for _, e := range []floatKind{{"F16", 2, false}, {"F32", 4, false}, {"BF16", 2, true}} {
		f := &File{Pkg: "quant", Name: strings.ToLower(e.name),
			Doc: fmt.Sprintf("Dot product and tile kernels for %s rows for ARMv8.0 NEON, with the Go twin's order of operations.", e.name)}
		genFloatDot(f, e)
		genFloatTile(f, e)
		files = append(files, f)
	}
	return files
}
