package main

import (
	"strconv"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// floatElem is an element type of the float dot products: F32, or F16
// widened exactly to float32 (VCVTPH2PS) as ggml_vec_dot_f16 does.
type floatElem struct {
	name string
	size int // bytes per element
}

var (
	elemF32 = floatElem{"F32", 4}
	elemF16 = floatElem{"F16", 2}
)

// dotFloat emits dot<E><W>Asm(w, x *byte, n int) float32 = Σ w[i]·x[i]
// over n elements. Accumulators (Y0-Y7 with AVX2, Z0-Z3 with AVX-512) hide
// the FMA latency over 64 elements a step; then one vector at a time; the
// tail is scalar with AVX2 and one masked step (which never touches memory
// past the end) with AVX-512. The sums are added pairwise, then hsum.
func dotFloat(e floatElem, w width) {
	name := "dot" + e.name + w.suffix() + "Asm"
	text(name, NOSPLIT, "func(w, x *byte, n int) float32")
	loadArgs("w x n", RSI, RDI, RCX)
	lanes := w.lanes()
	nacc := 512 / 8 / lanes // accumulators per 64 elements
	for i := 0; i < nacc; i++ {
		zero(w.vec(i))
	}
	// step multiplies one vector of each row at element offset i into acc.
	// F32 loads w (rotating over t registers) and multiplies x from memory;
	// F16 widens both.
	step := func(i int, acc, t1, t2 Register) {
		off := i * e.size
		if e.size == 4 {
			c.VMOVUPS(mem(RSI, off), t1)
			c.VFMADD231PS(mem(RDI, off), t1, acc)
			return
		}
		c.VCVTPH2PS(mem(RSI, off), t1)
		c.VCVTPH2PS(mem(RDI, off), t2)
		c.VFMADD231PS(t2, t1, acc)
	}
	c.CMPQ(RCX, U8(64))
	c.JLT(ref("loop" + itoa(lanes)))
	label("loop64")
	if e.size == 4 && !w.wide() {
		// Four loads, then four FMAs, twice: the loads run ahead.
		for half := 0; half < 2; half++ {
			for j := 0; j < 4; j++ {
				c.VMOVUPS(mem(RSI, 32*(4*half+j)), yr(8+j))
			}
			for j := 0; j < 4; j++ {
				c.VFMADD231PS(mem(RDI, 32*(4*half+j)), yr(8+j), yr(4*half+j))
			}
		}
	} else if e.size == 4 {
		for j := 0; j < 4; j++ {
			c.VMOVUPS(mem(RSI, 64*j), zr(4+j))
		}
		for j := 0; j < 4; j++ {
			c.VFMADD231PS(mem(RDI, 64*j), zr(4+j), zr(j))
		}
	} else {
		for j := 0; j < nacc; j++ {
			step(j*lanes, w.vec(j), w.vec(8), w.vec(9))
		}
	}
	nextChunk(RSI, U32(64*e.size), RDI, U32(64*e.size), 64, "loop64")

	one := "loop" + itoa(lanes)
	label(one)
	next := "reduce"
	if w.wide() {
		next = "tail"
	}
	c.CMPQ(RCX, U8(lanes))
	c.JLT(ref(next))
	t := 8
	if e.size == 4 && w.wide() {
		t = 4
	}
	step(0, w.vec(0), w.vec(t), w.vec(9))
	c.ADDQ(U8(lanes*e.size), RSI)
	c.ADDQ(U8(lanes*e.size), RDI)
	c.SUBQ(U8(lanes), RCX)
	c.JMP(ref(one))

	if w.wide() {
		label("tail")
		c.TESTQ(RCX, RCX)
		c.JEQ(ref("reduce"))
		tailMask(K1)
		if e.size == 4 {
			c.VMOVUPS_Z(mem(RSI, 0), K1, Z4)
			c.VMOVUPS_Z(mem(RDI, 0), K1, Z5)
			c.VFMADD231PS(Z5, Z4, Z1)
		} else {
			c.VMOVDQU16_Z(mem(RSI, 0), K1, Y8)
			c.VMOVDQU16_Z(mem(RDI, 0), K1, Y9)
			c.VCVTPH2PS(Y8, Z8)
			c.VCVTPH2PS(Y9, Z9)
			c.VFMADD231PS(Z9, Z8, Z1)
		}
		label("reduce")
		addTree(w, nacc)
		fold512(Z0, Y1)
		retSum()
		return
	}
	label("reduce")
	addTree(w, nacc)
	hsum(Y0, X1)
	c.TESTQ(RCX, RCX)
	c.JEQ(ref("done"))
	label("loop1")
	if e.size == 4 {
		c.VMOVSS(mem(RSI, 0), X8)
		c.VFMADD231SS(mem(RDI, 0), X8, X0)
	} else {
		c.MOVWLZX(mem(RSI, 0), EAX)
		c.VMOVD(EAX, X8)
		c.VCVTPH2PS(X8, X8)
		c.MOVWLZX(mem(RDI, 0), EAX)
		c.VMOVD(EAX, X9)
		c.VCVTPH2PS(X9, X9)
		c.VFMADD231SS(X9, X8, X0)
	}
	c.ADDQ(U8(e.size), RSI)
	c.ADDQ(U8(e.size), RDI)
	decJNZ(RCX, "loop1")
	label("done")
	retFloat()
}

// addTree adds accumulators 0..n-1 of the width pairwise into 0:
// (0+1)+(2+3), … in the order the kernels have always used.
func addTree(w width, n int) {
	for step := 1; step < n; step *= 2 {
		for i := 0; i+step < n; i += 2 * step {
			c.VADDPS(w.vec(i+step), w.vec(i), w.vec(i))
		}
	}
}

// tailMask sets mask k to the low CX bits (CX < 16).
func tailMask(k Register) {
	c.MOVL(U32(1), EAX)
	c.SHLL(CL, EAX)
	c.DECL(EAX)
	c.KMOVW(EAX, k)
}

func itoa(i int) string { return strconv.Itoa(i) }

// nextChunk advances a by as and b by bs bytes past a chunk of n elements,
// takes n from the count in RCX and jumps back to loop while another whole
// chunk remains.
func nextChunk(a Register, as Op, b Register, bs Op, n int, loop string) {
	c.ADDQ(as, a)
	c.ADDQ(bs, b)
	c.SUBQ(U8(n), RCX)
	c.CMPQ(RCX, U8(n))
	c.JGE(ref(loop))
}
