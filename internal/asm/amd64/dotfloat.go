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
		jumpIfZero(RCX, "reduce")
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
	jumpIfZero(RCX, "done")
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

// tileFloat emits tile<E><W>4x<cols>(w *byte, wStride int, x *byte,
// xStride int, nb int, out *float32, outStride int): out[c·outStride+r] =
// row r of w · column c of x for 4 rows and cols columns, over nb blocks
// of one vector (16 elements with AVX-512, 8 with AVX2; strides in bytes,
// outStride in floats). Per block each row and column is loaded (F16
// widened by VCVTPH2PS) once and meets the others in 4·cols FMAs, where
// the dot product row by row loads both for every FMA: prefill of F16 and
// F32 weights was bound by those loads and conversions. Each (column, row)
// keeps one accumulator; at the end a column's four rows are folded
// together and stored as one vector (the rows are adjacent in out). Every
// column is computed exactly as the 4×1 kernel computes it, so a token's
// products are the same bits in a batch and alone; they agree with the
// dot product to rounding (the lanes are added in another order).
func tileFloat(e floatElem, w width, cols int) {
	name := "tile" + e.name + w.suffix() + "4x" + itoa(cols)
	text(name, NOSPLIT, "func(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)")
	loadArgs("w wStride x xStride nb out outStride", RSI, R8, RDI, R9, RCX, RDX, R10)
	c.LEAQ(Mem{Base: R8, Index: R8, Scale: 2}, R11) // 3·wStride
	c.LEAQ(Mem{Base: R9, Index: R9, Scale: 2}, R12) // 3·xStride
	c.SHLQ(U8(2), R10)                              // outStride in bytes
	c.LEAQ(Mem{Base: R10, Index: R10, Scale: 2}, R13)
	at := func(base, stride, stride3 Register, i int) Mem {
		switch i {
		case 0:
			return mem(base, 0)
		case 1:
			return Mem{Base: base, Index: stride, Scale: 1}
		case 2:
			return Mem{Base: base, Index: stride, Scale: 2}
		}
		return Mem{Base: base, Index: stride3, Scale: 1}
	}
	// Accumulators first (the folds below use VHADDPS, which has no
	// encoding for registers past 15), then the rows, then the columns.
	// Past four columns (AVX-512 only) the columns' pointers and outputs
	// continue from RBX and RAX, each column is loaded just before its
	// FMAs (two registers in turn), and accumulators past Z15 move down
	// to Z0-Z3, free by then, to be folded.
	acc := func(col, row int) VecPhysical { return w.vec(4*col + row) }
	wr := func(row int) VecPhysical { return w.vec(4*cols + row) }
	xr := func(col int) VecPhysical { return w.vec(4*cols + 4 + col) }
	var tmp VecPhysical
	streamed := cols > 4
	switch {
	case !w.wide():
		tmp = w.vec(4*cols + 4 + cols)
	case streamed:
		wr = func(row int) VecPhysical { return zr(4*cols + row) }
		xr = func(col int) VecPhysical { return zr(4*cols + 4 + col%2) }
		tmp = zr(4*cols + 6)
	case w.wide():
		wr = func(row int) VecPhysical { return zr(16 + row) }
		xr = func(col int) VecPhysical { return zr(20 + col) }
		tmp = zr(16)
	}
	xAt := func(col int) Mem {
		if col < 4 {
			return at(RDI, R9, R12, col)
		}
		return at(RBX, R9, R12, col-4)
	}
	outAt := func(col int) Mem {
		if col < 4 {
			return at(RDX, R10, R13, col)
		}
		return at(RAX, R10, R13, col-4)
	}
	for i := 0; i < 4*cols; i++ {
		zero(w.vec(i))
	}
	load := func(m Mem, dst VecPhysical) {
		if e.size == 4 {
			c.VMOVUPS(m, dst)
		} else {
			c.VCVTPH2PS(m, dst)
		}
	}
	step := w.lanes() * e.size
	label("loop")
	for r := 0; r < 4; r++ {
		load(at(RSI, R8, R11, r), wr(r))
	}
	if streamed {
		c.LEAQ(Mem{Base: RDI, Index: R9, Scale: 4}, RBX)
		for col := 0; col < cols; col++ {
			load(xAt(col), xr(col))
			for r := 0; r < 4; r++ {
				c.VFMADD231PS(xr(col), wr(r), acc(col, r))
			}
		}
	} else {
		for col := 0; col < cols; col++ {
			load(xAt(col), xr(col))
		}
		for col := 0; col < cols; col++ {
			for r := 0; r < 4; r++ {
				c.VFMADD231PS(xr(col), wr(r), acc(col, r))
			}
		}
	}
	c.ADDQ(U32(step), RSI)
	c.ADDQ(U32(step), RDI)
	decJNZ(RCX, "loop")

	if streamed {
		c.LEAQ(Mem{Base: RDX, Index: R10, Scale: 4}, RAX)
	}
	for col := 0; col < cols; col++ {
		low := func(r int) VecPhysical { return acc(col, r) }
		if 4*col+3 > 15 {
			for r := 0; r < 4; r++ {
				c.VMOVAPS(acc(col, r), zr(r))
			}
			low = func(r int) VecPhysical { return zr(r) }
		}
		for r := 0; r < 4; r++ {
			a := low(r)
			if w.wide() {
				fold512(a, asY(tmp))
				// EVEX: the temporary is past the VEX registers.
				c.VEXTRACTF32X4(U8(1), asY(a), asX(tmp))
			} else {
				c.VEXTRACTF128(U8(1), a, asX(tmp))
			}
			c.VADDPS(asX(tmp), asX(a), asX(a))
		}
		a, b, cc, d := asX(low(0)), asX(low(1)), asX(low(2)), asX(low(3))
		c.VHADDPS(b, a, a)
		c.VHADDPS(d, cc, cc)
		c.VHADDPS(cc, a, a)
		c.VMOVUPS(a, outAt(col))
	}
	c.VZEROUPPER()
	c.RET()
}

// quantF16 emits quantF16AVX2Asm(dst *byte, src *float32, n int): the n
// floats at src rounded to halves at dst, nearest even (VCVTPS2PH with
// rounding 0, whatever MXCSR says), 32 a step and then 8, the last n%8
// one at a time: F16 weights' activations, which the Go encoder converted
// at some 2.5 ms a token for a 0.6B model's prefill.
func quantF16() {
	text("quantF16AVX2Asm", NOSPLIT, "func(dst *byte, src *float32, n int)")
	loadArgs("dst src n", RDI, RSI, RCX)
	c.CMPQ(RCX, U8(32))
	c.JLT(ref("loop8"))
	label("loop32")
	for j := 0; j < 4; j++ {
		c.VMOVUPS(mem(RSI, 32*j), yr(j))
	}
	for j := 0; j < 4; j++ {
		c.VCVTPS2PH(U8(0), yr(j), mem(RDI, 16*j))
	}
	nextChunk(RSI, U32(128), RDI, U32(64), 32, "loop32")
	label("loop8")
	c.CMPQ(RCX, U8(8))
	c.JLT(ref("tail"))
	c.VMOVUPS(mem(RSI, 0), Y0)
	c.VCVTPS2PH(U8(0), Y0, mem(RDI, 0))
	c.ADDQ(U8(32), RSI)
	c.ADDQ(U8(16), RDI)
	c.SUBQ(U8(8), RCX)
	c.JMP(ref("loop8"))
	label("tail")
	jumpIfZero(RCX, "done")
	label("loop1")
	c.VMOVSS(mem(RSI, 0), X0)
	c.VCVTPS2PH(U8(0), X0, X0)
	c.VPEXTRW(U8(0), X0, mem(RDI, 0))
	c.ADDQ(U8(4), RSI)
	c.ADDQ(U8(2), RDI)
	decJNZ(RCX, "loop1")
	label("done")
	c.VZEROUPPER()
	c.RET()
}
