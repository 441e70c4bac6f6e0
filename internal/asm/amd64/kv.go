package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// kvFiles lists the files of package kv: the attention kernels, each the
// twin of a pure-Go function in kv/kernels.go. Products are fused with
// their sums (FMA) and sums are split over lanes, so results differ from
// the Go twins in float32 rounding only; kv picks the width once per row
// length, and every kernel computes a head's result in the same order
// whatever other heads or rows it takes along, so a head's result is the
// same bits from every kernel of one width that can compute it.
func kvFiles() []outFile {
	return []outFile{
		{"row", func() {
			for _, e := range []kvElem{kvF16, kvI8} {
				kvDot(e)
				kvAxpy(e, 1)
				kvAxpy(e, 2)
			}
		}},
		{"scores", func() { kvFamily(kvScores) }},
		{"values", func() { kvFamily(kvValues) }},
		{"softmax", func() { kvSoftmax(avx2); kvSoftmax(avx512) }},
		kvQ4Files(),
	}
}

// kvFamily emits a multi-row kernel for both widths, one and four heads
// (and two with AVX-512), and both element types.
func kvFamily(gen func(e kvElem, w width, heads int)) {
	for _, w := range []width{avx2, avx512} {
		for _, heads := range kvHeads(w) {
			for _, e := range []kvElem{kvF16, kvI8} {
				gen(e, w, heads)
			}
		}
	}
}

// kvHeads are the query heads the multi-row kernels of a width take at
// once: four for the grouped-query models of four or more query heads a
// KV head, and with AVX-512, whose 32 registers hold two heads' queries
// beside 16 accumulators, two for those of two (Gemma-2, Gemma-3).
func kvHeads(w width) []int {
	if w.wide() {
		return []int{1, 2, 4}
	}
	return []int{1, 4}
}

// kvElem is an element type of the cache: F16 (widened exactly by
// VCVTPH2PS) or int8 (VPMOVSXBD, VCVTDQ2PS) with a float32 scale per row.
type kvElem struct {
	name   string
	size   int
	goType string
	// For kv's Go dispatch (kvdispatch.go): the length in its slice of a
	// row of d elements ("" for d), and the Go condition under which the
	// kernels cannot take rows of d elements ("" when they take every d
	// the registry gives them).
	goRow, goSkip string
}

var (
	kvF16 = kvElem{name: "F16", size: 2, goType: "uint16"}
	kvI8  = kvElem{name: "I8", size: 1, goType: "int8"}
)

// loadRows widens the elements at ms into dsts: F16 one VCVTPH2PS each;
// int8 all the sign extensions, then all the conversions when grouped,
// else each pair in turn.
func (e kvElem) loadRows(grouped bool, ms []Mem, dsts []Register) {
	if e.size == 2 {
		for i, m := range ms {
			c.VCVTPH2PS(m, dsts[i])
		}
		return
	}
	if !grouped {
		for i, m := range ms {
			c.VPMOVSXBD(m, dsts[i])
			c.VCVTDQ2PS(dsts[i], dsts[i])
		}
		return
	}
	for i, m := range ms {
		c.VPMOVSXBD(m, dsts[i])
	}
	for _, d := range dsts {
		c.VCVTDQ2PS(d, d)
	}
}

// load1 widens one vector of elements.
func (e kvElem) load1(m Mem, dst Register) { e.loadRows(false, []Mem{m}, []Register{dst}) }

// loadScalar widens one element into lane 0 of X register x (via AX).
func (e kvElem) loadScalar(m Mem, x Register) {
	if e.size == 2 {
		c.MOVWLZX(m, EAX)
		c.VMOVD(EAX, x)
		c.VCVTPH2PS(x, x)
		return
	}
	c.MOVBLSX(m, EAX)
	c.VMOVD(EAX, x)
	c.VCVTDQ2PS(x, x)
}

// rowStride sets r to the bytes of a row of d elements (d in reg d).
func (e kvElem) rowStride(d, r Register) {
	if e.size == 2 {
		c.LEAQ(memx(d, 0, d, 1), r)
	} else {
		c.MOVQ(d, r)
	}
}

// param returns a Go argument's frame slot.
func param(name string) Mem {
	b, err := c.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

func load(name string, r Register) { c.Load(c.Param(name), r) }

// headStride is the register of the multi-head kernels' stride argument,
// AX; with one head there is none.
func headStride(heads int) Register {
	if heads > 1 {
		return RAX
	}
	return nil
}

// kvDot emits dot<E>F32AVX2(k *E, q *float32, n int) float32: four
// accumulators over 32 elements, then 8 at a time, the sum (hsum), then
// the last n%8 one at a time.
func kvDot(e kvElem) {
	text("dot"+e.name+"F32AVX2", NOSPLIT, fmt.Sprintf("func(k *%s, q *float32, n int) float32", e.goType))
	loadArgs("k q n", RSI, RDI, RCX)
	zeroAcc(avx2, 4)
	rowLoops(e, "dot", "reduce", regs(ys[4:8]), func(vs []Register) {
		for j := range vs {
			c.VFMADD231PS(mem(RDI, 32*j), vs[j], yr(j))
		}
	})
	label("reduce")
	addTree(avx2, 4)
	hsum(Y0, X1)
	jumpIfZero(RCX, "done")
	label("dot1")
	e.loadScalar(mem(RSI, 0), X4)
	c.VFMADD231SS(mem(RDI, 0), X4, X0)
	stepElem(e, RSI)
	c.JNZ(ref("dot1"))
	label("done")
	retFloat()
}

// rowLoops emits the vector loops of the one-row kernels over n (CX)
// elements at RSI and floats at RDI: 32 a pass ("<name>32") while 32
// remain, then 8 ("<name>8") while 8 remain, then on to tail. vec gets the
// pass's elements widened to float32 in v4, or in its first for 8, and
// does the work with the floats at RDI.
func rowLoops(e kvElem, name, tail string, v4 []Register, vec func(vs []Register)) {
	c.CMPQ(RCX, U8(32))
	c.JLT(ref(name + "8"))
	label(name + "32")
	e.loadRows(true, []Mem{mem(RSI, 0), mem(RSI, 8*e.size), mem(RSI, 16*e.size), mem(RSI, 24*e.size)}, v4)
	vec(v4)
	nextChunk(RSI, U8(32*e.size), RDI, U32(128), 32, name+"32")
	label(name + "8")
	c.CMPQ(RCX, U8(8))
	c.JLT(ref(tail))
	e.load1(mem(RSI, 0), v4[0])
	vec(v4[:1])
	c.ADDQ(U8(8*e.size), RSI)
	c.ADDQ(U8(32), RDI)
	c.SUBQ(U8(8), RCX)
	c.JMP(ref(name + "8"))
}

// kvAxpy emits axpy<E>AVX2(dst *float32, a float32, v *E, n int), dst +=
// a·v, or, with rows 2, axpy2<E>AVX2(dst, a0, a1, v0, v1, n), dst += a0·v0
// + a1·v1 with the two products summed first, as in the Go twin, so each
// element of dst is loaded and stored once for two rows.
func kvAxpy(e kvElem, rows int) {
	if rows == 1 {
		text("axpy"+e.name+"AVX2", NOSPLIT, fmt.Sprintf("func(dst *float32, a float32, v *%s, n int)", e.goType))
		load("dst", RDI)
		c.VBROADCASTSS(param("a"), Y15)
		loadArgs("v n", RSI, RCX)
		rowLoops(e, "axpy", "axpy1", regs(ys[0:4]), func(vs []Register) {
			for j := range vs {
				c.VFMADD213PS(mem(RDI, 32*j), Y15, vs[j])
			}
			for j := range vs {
				c.VMOVUPS(vs[j], mem(RDI, 32*j))
			}
		})
		axpyTail(e, []Register{RSI}, func() {
			e.loadScalar(mem(RSI, 0), X0)
			c.VFMADD213SS(mem(RDI, 0), X15, X0)
		})
		return
	}
	text("axpy2"+e.name+"AVX2", NOSPLIT, fmt.Sprintf("func(dst *float32, a0, a1 float32, v0, v1 *%s, n int)", e.goType))
	load("dst", RDI)
	c.VBROADCASTSS(param("a0"), Y14)
	c.VBROADCASTSS(param("a1"), Y15)
	loadArgs("v0 v1 n", RSI, RDX, RCX)
	c.CMPQ(RCX, U8(16))
	c.JLT(ref("axpy8"))
	label("axpy16")
	e.loadRows(true, []Mem{mem(RSI, 0), mem(RSI, 8*e.size), mem(RDX, 0), mem(RDX, 8*e.size)}, regs(ys[0:4]))
	c.VMULPS(Y14, Y0, Y0)
	c.VMULPS(Y14, Y1, Y1)
	c.VFMADD231PS(Y15, Y2, Y0)
	c.VFMADD231PS(Y15, Y3, Y1)
	c.VADDPS(mem(RDI, 0), Y0, Y0)
	c.VADDPS(mem(RDI, 32), Y1, Y1)
	c.VMOVUPS(Y0, mem(RDI, 0))
	c.VMOVUPS(Y1, mem(RDI, 32))
	c.ADDQ(U8(16*e.size), RSI)
	nextChunk(RDX, U8(16*e.size), RDI, U8(64), 16, "axpy16")
	label("axpy8")
	c.CMPQ(RCX, U8(8))
	c.JLT(ref("axpy1"))
	e.loadRows(true, []Mem{mem(RSI, 0), mem(RDX, 0)}, []Register{Y0, Y2})
	c.VMULPS(Y14, Y0, Y0)
	c.VFMADD231PS(Y15, Y2, Y0)
	c.VADDPS(mem(RDI, 0), Y0, Y0)
	c.VMOVUPS(Y0, mem(RDI, 0))
	c.ADDQ(U8(8*e.size), RSI)
	c.ADDQ(U8(8*e.size), RDX)
	c.ADDQ(U8(32), RDI)
	c.SUBQ(U8(8), RCX)
	axpyTail(e, []Register{RSI, RDX}, func() {
		e.loadScalar(mem(RSI, 0), X0)
		e.loadScalar(mem(RDX, 0), X2)
		c.VMULSS(X14, X0, X0)
		c.VFMADD231SS(X15, X2, X0)
		c.VADDSS(mem(RDI, 0), X0, X0)
	})
}

// axpyTail emits the axpy kernels' loop over the last elements one at a
// time ("axpy1"): add leaves dst's new element in X0 from the elements at
// srcs and the float at RDI, each then stepped past; then "done" returns.
func axpyTail(e kvElem, srcs []Register, add func()) {
	label("axpy1")
	jumpIfZero(RCX, "done")
	add()
	c.VMOVSS(X0, mem(RDI, 0))
	stepElem(e, srcs...)
	c.JMP(ref("axpy1"))
	label("done")
	retVoid()
}

// stepElem steps the one-at-a-time loops of the row kernels past an
// element: srcs by one element of e, RDI by a float, and counts it off CX.
func stepElem(e kvElem, srcs ...Register) {
	for _, r := range srcs {
		c.ADDQ(U8(e.size), r)
	}
	c.ADDQ(U8(4), RDI)
	c.DECQ(RCX)
}

// kvName is the name of a multi-row kernel.
func kvName(kind string, e kvElem, w width, heads int) string {
	xn := ""
	if heads > 1 {
		xn = "x" + itoa(heads)
	}
	return kind + e.name + xn + w.suffix()
}

// reduceAcc8 leaves in lane i of Y1 the sum of the lanes of accumulator
// Yi (i < 8): VHADDPS of lane pairs, then pairs of pairs, then the two
// halves, the order in which a single accumulator is reduced too.
func reduceAcc8() {
	for i := 0; i < 8; i += 2 {
		c.VHADDPS(yr(i+1), yr(i), yr(i))
	}
	c.VHADDPS(Y2, Y0, Y0)
	c.VHADDPS(Y6, Y4, Y4)
	c.VPERM2F128(U8(0x20), Y4, Y0, Y1)
	c.VPERM2F128(U8(0x31), Y4, Y0, Y2)
	c.VADDPS(Y2, Y1, Y1)
}

// reduceAcc16 leaves in lane i of Z0 the sum of the lanes of accumulator
// Zi (i < 16) by shuffles and adds (Z31 scratch): 128-bit lanes 0+2 and
// 1+3, then those two, then in-lane pairs 0+2 and 1+3, then those two —
// the order fold512 and hsum reduce a single accumulator in.
func reduceAcc16() {
	step := func(shuf func(Op, Op, Op, Op), lo, hi uint8, a, b Register) {
		shuf(U8(lo), b, a, Z31)
		shuf(U8(hi), b, a, a)
		c.VADDPS(a, Z31, a)
	}
	sf := func(i, a, b, d Op) { c.VSHUFF32X4(i, a, b, d) }
	sp := func(i, a, b, d Op) { c.VSHUFPS(i, a, b, d) }
	for _, a := range []int{0, 8, 1, 9, 2, 10, 3, 11} {
		step(sf, 0x44, 0xee, zr(a), zr(a+4))
	}
	for a := 0; a < 4; a++ {
		step(sf, 0x88, 0xdd, zr(a), zr(a+8))
	}
	step(sp, 0x44, 0xee, Z0, Z1)
	step(sp, 0x44, 0xee, Z2, Z3)
	step(sp, 0x88, 0xdd, Z0, Z2)
}

// nextQueryCols steps the scores kernels' query (R9) past lanes floats,
// counting them off RCX, and loops to loop while columns remain.
func nextQueryCols(lanes int, loop string) {
	c.ADDQ(U8(4*lanes), R9)
	c.SUBQ(U8(lanes), RCX)
	c.JNZ(ref(loop))
}

// kvText opens the kind kernel of e: its arguments are lead, then with
// several heads the stride between them, then rest (its %s e's Go type), or
// restI8 for the int8 cache, whose rows carry scales.
func kvText(kind string, e kvElem, w width, heads int, lead, rest, restI8 string) {
	args := fmt.Sprintf(rest, e.goType)
	if e.size == 1 {
		args = restI8
	}
	if heads > 1 {
		lead += ", stride int"
	}
	text(kvName(kind, e, w, heads), NOSPLIT, "func("+lead+", "+args+")")
	kvKernels = append(kvKernels, kvKernel{kind, e, w, heads})
}

// kvScores emits scores<E>[x2|x4]<W>: dst[i] = Σ_j k[i·d+j]·q[j] (times
// scales[i] for int8) for rows rows of d elements, d a positive multiple
// of the width's lanes; or, with heads 2 or 4, the same for that many
// queries d floats apart, dst[h·stride+i] for query h, reading each key
// row once for them all.
//
// Every (row, query) sum has one accumulator of the width's lanes, and a
// block of rows (8/16 for one query, 8 for two, 2/4 for four) fills the
// width's 8 or 16 accumulators, reduced together (reduceAcc8, reduceAcc16) to one
// vector of sums; rows past the last block are reduced one at a time in
// the same order, so a row's score depends neither on its neighbours nor
// on the other queries.
func kvScores(e kvElem, w width, heads int) {
	kvText("scores", e, w, heads, "dst *float32", "k *%s, q *float32, rows, d int", "k *int8, scales, q *float32, rows, d int")
	lanes := w.lanes()
	var scales Register
	if e.size == 1 {
		scales = RAX
		if heads > 1 {
			scales = R8
		}
	}
	loadArgs("dst stride k scales q rows d", R10, headStride(heads), RSI, scales, RDI, R11, R12)
	e.rowStride(R12, RBX)
	s := scoresKernel{w: w, heads: heads, step: lanes * e.size,
		count: func() { c.MOVQ(R12, RCX) },
		next:  func(loop string) { nextQueryCols(lanes, loop) },
	}
	if e.size == 1 {
		s.scaleBlock, s.scaleRow = int8Scales(w, heads, scales)
	}
	if heads == 1 {
		s.block = func(rowMem func(r int) Mem) {
			var qv Register = Y8
			temps := regs(ys[9:13])
			if w.wide() {
				qv, temps = Z24, regs(zs[16:24])
			}
			c.VMOVUPS(mem(R9, 0), qv)
			for r0 := 0; r0 < s.nacc(); r0 += len(temps) {
				for t := range temps {
					e.load1(rowMem(r0+t), temps[t])
				}
				for t := range temps {
					c.VFMADD231PS(qv, temps[t], w.vec(r0+t))
				}
			}
		}
		s.single = func() {
			var kt Register = Y9
			if w.wide() {
				kt = Z16
			}
			e.load1(mem(RSI, 0), kt)
			c.VFMADD231PS(mem(R9, 0), kt, w.vec(0))
		}
		s.emit()
		return
	}

	// Several queries: AX the dst stride in bytes, DX the query stride
	// (4·d) and R13 three of them; R14 (AVX-512) three key rows.
	rows := s.nacc() / heads
	queryStrides(heads)
	if w.wide() {
		c.LEAQ(memx(RBX, 0, RBX, 2), R14)
	}
	qm := func(h int) Mem {
		return []Mem{mem(R9, 0), memx(R9, 0, RDX, 1), memx(R9, 0, RDX, 2), memx(R9, 0, R13, 1)}[h]
	}
	s.block = func(rowMem func(r int) Mem) {
		// Two queries: Z16-Z17 the queries, Z18-Z25 the eight rows.
		kts, qts := []Register{Y8, Y9}, regs(ys[10:14])
		if w.wide() {
			kts, qts = regs(zs[16+heads:16+heads+rows]), regs(zs[16:16+heads])
		}
		var km []Mem
		for j := 0; j < rows; j++ {
			km = append(km, rowMem(j))
		}
		e.loadRows(false, km, kts)
		for h := 0; h < heads; h++ {
			c.VMOVUPS(qm(h), qts[h])
		}
		for h := 0; h < heads; h++ {
			for j := 0; j < rows; j++ {
				c.VFMADD231PS(qts[h], kts[j], w.vec(rows*h+j))
			}
		}
	}
	s.single = func() {
		kt := w.vec(8)
		e.load1(mem(RSI, 0), kt)
		for h := 0; h < heads; h++ {
			c.VFMADD231PS(qm(h), kt, w.vec(2*h))
		}
	}
	s.emit()
}

// int8Scales returns the int8 scores kernels' scaleBlock and scaleRow:
// the reduced scores times their rows' float32 scales at scales, which
// they step past. With several queries a block's scores hold each query's
// rows in a lane group of their own (AVX-512 two queries' eight rows in
// each 256-bit half, four queries' four in each 128-bit lane, AVX2 two in
// each 64-bit one), and the rows' scales are broadcast to every group.
func int8Scales(w width, heads int, scales Register) (block func(v Register, n int), row func()) {
	block = func(v Register, n int) {
		switch {
		case heads == 1:
			c.VMULPS(mem(scales, 0), v, v)
		case heads == 2:
			c.VBROADCASTF64X4(mem(scales, 0), Z31)
			c.VMULPS(Z31, v, v)
		case w.wide():
			c.VBROADCASTF32X4(mem(scales, 0), Z31)
			c.VMULPS(Z31, v, v)
		default:
			c.VBROADCASTSD(mem(scales, 0), Y3)
			c.VMULPS(Y3, v, v)
		}
		c.ADDQ(U8(n/heads), scales)
	}
	row = func() {
		switch {
		case heads == 1:
			c.VMULSS(mem(scales, 0), X0, X0)
		case w.wide():
			// The queries' scores in X0, X2, X4 and X6.
			c.VMOVSS(mem(scales, 0), X9)
			for h := 0; h < heads; h++ {
				c.VMULSS(X9, xs[2*h], xs[2*h])
			}
		default:
			// The four queries' scores in the lanes of X0; the last row,
			// so the scales need no step.
			c.VBROADCASTSS(mem(scales, 0), X3)
			c.VMULPS(X3, X0, X0)
			return
		}
		c.ADDQ(U8(4), scales)
	}
	return block, row
}

// kvValues emits values<E>[x2|x4]<W>: o[j] += Σ_i w[i]·v[i·d+j] (w[i]
// times scales[i] for int8), skipping rows whose weight is zero, d a
// positive multiple of the width's lanes; with heads 2 or 4, for that many
// weight vectors stride floats apart and outputs d floats apart, reading
// each value row once for them all. Every element of an output sums its rows in order
// with one FMA each, whatever the width or the heads, so the results are
// the same bits from every one of these kernels.
//
// One head, and several with AVX-512: columns go in chunks kept in
// registers over all rows (AVX2 64/32/8, AVX-512 128/64/16 of one or each
// of two heads, 64/32/16 of each of four), so o is loaded and stored once
// per chunk; the multi-head kernels mask each head's FMA by its weight
// being non-zero.
// Four heads with AVX2 accumulate in memory, two rows per load and store;
// a row whose weight is zero for some heads goes alone and leaves those
// untouched (VBLENDVPS).
func kvValues(e kvElem, w width, heads int) {
	kvText("values", e, w, heads, "o, w *float32", "v *%s, rows, d int", "v *int8, scales *float32, rows, d int")
	if heads == 4 && !w.wide() {
		kvValuesX4AVX2(e)
		return
	}
	lanes := w.lanes()
	var scales Register
	if e.size == 1 {
		scales = R12
	}
	loadArgs("o w stride v scales rows d", RDI, R10, headStride(heads), RSI, scales, R11, RDX)
	e.rowStride(RDX, RBX)
	chunks := []int{8 * lanes, 4 * lanes, lanes} // 64/32/8 or 128/64/16
	if heads > 1 {
		if heads == 4 {
			chunks = []int{4 * lanes, 2 * lanes, lanes}
		}
		if e.size == 1 {
			// (R9)(R12*1) is the scale of the row whose weight is at R9.
			c.SUBQ(R10, R12)
		}
		valuesX4Strides()
		jumpIfZero(RDX, "done")
		c.CMPQ(R10, R11)
		c.JEQ(ref("done"))
	}
	s := valuesKernel{w: w, heads: heads, chunks: chunks, scaled: e.size == 1,
		rowBytes: func(n int) int { return n * e.size }}
	if heads > 1 {
		s.headAccs = 16 / heads
	}
	temps := regs(ys[8:12])
	if w.wide() {
		temps = regs(zs[16:24])
	}
	s.row = func(n int, a Register, acc func(h, i int) Register) {
		nacc := n / lanes
		if heads == 1 {
			for g := 0; g < nacc; g += len(temps) {
				k := min(len(temps), nacc-g)
				for t := 0; t < k; t++ {
					e.load1(mem(R8, (g+t)*lanes*e.size), temps[t])
				}
				for t := 0; t < k; t++ {
					c.VFMADD231PS(a, temps[t], acc(0, g+t))
				}
			}
			return
		}
		for i := 0; i < nacc; i++ {
			e.load1(mem(R13, i*lanes*e.size), zr(20+i))
		}
		for h, k := range valuesMasks[:heads] {
			for i := 0; i < nacc; i++ {
				c.VFMADD231PS(zr(16+h), zr(20+i), k, acc(h, i))
			}
		}
	}
	s.emit()
}

// kvValuesX4AVX2 is kvValues for four heads with AVX2: Y8-Y15 the weights
// of a pair of rows, Y6 zero, DX the output stride (4·d), R13 three of
// them, R12 the end of output 0, R8 three weight strides; scales (int8)
// in CX.
func kvValuesX4AVX2(e kvElem) {
	var scales Register
	if e.size == 1 {
		scales = RCX
	}
	loadArgs("o w stride v scales rows d", RDI, R10, RAX, RSI, scales, R11, RDX)
	e.rowStride(RDX, RBX)
	c.SHLQ(U8(2), RAX)
	c.LEAQ(memx(RAX, 0, RAX, 2), R8)
	c.SHLQ(U8(2), RDX)
	c.LEAQ(memx(RDX, 0, RDX, 2), R13)
	c.LEAQ(memx(RDI, 0, RDX, 1), R12)
	c.VXORPS(Y6, Y6, Y6)
	outs := func(base Register) []Mem {
		return []Mem{mem(base, 0), memx(base, 0, RDX, 1), memx(base, 0, RDX, 2), memx(base, 0, R13, 1)}
	}
	ws := func(off int) []Mem {
		return []Mem{mem(R10, off), memx(R10, off, RAX, 1), memx(R10, off, RAX, 2), memx(R10, off, R8, 1)}
	}
	step := 8 * e.size
	// addOuts loads the four outputs' 8 columns at R9 into dsts, lets add
	// accumulate into them and stores them back.
	addOuts := func(dsts []Register, add func()) {
		for h, m := range outs(R9) {
			c.VMOVUPS(m, dsts[h])
		}
		add()
		for h, m := range outs(R9) {
			c.VMOVUPS(dsts[h], m)
		}
	}

	label("pair")
	c.CMPQ(R11, U8(2))
	c.JLT(ref("row"))
	// Y(8+2h) and Y(9+2h): the weights of rows 0 and 1 for head h.
	for h := 0; h < 4; h++ {
		c.VBROADCASTSS(ws(0)[h], yr(8+2*h))
		c.VBROADCASTSS(ws(4)[h], yr(9+2*h))
	}
	if e.size == 1 {
		c.VBROADCASTSS(mem(RCX, 0), Y0)
		c.VBROADCASTSS(mem(RCX, 4), Y1)
		for i := 8; i < 16; i++ {
			c.VMULPS(yr(i%2), yr(i), yr(i))
		}
	}
	// All eight weights non-zero, or take the rows one at a time.
	lanes4(X0, X8, X10, X12, X14, X1)
	lanes4(X2, X9, X11, X13, X15, X3)
	c.VINSERTF128(U8(1), X2, Y0, Y0)
	allNonZero(Y0, Y6, U32(0xff), "row", "full2")
	e.loadRows(false, []Mem{mem(RSI, 0), memx(RSI, 0, RBX, 1)}, []Register{Y0, Y1})
	addOuts(regs(ys[2:6]), func() {
		for j := 0; j < 2; j++ {
			for h := 0; h < 4; h++ {
				c.VFMADD231PS(yr(8+2*h+j), yr(j), yr(2+h))
			}
		}
	})
	c.ADDQ(U8(step), RSI)
	c.ADDQ(U8(32), R9)
	c.CMPQ(R9, R12)
	c.JNE(ref("full2"))
	c.ADDQ(RBX, RSI)
	c.ADDQ(U8(8), R10)
	if e.size == 1 {
		c.ADDQ(U8(8), RCX)
	}
	c.SUBQ(U8(2), R11)
	c.JMP(ref("pair"))

	label("row")
	jumpIfZero(R11, "done")
	for h := 0; h < 4; h++ {
		c.VBROADCASTSS(ws(0)[h], yr(12+h))
	}
	if e.size == 1 {
		c.VBROADCASTSS(mem(RCX, 0), Y11)
		for h := 0; h < 4; h++ {
			c.VMULPS(Y11, yr(12+h), yr(12+h))
		}
		c.ADDQ(U8(4), RCX)
	}
	c.ADDQ(U8(4), R10)
	c.DECQ(R11)
	lanes4(X9, X12, X13, X14, X15, X10)
	allNonZero(X9, X6, U8(15), "partial", "full")
	e.load1(mem(RSI, 0), Y8)
	dsts := []Register{Y9, Y10, Y11, Y7}
	addOuts(dsts, func() {
		for h := 0; h < 4; h++ {
			c.VFMADD231PS(yr(12+h), Y8, dsts[h])
		}
	})
	nextOuts(step, "full")

	label("partial")
	c.TESTL(R9L, R9L)
	c.JEQ(ref("skip"))
	for h := 0; h < 4; h++ {
		c.VCMPPS(U8(4), Y6, yr(12+h), yr(h))
	}
	c.MOVQ(RDI, R9)
	label("blend")
	e.load1(mem(RSI, 0), Y8)
	for h, m := range outs(R9) {
		c.VMOVUPS(m, Y9)
		c.VMOVAPS(Y9, Y10)
		c.VFMADD231PS(yr(12+h), Y8, Y10)
		c.VBLENDVPS(yr(h), Y10, Y9, Y9)
		c.VMOVUPS(Y9, m)
	}
	nextOuts(step, "blend")
	label("skip")
	c.ADDQ(RBX, RSI)
	c.JMP(ref("pair"))
	label("done")
	retVoid()
}

// allNonZero goes to some unless every lane of the weights in v differs
// from zero (z), all being the mask of the lanes, and leaves that mask of
// v in R9L; else it opens the loop over the columns loop, R9 walking the
// outputs from RDI.
func allNonZero(v, z Register, all Op, some, loop string) {
	c.VCMPPS(U8(4), z, v, v)
	c.VMOVMSKPS(v, R9L)
	c.CMPL(R9L, all)
	c.JNE(ref(some))
	c.MOVQ(RDI, R9)
	label(loop)
}

// lanes4 gathers lane 0 of X registers a, b, cc and d into the lanes of
// dst, t scratch.
func lanes4(dst, a, b, cc, d, t Register) {
	c.VUNPCKLPS(b, a, dst)
	c.VUNPCKLPS(d, cc, t)
	c.VMOVLHPS(t, dst, dst)
}

// nextOuts steps the AVX2 four-head values kernel to the next 8 columns
// (step bytes of the value row at RSI, 32 of each output at R9, R12 the
// end), looping to loop and then on to the next pair of rows.
func nextOuts(step int, loop string) {
	c.ADDQ(U8(step), RSI)
	c.ADDQ(U8(32), R9)
	c.CMPQ(R9, R12)
	c.JNE(ref(loop))
	c.JMP(ref("pair"))
}

// expfConsts is the table of the float32 exponential (softmax.Expf, whose
// constants these are, bit for bit), eight copies of each (a Y register's
// worth, which the AVX2 forms read whole and the AVX-512 ones broadcast):
// the floor ln(2⁻¹²⁶), log2(e), ln2 in two parts, 1/7! … 1/0!, and the
// exponent bias 127.
func expfConsts() Mem {
	cs := []uint32{
		0xc2aeac4f, // -87.33654, softmax.ExpfFloor
		0x3fb8aa3b, // log2(e)
		0x3f318000, // ln2, high part: 0.693359375
		0xb95e8083, // ln2, low part: -2.12194440e-4
		0x39500d01, // 1/7!
		0x3ab60b61, // 1/6!
		0x3c088889, // 1/5!
		0x3d2aaaab, // 1/4!
		0x3e2aaaab, // 1/3!
		0x3f000000, // 1/2!
		0x3f800000, // 1/1!
		0x3f800000, // 1/0!
		127,        // bias
	}
	return table32("expfC", copies8(cs)...)
}

// copies8 repeats each word of cs eight times, a Y register's worth, for
// the constant tables that AVX2 forms read whole and AVX-512 ones
// broadcast.
func copies8(cs []uint32) []uint32 {
	var w []uint32
	for _, x := range cs {
		for range 8 {
			w = append(w, x)
		}
	}
	return w
}

// Offsets in expfConsts.
const (
	expfFloor = 32 * iota
	expfLog2e
	expfLn2Hi
	expfLn2Lo
	expfC7
	expfBias = expfC7 + 32*8
)

// expInPlace replaces the floats at RDI, a register of xs each, by
// exp(f − peak) (expPS; every lane of peak the maximum), leaving them in ps
// too.
func expInPlace(xs, ts, ms, ps []Register, peak, floor Register, wide bool) {
	for i, x := range xs {
		c.VMOVUPS(mem(RDI, int(x.Size())*i), x)
		c.VSUBPS(peak, x, x)
	}
	expPS(xs, ts, ms, ps, floor, wide)
	for i, p := range ps {
		c.VMOVUPS(p, mem(RDI, int(p.Size())*i))
	}
}

// expPS sets ps[i] to softmax.Expf(xs[i]) lane by lane, in its order of
// float32 operations (no fused multiply-add, which the Go twin cannot
// round alike): clamp to the floor (x second, so NaN stays NaN), n =
// x·log2e rounded to even, r = (x − n·ln2hi) − n·ln2lo, the polynomial by
// Horner's rule, times 2ⁿ built in the exponent bits; lanes below the
// floor become 0. The chains are interleaved, as the polynomial is a long
// dependent sequence. ts and ms are scratch (ms the masks: K registers
// for AVX-512's Z registers, vectors otherwise); floor holds the floor in
// every lane. xs is clobbered.
func expPS(xs, ts, ms, ps []Register, floor Register, wide bool) {
	k := expfConsts()
	each := func(f func(i int)) {
		for i := range xs {
			f(i)
		}
	}
	op := func(narrow, bcst func(...Op)) func(off int, ops ...Op) {
		f := narrow
		if wide {
			f = bcst
		}
		return func(off int, ops ...Op) { f(append([]Op{k.Offset(off)}, ops...)...) }
	}
	mul := op(c.VMULPS, c.VMULPS_BCST)
	add := op(c.VADDPS, c.VADDPS_BCST)
	addd := op(c.VPADDD, c.VPADDD_BCST)
	if wide {
		each(func(i int) { c.VCMPPS(U8(5), floor, xs[i], ms[i]) }) // not x < floor: NaN too
	} else {
		each(func(i int) { c.VCMPPS(U8(1), floor, xs[i], ms[i]) }) // x < floor
	}
	each(func(i int) { c.VMAXPS(xs[i], floor, xs[i]) })
	each(func(i int) { mul(expfLog2e, xs[i], ts[i]) })
	if wide {
		each(func(i int) { c.VRNDSCALEPS(U8(0), ts[i], ts[i]) })
	} else {
		each(func(i int) { c.VROUNDPS(U8(0), ts[i], ts[i]) })
	}
	each(func(i int) { mul(expfLn2Hi, ts[i], ps[i]) })
	each(func(i int) { c.VSUBPS(ps[i], xs[i], xs[i]) })
	each(func(i int) { mul(expfLn2Lo, ts[i], ps[i]) })
	each(func(i int) { c.VSUBPS(ps[i], xs[i], xs[i]) })
	each(func(i int) { mul(expfC7, xs[i], ps[i]) })
	for j := 1; j < 8; j++ {
		if j > 1 {
			each(func(i int) { c.VMULPS(xs[i], ps[i], ps[i]) })
		}
		each(func(i int) { add(expfC7+32*j, ps[i], ps[i]) })
	}
	each(func(i int) { c.VCVTPS2DQ(ts[i], ts[i]) })
	each(func(i int) { addd(expfBias, ts[i], ts[i]) })
	each(func(i int) { c.VPSLLD(U8(23), ts[i], ts[i]) })
	if wide {
		each(func(i int) { c.VMULPS_Z(ts[i], ps[i], ms[i], ps[i]) })
		return
	}
	each(func(i int) { c.VMULPS(ts[i], ps[i], ps[i]) })
	each(func(i int) { c.VANDNPS(ps[i], ms[i], ps[i]) })
}

// kvSoftmax emits softmax<W>(s *float32, n int, scale float32, round16
// bool), the three passes of softmaxGeneric: scale and take the maximum;
// exp of the difference (in float64, rounded to float32) summed in
// float64; multiply by the float32 reciprocal of the sum, rounding to F16
// with VCVTPS2PH (to nearest even, as roundFP16). The AVX-512 kernel runs
// 16 (32 for exp) elements at a time first and leaves the rest to the
// AVX2 loops.
func kvSoftmax(w width) {
	text("softmax"+w.suffix(), NOSPLIT, "func(s *float32, n int, scale float32, round16 bool)")
	loadArgs("s n", RSI, RCX)
	c.VBROADCASTSS(param("scale"), Y15)
	ninf := table32("negInf", 0xff800000)
	c.VBROADCASTSS(ninf, Y0)
	c.VMOVAPS(Y0, Y1)
	c.MOVQ(RSI, RDI)
	c.MOVQ(RCX, RDX)
	if w.wide() {
		c.VBROADCASTSS(param("scale"), Z16)
		c.VBROADCASTSS(ninf, Z17)
		chunkLoop("zmax", "zmaxdone", 16, func() {
			c.VMULPS(mem(RDI, 0), Z16, Z18)
			c.VMOVUPS(Z18, mem(RDI, 0))
			c.VMAXPS(Z18, Z17, Z17)
		})
		label("zmaxdone")
		c.VEXTRACTF64X4(U8(1), Z17, Y18)
		c.VMAXPS(Y18, Y17, Y17)
		c.VMAXPS(Y17, Y0, Y0)
	}
	chunkLoop("max16", "max8", 16, func() {
		c.VMULPS(mem(RDI, 0), Y15, Y2)
		c.VMULPS(mem(RDI, 32), Y15, Y3)
		c.VMOVUPS(Y2, mem(RDI, 0))
		c.VMOVUPS(Y3, mem(RDI, 32))
		c.VMAXPS(Y2, Y0, Y0)
		c.VMAXPS(Y3, Y1, Y1)
	})
	label("max8")
	c.CMPQ(RDX, U8(8))
	c.JLT(ref("maxreduce"))
	c.VMULPS(mem(RDI, 0), Y15, Y2)
	c.VMOVUPS(Y2, mem(RDI, 0))
	c.VMAXPS(Y2, Y0, Y0)
	c.ADDQ(U8(32), RDI)
	c.SUBQ(U8(8), RDX)
	label("maxreduce")
	c.VMAXPS(Y1, Y0, Y0)
	hreduce(Y0, X1, c.VMAXPS, c.VMAXSS)
	chunkLoop("max1", "exp", 1, func() {
		c.VMULSS(mem(RDI, 0), X15, X2)
		c.VMOVSS(X2, mem(RDI, 0))
		c.VMAXSS(X2, X0, X0)
	})

	label("exp")
	k := expfConsts()
	c.VBROADCASTSS(X0, Y14)
	c.VMOVUPS(k.Offset(expfFloor), Y13)
	c.VXORPD(Y12, Y12, Y12)
	c.VXORPD(Y15, Y15, Y15)
	c.MOVQ(RSI, RDI)
	c.MOVQ(RCX, RDX)
	// The exponentials are stored as float32 and summed in float64, in
	// groups of 4 (AVX2) or 8 (AVX-512) into two accumulators by turns,
	// the order of the float64 kernel this replaced.
	if w.wide() {
		c.VBROADCASTSS(X0, Z17)
		c.VBROADCASTSS(k.Offset(expfFloor), Z16)
		c.VPXORQ(Z30, Z30, Z30)
		c.VPXORQ(Z31, Z31, Z31)
		chunkLoop("zexp", "zexpdone", 32, func() {
			pz := regs(zs[24:26])
			expInPlace(regs(zs[18:20]), regs(zs[20:22]), []Register{K1, K2}, pz, Z17, Z16, true)
			for i, z := range pz {
				lo, hi := zs[26+2*i], zs[27+2*i]
				c.VCVTPS2PD(asY(z), lo)
				c.VEXTRACTF32X8(U8(1), z, asY(hi))
				c.VCVTPS2PD(asY(hi), hi)
				c.VADDPD(lo, Z30, Z30)
				c.VADDPD(hi, Z31, Z31)
			}
		})
		label("zexpdone")
		c.VADDPD(Z31, Z30, Z30)
		c.VEXTRACTF64X4(U8(1), Z30, Y31)
		c.VADDPD(Y31, Y30, Y12)
	}
	chunkLoop("exp16", "exp4", 16, func() {
		py := regs(ys[6:8])
		expInPlace(regs(ys[0:2]), regs(ys[2:4]), regs(ys[4:6]), py, Y14, Y13, false)
		for i, y := range py {
			lo, hi := ys[8+2*i], ys[9+2*i]
			c.VEXTRACTF128(U8(1), y, asX(hi))
			c.VCVTPS2PD(asX(y), lo)
			c.VCVTPS2PD(asX(hi), hi)
			c.VADDPD(lo, Y12, Y12)
			c.VADDPD(hi, Y15, Y15)
		}
	})

	label("exp4")
	c.VADDPD(Y15, Y12, Y12)
	c.VXORPD(X15, X15, X15)
	// Four at a time, then one: the same operations on X registers.
	tail := func(load, store func(x Register)) {
		load(X0)
		c.VSUBPS(X14, X0, X0)
		expPS([]Register{X0}, []Register{X2}, []Register{X4}, []Register{X8}, X13, false)
		store(X8)
	}
	chunkLoop("exp4loop", "exp1", 4, func() {
		tail(func(x Register) { c.VMOVUPS(mem(RDI, 0), x) }, func(x Register) { c.VMOVUPS(x, mem(RDI, 0)) })
		c.VCVTPS2PD(X8, Y8)
		c.VADDPD(Y8, Y12, Y12)
	})
	chunkLoop("exp1", "sum", 1, func() {
		tail(func(x Register) { c.VMOVSS(mem(RDI, 0), x) }, func(x Register) { c.VMOVSS(x, mem(RDI, 0)) })
		c.VCVTSS2SD(X8, X8, X8)
		c.VADDSD(X8, X15, X15)
	})

	label("sum")
	c.VEXTRACTF128(U8(1), Y12, X9)
	c.VADDPD(X12, X9, X9)
	c.VPERMILPD(U8(1), X9, X10)
	c.VADDSD(X10, X9, X9)
	c.VADDSD(X15, X9, X9)
	c.VMOVSD(table("one64", 0x3ff0000000000000), X10)
	c.VDIVSD(X9, X10, X10)
	c.VCVTSD2SS(X10, X10, X10)
	c.VBROADCASTSS(X10, Y15)
	c.MOVQ(RSI, RDI)
	c.MOVQ(RCX, RDX)
	c.MOVBLZX(param("round16"), EAX)
	norm := "norm8"
	if w.wide() {
		c.VBROADCASTSS(X10, Z16)
		norm = "znorm"
	}
	c.TESTL(EAX, EAX)
	c.JEQ(ref(norm))
	if w.wide() {
		for _, round := range []bool{true, false} {
			name, next := "zround", "round8"
			if !round {
				name, next = "znorm", "norm8"
			}
			scaleLoop(name, next, 16, Z16, Z18, Y18, round)
		}
	}
	for _, round := range []bool{true, false} {
		n8, n1 := "round8", "round1"
		if !round {
			n8, n1 = "norm8", "norm1"
		}
		scaleLoop(n8, n1, 8, Y15, Y0, X0, round)
		scaleLoop(n1, "done", 1, X15, X0, X0, round)
	}
	label("done")
	retVoid()
}

// scaleLoop emits the loop name of the softmax's last pass: n floats at a
// time at RDI (RDX of them left; fewer than n go on at next) times f, in
// v, rounded through F16 (in h, v's half) when round.
func scaleLoop(name, next string, n int, f, v, h Register, round bool) {
	chunkLoop(name, next, n, func() {
		if n == 1 {
			c.VMULSS(mem(RDI, 0), f, v)
		} else {
			c.VMULPS(mem(RDI, 0), f, v)
		}
		if round {
			c.VCVTPS2PH(U8(0), v, h)
			c.VCVTPH2PS(h, v)
		}
		if n == 1 {
			c.VMOVSS(v, mem(RDI, 0))
		} else {
			c.VMOVUPS(v, mem(RDI, 0))
		}
	})
}

// chunkLoop emits the loop name over the floats at RDI, RDX of them left:
// body takes n of them a pass, and fewer than n go on at next.
func chunkLoop(name, next string, n int, body func()) {
	label(name)
	if n == 1 {
		jumpIfZero(RDX, next)
	} else {
		c.CMPQ(RDX, U8(n))
		c.JLT(ref(next))
	}
	body()
	if n == 1 {
		c.ADDQ(U8(4), RDI)
		c.DECQ(RDX)
	} else {
		c.ADDQ(U8(4*n), RDI)
		c.SUBQ(U8(n), RDX)
	}
	c.JMP(ref(name))
}

// regs converts vector registers to Registers.
func regs(v []VecPhysical) []Register {
	r := make([]Register, len(v))
	for i, x := range v {
		r[i] = x
	}
	return r
}
