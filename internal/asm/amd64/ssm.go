package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// ssmFiles lists the files of package internal/ssm: the Mamba-2 scan of
// one head over one token, the twin of scanHeadGo in internal/ssm. The
// twin fixes the order: every product and sum rounded to float32 (no
// FMA), each row's sum over the state in 16 partial sums (lane i mod 16 of
// the blocks of 16), folded halves, then pairs, then neighbours (hsum),
// plus the tail's scalar sum; so AVX2 (two Y accumulators, lanes 0-7 and
// 8-15) and AVX-512 (one Z) give the twin's bits.
func ssmFiles() []outFile {
	return []outFile{{"kernels", func() {
		for _, nt := range []bool{false, true} {
			ssmScanHead(avx2, nt)
			ssmScanHead(avx512, nt)
		}
	}}}
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
	c.VXORPS(Y0, Y0, Y0)
	c.VXORPS(Y1, Y1, Y1)
	c.VXORPS(X6, X6, X6)
	c.XORQ(RAX, RAX)
	label("block")
	c.CMPQ(RAX, R12)
	c.JGE(ref("reduce"))
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
	c.VMULSS(memx(RSI, 0, RAX, 4), X14, X3)
	c.VMULSS(memx(R8, 0, RAX, 4), X15, X4)
	c.VADDSS(X4, X3, X3)
	c.VMOVSS(X3, memx(RDI, 0, RAX, 4))
	c.VMULSS(memx(R9, 0, RAX, 4), X3, X5)
	c.VADDSS(X5, X6, X6)
	c.INCQ(RAX)
	c.JMP(ref("tail"))
	label("out")
	c.VADDSS(X6, X0, X0)
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
