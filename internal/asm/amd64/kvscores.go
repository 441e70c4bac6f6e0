package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The scores kernels of every cache type (kvScores, kvQ4Scores) differ
// only in how a column step of a key row is read and multiplied with the
// query: scoresKernel holds those pieces, and emit lays out the loops over
// rows and columns, the reductions and the stores they share.

// scoresKernel is one scores kernel's own pieces. Its arguments are loaded
// (loadArgs): dst in R10, with several queries their stride in AX, the keys
// in RSI, the query in RDI, the rows in R11, d in R12 and a key row's
// bytes in RBX.
type scoresKernel struct {
	w     width
	heads int
	step  int // key bytes per column step of a row
	// count sets CX to the column steps of a row; next steps the query
	// (R9) past one, counts it off CX and loops to loop while any remain.
	count func()
	next  func(loop string)
	// block emits a column step of a block of rows, row r at rowMem(r):
	// for one query nacc rows into accumulator r; for H queries nacc/H
	// rows, head h's product with row j into accumulator nacc/H·h+j.
	block func(rowMem func(r int) Mem)
	// single emits a column step of the row at RSI: into accumulator 0,
	// or 2h for query h.
	single func()
	// scaleBlock and scaleRow, unless nil, multiply a block's reduced
	// scores (in v, n bytes of them) and a row's by the rows' scales.
	scaleBlock func(v Register, n int)
	scaleRow   func()
}

// nacc is the number of accumulators: 8 Y or 16 Z registers.
func (s scoresKernel) nacc() int {
	if s.w.wide() {
		return 16
	}
	return 8
}

// emit lays out the kernel: blocks of rows, nacc/H for H queries, then the
// rows left one at a time. Several queries expect queryStrides, and R14
// three key rows where block reads a fourth row; two queries' eight rows
// are read from two bases, SI and R13 four rows on.
func (s scoresKernel) emit() {
	w, nacc := s.w, s.nacc()
	// bases are stepped past each column step.
	bases := []Register{RSI}
	rowMem := func(r int) Mem {
		return []Mem{mem(RSI, 0), memx(RSI, 0, RBX, 1), memx(RSI, 0, RBX, 2), memx(RSI, 0, R14, 1)}[r]
	}
	tail := "single"
	if s.heads == 1 {
		// Rows in groups of four: SI, R8 (, R13, R14), each four rows
		// on; BX, 2·BX and DX (3·BX) within a group.
		c.LEAQ(memx(RBX, 0, RBX, 2), RDX)
		bases = []Register{RSI, R8}
		if w.wide() {
			bases = []Register{RSI, R8, R13, R14}
		}
		rowMem = func(r int) Mem {
			base := bases[r/4]
			return []Mem{mem(base, 0), memx(base, 0, RBX, 1), memx(base, 0, RBX, 2), memx(base, 0, RDX, 1)}[r%4]
		}
		tail = "tail"
	}
	if s.heads == 2 {
		bases = []Register{RSI, R13}
		rowMem = func(r int) Mem {
			base := bases[r/4]
			return []Mem{mem(base, 0), memx(base, 0, RBX, 1), memx(base, 0, RBX, 2), memx(base, 0, R14, 1)}[r%4]
		}
	}
	label("block")
	c.CMPQ(R11, U8(nacc/s.heads))
	c.JLT(ref(tail))
	kvPrefetchBlock(nacc / s.heads)
	if s.heads == 1 && !w.wide() {
		c.MOVQ(RSI, R13)
	}
	for i := 1; i < len(bases); i++ {
		c.LEAQ(memx(bases[i-1], 0, RBX, 4), bases[i])
	}
	c.MOVQ(RDI, R9)
	s.count()
	zeroAcc(w, nacc)
	label("cols")
	s.block(rowMem)
	for _, b := range bases {
		c.ADDQ(U8(s.step), b)
	}
	s.next("cols")
	s.blockScores()
	s.count()
	for h := 0; h < s.heads; h++ {
		zero(w.vec(2 * h))
	}
	s.singleStep()
	s.rowScores()
}

// kvPrefetchBlock asks for the key rows two blocks of rows rows ahead of
// the block at RSI, a cache line at a time (CX, R9 scratch: the block
// sets them after). A decode step reads the cache once, from memory, and
// one core's own reads do not keep enough lines in flight to stream it,
// as with the weights (rowx8.go); the key rows of a head are contiguous,
// so the rows ahead are the next ones read. Prefetches of lines past the
// cache's end do not fault.
func kvPrefetchBlock(rows int) {
	shift := uint8(bits.Len(uint(rows)) - 1) // rows is a power of two
	c.MOVQ(RBX, R9)
	c.SHLQ(U8(shift+1), R9)
	c.ADDQ(RSI, R9)
	c.MOVQ(RBX, RCX)
	c.SHLQ(U8(shift), RCX)
	c.SHRQ(U8(6), RCX)
	c.INCQ(RCX)
	label("prefetch")
	c.PREFETCHT0(mem(R9, 0))
	c.ADDQ(U8(64), R9)
	decJNZ(RCX, "prefetch")
}

// singleStep is the loop "col1" over the column steps of the row at RSI.
func (s scoresKernel) singleStep() {
	label("col1")
	s.single()
	c.ADDQ(U8(s.step), RSI)
	s.next("col1")
}

// rowScores reduces the accumulators of the row at RSI (0, or 2h for
// query h), scales the sums, stores them as the row's scores and, but
// after AVX2's four queries (at most one row is left to them), loops to
// the next row; then "done" returns. The sums of one query or AVX-512's
// several are in X0 (X2, X4, X6), of AVX2's four in the lanes of X0.
func (s scoresKernel) rowScores() {
	switch {
	case s.w.wide():
		for h := 0; h < s.heads; h++ {
			fold512(zr(2*h), yr(2*h+1))
			hsum(yr(2*h), xs[2*h+1])
		}
	case s.heads == 1:
		c.VHADDPS(Y0, Y0, Y0)
		c.VHADDPS(Y0, Y0, Y0)
		c.VEXTRACTF128(U8(1), Y0, X1)
		c.VADDSS(X1, X0, X0)
	default:
		c.VHADDPS(Y2, Y0, Y0)
		c.VHADDPS(Y6, Y4, Y4)
		c.VHADDPS(Y4, Y0, Y0)
		c.VEXTRACTF128(U8(1), Y0, X1)
		c.VADDPS(X1, X0, X0)
	}
	if s.scaleRow != nil {
		s.scaleRow()
	}
	loop := "tail"
	switch {
	case s.heads == 1:
		c.VMOVSS(X0, mem(R10, 0))
	case s.w.wide():
		c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
		for h, m := range queryScores(RCX)[:s.heads] {
			c.VMOVSS(xs[2*h], m)
		}
		loop = "single"
	default:
		c.VMOVSS(X0, mem(R10, 0))
		c.VEXTRACTPS(U8(1), X0, memx(R10, 0, RAX, 1))
		c.VEXTRACTPS(U8(2), X0, memx(R10, 0, RAX, 2))
		c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
		c.VEXTRACTPS(U8(3), X0, memx(R10, 0, RCX, 1))
		loop = ""
	}
	if loop != "" {
		c.ADDQ(U8(4), R10)
		c.DECQ(R11)
		c.JMP(ref(loop))
	}
	label("done")
	retVoid()
}

// queryScores are the queries' places in dst (R10, AX the stride
// between them, three three strides).
func queryScores(three Register) []Mem {
	return []Mem{mem(R10, 0), memx(R10, 0, RAX, 1), memx(R10, 0, RAX, 2), memx(R10, 0, three, 1)}
}

// queryStrides turns AX into the dst stride in bytes, DX into the query
// stride (4·d, d in R12) and, for four queries, R13 into three of those.
func queryStrides(heads int) {
	c.SHLQ(U8(2), RAX)
	c.MOVQ(R12, RDX)
	c.SHLQ(U8(2), RDX)
	if heads == 4 {
		c.LEAQ(memx(RDX, 0, RDX, 2), R13)
	}
}

// blockScores reduces the accumulators of a block of rows to their
// scores, scales and stores them, steps to the next block and loops to
// "block"; then opens the loop over the rows left one at a time ("tail",
// or "single" for several queries), R9 walking the queries from RDI. The
// scores of one query are in Z0 or Y1 in row order; of two, query h's
// rows in 256-bit half h of Z0; of four, in 128-bit lane h of Z0 or
// 64-bit lane h of Y1.
func (s scoresKernel) blockScores() {
	w, nacc := s.w, s.nacc()
	v, n := Register(Y1), 32
	if w.wide() {
		reduceAcc16()
		v, n = Z0, 64
	} else {
		reduceAcc8()
	}
	if s.scaleBlock != nil {
		s.scaleBlock(v, n)
	}
	switch {
	case s.heads == 1:
		c.VMOVUPS(v, mem(R10, 0))
	case s.heads == 2:
		c.VMOVUPS(Y0, mem(R10, 0))
		c.VEXTRACTF64X4(U8(1), Z0, memx(R10, 0, RAX, 1))
	case w.wide():
		c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
		for h, m := range queryScores(RCX) {
			c.VEXTRACTF32X4(U8(h), Z0, m)
		}
	default:
		c.VEXTRACTF128(U8(1), Y1, X2)
		c.VMOVLPS(X1, mem(R10, 0))
		c.VMOVHPS(X1, memx(R10, 0, RAX, 1))
		c.VMOVLPS(X2, memx(R10, 0, RAX, 2))
		c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
		c.VMOVHPS(X2, memx(R10, 0, RCX, 1))
	}
	c.ADDQ(U8(n/s.heads), R10)
	// The next block: one query's rows past the group bases, two
	// queries' three rows past R13's, four queries' one (AVX2 two,
	// AVX-512 four) rows on.
	switch {
	case s.heads == 2:
		c.LEAQ(memx(R13, 0, R14, 1), RSI)
	case s.heads == 4 && w.wide():
		c.ADDQ(R14, RSI)
	case s.heads == 4:
		c.ADDQ(RBX, RSI)
	case w.wide():
		c.LEAQ(memx(R14, 0, RDX, 1), RSI)
	default:
		c.LEAQ(memx(R13, 0, RBX, 8), RSI)
	}
	c.SUBQ(U8(nacc/s.heads), R11)
	c.JMP(ref("block"))

	tail := "tail"
	if s.heads > 1 {
		tail = "single"
	}
	label(tail)
	jumpIfZero(R11, "done")
	c.MOVQ(RDI, R9)
}
