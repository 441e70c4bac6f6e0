package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The scores kernels of every cache type (kvScores, kvQ4Scores) differ
// only in how a column step of a key row is read and multiplied with the
// query: scoresKernel holds those pieces, and emit lays out the loops over
// rows and columns, the reductions and the stores they share.

// scoresKernel is one scores kernel's own pieces. Its arguments are loaded
// (scoresArgs): dst in R10, with four queries their stride in AX, the keys
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
	// for one query nacc rows into accumulator r; for four nacc/4 rows,
	// head h's product with row j into accumulator nacc/4·h+j.
	block func(rowMem func(r int) Mem)
	// single emits a column step of the row at RSI: into accumulator 0,
	// or 2h for query h.
	single func()
	// scaleBlock and scaleRow, unless nil, multiply a block's reduced
	// scores (in v, n bytes of them) and a row's by the rows' scales.
	scaleBlock func(v Register, n int)
	scaleRow   func()
}

// scoresArgs loads a scores kernel's arguments, the rows' scales (if
// scales is not nil) into scales.
func scoresArgs(heads int, scales Register) {
	load("dst", R10)
	if heads == 4 {
		load("stride", RAX)
	}
	load("k", RSI)
	if scales != nil {
		load("scales", scales)
	}
	load("q", RDI)
	load("rows", R11)
	load("d", R12)
}

// nacc is the number of accumulators: 8 Y or 16 Z registers.
func (s scoresKernel) nacc() int {
	if s.w.wide() {
		return 16
	}
	return 8
}

// emit lays out the kernel. Four queries expect queryStrides, and R14
// three key rows where block reads a fourth row.
func (s scoresKernel) emit() {
	if s.heads == 4 {
		s.emit4()
		return
	}
	w, nacc := s.w, s.nacc()
	// Rows in groups of four: SI, R8 (, R13, R14), each four rows on;
	// BX, 2·BX and DX (3·BX) within a group.
	c.LEAQ(memx(RBX, 0, RBX, 2), RDX)
	bases := []Register{RSI, R8}
	if w.wide() {
		bases = []Register{RSI, R8, R13, R14}
	}
	label("block")
	c.CMPQ(R11, U8(nacc))
	c.JLT(ref("tail"))
	if !w.wide() {
		c.MOVQ(RSI, R13)
	}
	for i := 1; i < len(bases); i++ {
		c.LEAQ(memx(bases[i-1], 0, RBX, 4), bases[i])
	}
	s.openCols()
	s.block(func(r int) Mem {
		base := bases[r/4]
		return []Mem{mem(base, 0), memx(base, 0, RBX, 1), memx(base, 0, RBX, 2), memx(base, 0, RDX, 1)}[r%4]
	})
	for _, b := range bases {
		c.ADDQ(U8(s.step), b)
	}
	s.next("cols")
	storeBlock1(w, nacc, s.scaleBlock)
	s.count()
	zero(w.vec(0))
	s.singleStep()
	sum1(w)
	s.scale(s.scaleRow)
	storeSum1()
}

// emit4 lays out the four-query kernel: blocks of nacc/4 rows, then the
// rows left one at a time.
func (s scoresKernel) emit4() {
	w := s.w
	rowMem := []Mem{mem(RSI, 0), memx(RSI, 0, RBX, 1), memx(RSI, 0, RBX, 2), memx(RSI, 0, R14, 1)}
	label("block")
	c.CMPQ(R11, U8(s.nacc()/4))
	c.JLT(ref("single"))
	s.openCols()
	s.block(func(r int) Mem { return rowMem[r] })
	c.ADDQ(U8(s.step), RSI)
	s.next("cols")
	if w.wide() {
		reduceAcc16()
		s.scaleSums(Z0, 64)
		storeBlock4Rows()
	} else {
		reduceAcc8()
		s.scaleSums(Y1, 32)
		storeBlock2Rows()
	}
	c.JMP(ref("block"))

	singleStart()
	s.count()
	for h := 0; h < 4; h++ {
		zero(w.vec(2 * h))
	}
	s.singleStep()
	if w.wide() {
		sums4Wide()
		s.scale(s.scaleRow)
		storeSums4Wide()
	} else {
		sums4Narrow()
		s.scale(s.scaleRow)
		storeSums4Lanes()
	}
	label("done")
	retVoid()
}

// openCols starts a block: R9 walks the queries from RDI, the
// accumulators are cleared, and "cols" loops over the column steps.
func (s scoresKernel) openCols() {
	c.MOVQ(RDI, R9)
	s.count()
	zeroAcc(s.w, s.nacc())
	label("cols")
}

// singleStep is the loop "col1" over the column steps of the row at RSI.
func (s scoresKernel) singleStep() {
	label("col1")
	s.single()
	c.ADDQ(U8(s.step), RSI)
	s.next("col1")
}

func (s scoresKernel) scale(f func()) {
	if f != nil {
		f()
	}
}

func (s scoresKernel) scaleSums(v Register, n int) {
	if s.scaleBlock != nil {
		s.scaleBlock(v, n)
	}
}

// The reductions and stores of the scores kernels: dst at R10, AX its
// stride in bytes between queries, R11 the rows left.

// queryStrides turns AX into the dst stride in bytes, DX into the query
// stride (4·d, d in R12) and R13 into three of those.
func queryStrides() {
	c.SHLQ(U8(2), RAX)
	c.MOVQ(R12, RDX)
	c.SHLQ(U8(2), RDX)
	c.LEAQ(memx(RDX, 0, RDX, 2), R13)
}

// sum1 leaves the sum of the one-query accumulator (Z0 or Y0) in X0.
func sum1(w width) {
	if w.wide() {
		fold512(Z0, Y1)
		hsum(Y0, X1)
	} else {
		c.VHADDPS(Y0, Y0, Y0)
		c.VHADDPS(Y0, Y0, Y0)
		c.VEXTRACTF128(U8(1), Y0, X1)
		c.VADDSS(X1, X0, X0)
	}
}

// storeSum1 stores X0 as one row's score and loops to "tail"; "done"
// returns.
func storeSum1() {
	c.VMOVSS(X0, mem(R10, 0))
	nextScoreRow("tail")
	label("done")
	retVoid()
}

// nextScoreRow steps dst (R10) past one row's score, counts the row off
// R11 and loops to loop.
func nextScoreRow(loop string) {
	c.ADDQ(U8(4), R10)
	c.DECQ(R11)
	c.JMP(ref(loop))
}

// sums4Wide leaves the sums of the four queries' accumulators Z0, Z2, Z4
// and Z6 in X0, X2, X4 and X6.
func sums4Wide() {
	for h := 0; h < 4; h++ {
		fold512(zr(2*h), yr(2*h+1))
		hsum(yr(2*h), xs[2*h+1])
	}
}

// storeSums4Wide stores X0, X2, X4 and X6 as one row's scores for the four
// queries and loops to "single".
func storeSums4Wide() {
	c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
	c.VMOVSS(X0, mem(R10, 0))
	c.VMOVSS(X2, memx(R10, 0, RAX, 1))
	c.VMOVSS(X4, memx(R10, 0, RAX, 2))
	c.VMOVSS(X6, memx(R10, 0, RCX, 1))
	nextScoreRow("single")
}

// sums4Narrow leaves the sums of Y0, Y2, Y4 and Y6 in the four lanes of X0.
func sums4Narrow() {
	c.VHADDPS(Y2, Y0, Y0)
	c.VHADDPS(Y6, Y4, Y4)
	c.VHADDPS(Y4, Y0, Y0)
	c.VEXTRACTF128(U8(1), Y0, X1)
	c.VADDPS(X1, X0, X0)
}

// storeSums4Lanes stores the four lanes of X0 as the four queries' scores.
func storeSums4Lanes() {
	c.VMOVSS(X0, mem(R10, 0))
	c.VEXTRACTPS(U8(1), X0, memx(R10, 0, RAX, 1))
	c.VEXTRACTPS(U8(2), X0, memx(R10, 0, RAX, 2))
	c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
	c.VEXTRACTPS(U8(3), X0, memx(R10, 0, RCX, 1))
}

// storeBlock4Rows stores the scores of four rows for the four queries
// (query h's in 128-bit lane h of Z0) and steps to the next four rows
// (R14 bytes).
func storeBlock4Rows() {
	c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
	for h, m := range []Mem{mem(R10, 0), memx(R10, 0, RAX, 1), memx(R10, 0, RAX, 2), memx(R10, 0, RCX, 1)} {
		c.VEXTRACTF32X4(U8(h), Z0, m)
	}
	c.ADDQ(U8(16), R10)
	c.ADDQ(R14, RSI)
	c.SUBQ(U8(4), R11)
}

// storeBlock2Rows stores the scores of two rows for the four queries
// (query h's in 64-bit lane h of Y1) and steps to the next two rows (RBX
// bytes).
func storeBlock2Rows() {
	c.VEXTRACTF128(U8(1), Y1, X2)
	c.VMOVLPS(X1, mem(R10, 0))
	c.VMOVHPS(X1, memx(R10, 0, RAX, 1))
	c.VMOVLPS(X2, memx(R10, 0, RAX, 2))
	c.LEAQ(memx(RAX, 0, RAX, 2), RCX)
	c.VMOVHPS(X2, memx(R10, 0, RCX, 1))
	c.ADDQ(U8(8), R10)
	c.ADDQ(RBX, RSI)
	c.SUBQ(U8(2), R11)
}

// singleStart opens the scores kernels' loop over the rows left one at a
// time, R9 walking the queries from RDI.
func singleStart() {
	label("single")
	c.TESTQ(R11, R11)
	c.JEQ(ref("done"))
	c.MOVQ(RDI, R9)
}

// storeBlock1 reduces the one-query scores kernel's nacc accumulators to
// the scores of a block of rows, which scale (unless nil) multiplies by
// the rows' scales (n bytes of them), stores them and loops to "block";
// then opens "tail", the rows left one at a time, R9 walking the query
// from RDI.
func storeBlock1(w width, nacc int, scale func(v Register, n int)) {
	v, n := Register(Y1), 32
	if w.wide() {
		reduceAcc16()
		v, n = Z0, 64
	} else {
		reduceAcc8()
	}
	if scale != nil {
		scale(v, n)
	}
	c.VMOVUPS(v, mem(R10, 0))
	c.ADDQ(U8(n), R10)
	if w.wide() {
		c.LEAQ(memx(R14, 0, RDX, 1), RSI)
	} else {
		c.LEAQ(memx(R13, 0, RBX, 8), RSI)
	}
	c.SUBQ(U8(nacc), R11)
	c.JMP(ref("block"))

	label("tail")
	c.TESTQ(R11, R11)
	c.JEQ(ref("done"))
	c.MOVQ(RDI, R9)
}
