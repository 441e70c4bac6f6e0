package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The values kernels of every cache type (kvValues, kvQ4Values) with one
// head, or several with AVX-512, differ only in how a value row's columns
// are read and added to the accumulators: valuesKernel holds that, and
// emit lays out the chunks of columns, the loops over rows and the
// zero-weight skips they share.

// valuesKernel is one values kernel's own pieces. Its arguments are loaded
// (loadArgs): o in RDI, w in R10, with several heads their stride in AX,
// the values in RSI, the rows in R11, d in RDX and a value row's bytes in
// RBX; several heads have had valuesX4Strides.
type valuesKernel struct {
	w      width
	heads  int
	chunks []int // columns per chunk, largest first
	// rowBytes is the bytes of n columns of a value row.
	rowBytes func(n int) int
	// scaled says the rows carry float32 scales (int8), at R12: with
	// several heads R12 less R10 (w), so (R9)(R12*1) is the scale of the
	// weight at R9.
	scaled bool
	// headAccs, if not 0, is where head h's accumulators start (h ·
	// headAccs), else right after head h-1's.
	headAccs int
	// row emits the products of a row with its weight for the n columns
	// of a chunk, into acc(h, i) (accumulator i of head h): one head, the
	// row at R8 and its weight broadcast in a (Y15 or Z15); several, the
	// row at R13, head h's weight in Z(16+h) and K(1+h) where it is
	// non-zero.
	row func(n int, a Register, acc func(h, i int) Register)
}

// emit lays out the kernel: each chunk of columns, from the largest, kept
// in registers over all rows, so o is loaded and stored once per chunk.
func (s valuesKernel) emit() {
	w, heads, chunks := s.w, s.heads, s.chunks
	lanes := w.lanes()
	for ci, n := range chunks {
		nacc := n / lanes
		name := "chunk" + itoa(n)
		label(name)
		next := "done"
		if ci+1 < len(chunks) {
			next = "chunk" + itoa(chunks[ci+1])
		}
		c.CMPQ(RDX, U8(n))
		c.JLT(ref(next))
		headAccs := s.headAccs
		if headAccs == 0 {
			headAccs = nacc
		}
		acc := func(h, i int) Register { return w.vec(headAccs*h + i) }
		out := func(h, i int) Mem {
			if heads == 1 {
				return mem(RDI, 4*lanes*i)
			}
			return []Mem{mem(RDI, 64*i), memx(RDI, 64*i, R14, 1), memx(RDI, 64*i, R14, 2), memx(RDI, 64*i, RCX, 1)}[h]
		}
		if heads > 1 {
			c.LEAQ(memx(R14, 0, R14, 2), RCX)
		}
		for h := 0; h < heads; h++ {
			for i := 0; i < nacc; i++ {
				c.VMOVUPS(out(h, i), acc(h, i))
			}
		}
		rowLbl, skip, store := "row"+itoa(n), "skip"+itoa(n), "store"+itoa(n)
		if heads == 1 {
			s.rows1(n, rowLbl, skip, store, acc)
		} else {
			s.rowsN(n, rowLbl, skip, acc)
		}
		for h := 0; h < heads; h++ {
			for i := 0; i < nacc; i++ {
				c.VMOVUPS(acc(h, i), out(h, i))
			}
		}
		c.ADDQ(U32(4*n), RDI)
		c.ADDQ(U32(s.rowBytes(n)), RSI)
		c.SUBQ(U8(n), RDX)
		// The first chunk size repeats; the second runs at most once; the
		// last repeats unless the second is twice it.
		switch {
		case ci == 0:
			c.JMP(ref(name))
		case ci == 1:
			c.JMP(ref(next))
		case chunks[1] == 2*chunks[2]:
			c.JMP(ref("done"))
		default:
			c.JMP(ref(name))
		}
	}
	label("done")
	retVoid()
}

// rows1 is the loop over the rows of one head's chunk: R8 the row, R9 the
// weight (R13 the scale), CX the rows left; rows whose weight is zero are
// skipped.
func (s valuesKernel) rows1(n int, rowLbl, skip, store string, acc func(h, i int) Register) {
	c.MOVQ(RSI, R8)
	c.MOVQ(R10, R9)
	if s.scaled {
		c.MOVQ(R12, R13)
	}
	c.MOVQ(R11, RCX)
	jumpIfZero(RCX, store)
	c.MOVQ(RBX, R14)
	c.SHLQ(U8(valuesAhead), R14)
	label(rowLbl)
	s.prefetchRow(n, R8, R14)
	c.VMOVSS(mem(R9, 0), X15)
	if s.scaled {
		c.VMULSS(mem(R13, 0), X15, X15)
		c.ADDQ(U8(4), R13)
	}
	c.ADDQ(U8(4), R9)
	c.VMOVD(X15, EAX)
	c.TESTL(U32(0x7fffffff), EAX)
	c.JEQ(ref(skip))
	a := s.w.vec(15)
	c.VBROADCASTSS(X15, a)
	s.row(n, a, acc)
	label(skip)
	c.ADDQ(RBX, R8)
	decJNZ(RCX, rowLbl)
	label(store)
}

// rowsN is the loop over the rows of several heads' chunk: R13 the row,
// R9 the weight of head 0 (R11 the end of w); rows whose weight is zero
// for every head are skipped. It leaves three output strides in RCX.
func (s valuesKernel) rowsN(n int, rowLbl, skip string, acc func(h, i int) Register) {
	heads := s.heads
	c.MOVQ(RSI, R13)
	c.MOVQ(R10, R9)
	c.MOVQ(RBX, RCX)
	c.SHLQ(U8(valuesAhead), RCX)
	label(rowLbl)
	s.prefetchRow(n, R13, RCX)
	ws := []Mem{mem(R9, 0), memx(R9, 0, RAX, 1), memx(R9, 0, RAX, 2), memx(R9, 0, R8, 1)}
	for h := 0; h < heads; h++ {
		c.VBROADCASTSS(ws[h], zr(16+h))
	}
	if s.scaled {
		c.VBROADCASTSS(memx(R9, 0, R12, 1), Z20)
		for h := 0; h < heads; h++ {
			c.VMULPS(Z20, zr(16+h), zr(16+h))
		}
	}
	c.ADDQ(U8(4), R9)
	for h, k := range valuesMasks[:heads] {
		c.VCMPPS(U8(4), Z31, zr(16+h), k)
	}
	if heads == 4 {
		c.KORW(K1, K2, K5)
		c.KORW(K3, K4, K6)
		c.KORTESTW(K5, K6)
	} else {
		c.KORTESTW(K1, K2)
	}
	c.JEQ(ref(skip))
	s.row(n, nil, acc)
	label(skip)
	c.ADDQ(RBX, R13)
	c.CMPQ(R9, R11)
	c.JNE(ref(rowLbl))
	c.LEAQ(memx(R14, 0, R14, 2), RCX)
}

// valuesAhead is how far ahead the value kernels prefetch: 1<<valuesAhead
// rows (2.3 KB of q4_0 rows of 256, 4 KB of F16 rows of 128).
const valuesAhead = 4

// prefetchRow asks for the n columns of the value row ahead (rows ahead
// bytes past row) that the chunk will read, a line at a time and then its
// last byte, whose line is the one more an unaligned chunk spans: a decode step reads the cache once, from memory, and one
// core's own reads do not keep enough lines in flight (kvPrefetchBlock).
func (s valuesKernel) prefetchRow(n int, row, ahead Register) {
	b := s.rowBytes(n)
	for off := 0; off < b; off += 64 {
		c.PREFETCHT0(memx(row, off, ahead, 1))
	}
	c.PREFETCHT0(memx(row, b-1, ahead, 1))
}

// valuesMasks are the multi-head kernels' masks of the heads whose weight
// is non-zero.
var valuesMasks = []Register{K1, K2, K3, K4}

// valuesX4Strides sets up the multi-head values kernels: AX the weights'
// stride in bytes and R8 three of them, R14 the output stride (4·d, d in
// DX), R11 the end of w (R10, R11 rows), Z31 zero.
func valuesX4Strides() {
	c.SHLQ(U8(2), RAX)
	c.LEAQ(memx(RAX, 0, RAX, 2), R8)
	c.MOVQ(RDX, R14)
	c.SHLQ(U8(2), R14)
	c.LEAQ(memx(R10, 0, R11, 4), R11)
	c.VPXORD(Z31, Z31, Z31)
}
