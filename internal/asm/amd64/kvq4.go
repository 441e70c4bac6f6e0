package main

import (
	"math"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The Int4 attention kernels: rows of q4_0 blocks (an F16 scale d, then 16
// bytes of codes, byte j holding element j in its low nibble and j+16 in
// its high one; the element is d·(c−8)), read in place, the twins of
// kv/kernels_int4.go.
//
// A block's codes become float32 c−8 exactly: with AVX-512 VPMOVZXBD
// widens the 16 bytes to dwords and VPERMPS looks both nibbles up in a
// table of −8…7 (it reads only an index's low four bits, so the low
// nibble needs no mask); with AVX2, whose VPERMPS has eight entries, the
// nibbles are masked, converted and less 8.0. Scores: a block's products
// with the query are summed in one vector (a multiply, then FMAs, in
// element order) and added to the row's accumulator times the block's d
// (an FMA), rows reduced as kvScores reduces them, so the multi-head
// kernels give each head the bits of the one-head kernel of their width.
// Values: each element adds (w·d)·(c−8) with one FMA per row, in row
// order, w·d rounded to float32 as the twin does: the same bits from
// every value kernel, whatever the width and the heads.

// kvQ4Files is the file of the Int4 kernels.
func kvQ4Files() outFile {
	return outFile{"int4", func() {
		for _, w := range []width{avx2, avx512} {
			for _, heads := range kvHeads(w) {
				kvQ4Scores(w, heads)
			}
			kvQ4Values(w, 1)
		}
		kvQ4Values(avx512, 2)
		kvQ4Values(avx512, 4)
	}}
}

// kvQ4 names the Int4 kernels and types their rows for kvText (its size
// is no element size: the blocks are read by q4Decode); kv's rows are
// bytes, whole blocks of q4Block elements.
var kvQ4 = kvElem{name: "Q4", goType: "byte", goRow: "q4RowBytes(d)", goSkip: "d%q4Block != 0"}

// q4Levels is the VPERMPS table of the AVX-512 kernels: c−8 for c < 16.
func q4Levels() Mem {
	d := make([]uint32, 16)
	for i := range d {
		d[i] = math.Float32bits(float32(i - 8))
	}
	return dwordsTable("q4Levels", d)
}

// q4Consts are the AVX2 kernels' constants: dwords 15, and 8.0.
func q4Mask() Mem  { return table32("q4Mask", 15) }
func q4Eight() Mem { return table32("q4Eight", math.Float32bits(8)) }

// q4Regs are the constants q4Decode needs: the AVX-512 VPERMPS table, or
// the AVX2 dwords 15 and floats 8.0.
type q4Regs struct{ tab, mask, eight Register }

// load fills the registers.
func (k q4Regs) load() {
	if k.tab != nil {
		c.VMOVDQU64(q4Levels(), k.tab)
		return
	}
	c.VPBROADCASTD(q4Mask(), k.mask)
	c.VBROADCASTSS(q4Eight(), k.eight)
}

// q4Decode widens the block at m (its d at m, codes at m+2) into float32
// c−8, in element order: AVX-512 lo, hi (16 each) in vs[0:2], AVX2 8 each
// in vs[0:4]; its d, broadcast, in dsc.
func q4Decode(w width, m Mem, vs []Register, dsc Register, k q4Regs) {
	if w.wide() {
		lo, hi := vs[0], vs[1]
		c.VPMOVZXBD(m.Offset(2), lo)
		c.VPSRLD(U8(4), lo, hi)
		c.VPERMPS(k.tab, lo, lo)
		c.VPERMPS(k.tab, hi, hi)
		c.VPBROADCASTW(m, asY(dsc))
		c.VCVTPH2PS(asY(dsc), dsc)
		return
	}
	l0, l1, h0, h1 := vs[0], vs[1], vs[2], vs[3]
	c.VPMOVZXBD(m.Offset(2), l0)
	c.VPMOVZXBD(m.Offset(10), l1)
	c.VPSRLD(U8(4), l0, h0)
	c.VPSRLD(U8(4), l1, h1)
	c.VPAND(k.mask, l0, l0)
	c.VPAND(k.mask, l1, l1)
	for _, v := range vs[:4] {
		c.VCVTDQ2PS(v, v)
		c.VSUBPS(k.eight, v, v)
	}
	c.VPBROADCASTW(m, asX(dsc))
	c.VCVTPH2PS(asX(dsc), dsc)
}

// q4Block adds d·Σ (c−8)·q over a decoded block (vs, dsc) to acc, the
// block's sum in t: a multiply, then FMAs in element order. q is the
// block's query floats (one operand per vector of vs).
func q4Block(w width, vs []Register, q []Op, dsc, t, acc Register) {
	n := 2
	if !w.wide() {
		n = 4
	}
	c.VMULPS(q[0], vs[0], t)
	for i := 1; i < n; i++ {
		c.VFMADD231PS(q[i], vs[i], t)
	}
	c.VFMADD231PS(dsc, t, acc)
}

// q4Query is the query operands of the block at base+off (AVX2 8 floats
// each, AVX-512 16).
func q4Query(w width, base Register, index Register, off int) []Op {
	var q []Op
	n, step := 4, 32
	if w.wide() {
		n, step = 2, 64
	}
	for i := 0; i < n; i++ {
		if index != nil {
			q = append(q, memx(base, off+step*i, index, 1))
		} else {
			q = append(q, mem(base, off+step*i))
		}
	}
	return q
}

// q4RowBytes sets r to the bytes of a row of d (in d) elements: d/32
// blocks of 18 bytes.
func q4RowBytes(d, r Register) {
	c.MOVQ(d, r)
	c.SHRQ(U8(5), r)
	c.IMUL3Q(U32(18), r, r)
}

// kvQ4Scores emits scoresQ4[x2|x4]<W>: dst[i] = Σ_b d_b·Σ_j (c_bj−8)·q_bj
// for rows rows of d elements (d a positive multiple of 32), or with heads
// 2 (AVX-512) or 4 for that many queries d floats apart, dst[h·stride+i],
// each key row read and decoded once for them all. Rows go in groups of 8
// (AVX2) or 16 (AVX-512) for one query, 8 for two, 2 or 4 for four, each
// (row, query) with its accumulator,
// reduced as kvScores does (reduceAcc8, reduceAcc16); the rows after the
// last group one at a time, reduced in the same order.
func kvQ4Scores(w width, heads int) {
	kvText("scores", kvQ4, w, heads, "dst *float32", "k *%s, q *float32, rows, d int", "")
	loadArgs("dst stride k q rows d", R10, headStride(heads), RSI, RDI, R11, R12)
	q4RowBytes(R12, RBX)
	// AVX-512: the table in Z18 (Z24 for several heads); AVX2: Y14, Y15.
	k := q4Regs{mask: Y14, eight: Y15}
	if w.wide() {
		k = q4Regs{tab: Z18}
		if heads > 1 {
			k.tab = Z24
		}
	}
	k.load()
	s := scoresKernel{w: w, heads: heads, step: 18,
		// CX counts the blocks of a row.
		count: func() {
			c.MOVQ(R12, RCX)
			c.SHRQ(U8(5), RCX)
		},
		next: func(loop string) {
			c.ADDQ(U32(128), R9)
			decJNZ(RCX, loop)
		},
	}
	if heads == 1 {
		s.block = func(rowMem func(r int) Mem) {
			if w.wide() {
				c.VMOVUPS(mem(R9, 0), Z16)
				c.VMOVUPS(mem(R9, 64), Z17)
				for r := 0; r < s.nacc(); r++ {
					// Four rows' temporaries in rotation: Z19-Z30.
					t := 19 + 3*(r%4)
					vs := []Register{zr(t), zr(t + 1)}
					q4Decode(w, rowMem(r), vs, zr(t+2), k)
					q4Block(w, vs, []Op{Z16, Z17}, zr(t+2), vs[0], zr(r))
				}
				return
			}
			q := q4Query(w, R9, nil, 0)
			for r := 0; r < s.nacc(); r++ {
				vs := regs(ys[8:12])
				q4Decode(w, rowMem(r), vs, Y12, k)
				q4Block(w, vs, q, Y12, Y13, yr(r))
			}
		}
		s.single = func() {
			vs, dsc, t := regs(ys[8:12]), Register(Y12), Register(Y13)
			if w.wide() {
				vs, dsc, t = []Register{Z19, Z20}, Z21, Z19
			}
			q4Decode(w, mem(RSI, 0), vs, dsc, k)
			q4Block(w, vs, q4Query(w, R9, nil, 0), dsc, t, w.vec(0))
		}
		s.emit()
		return
	}

	// Several queries: AX the dst stride in bytes, DX the query stride
	// (4·d) and R13 three of them; R14 three key rows. Accumulator of head
	// h and row j: vec(rows·h+j).
	rows := s.nacc() / heads
	queryStrides(heads)
	c.LEAQ(memx(RBX, 0, RBX, 2), R14)
	query := func(h int) []Op {
		if h == 2 {
			// R9 + 2·DX: as a scaled index.
			n, step := 4, 32
			if w.wide() {
				n, step = 2, 64
			}
			var q []Op
			for i := 0; i < n; i++ {
				q = append(q, memx(R9, step*i, RDX, 2))
			}
			return q
		}
		return q4Query(w, R9, []Register{nil, RDX, nil, R13}[h], 0)
	}
	// A row's decoded block and d, and the scratch of a head's block sum.
	vs, dsc := regs(ys[8:12]), Register(Y12)
	t := func(int) Register { return Y13 }
	if w.wide() {
		vs, dsc = []Register{Z25, Z26}, Z27
		t = func(h int) Register { return zr(28 + h) }
	}
	s.block = func(rowMem func(r int) Mem) {
		if w.wide() {
			// Z16-Z23 the queries' blocks, Z25-Z27 a row's, Z28-Z31 the
			// heads' block sums.
			for h := 0; h < heads; h++ {
				q := query(h)
				c.VMOVUPS(q[0], zr(16+2*h))
				c.VMOVUPS(q[1], zr(17+2*h))
			}
		}
		for j := 0; j < rows; j++ {
			q4Decode(w, rowMem(j), vs, dsc, k)
			for h := 0; h < heads; h++ {
				q := []Op{zr(16 + 2*h), zr(17 + 2*h)}
				if !w.wide() {
					q = query(h)
				}
				q4Block(w, vs, q, dsc, t(h), w.vec(rows*h+j))
			}
		}
	}
	s.single = func() {
		q4Decode(w, mem(RSI, 0), vs, dsc, k)
		for h := 0; h < heads; h++ {
			q4Block(w, vs, query(h), dsc, t(h), w.vec(2*h))
		}
	}
	s.emit()
}

// kvQ4Values emits valuesQ4[x2|x4]<W>: o[j] += Σ_i (w[i]·d_ib)·(c_ij−8),
// skipping rows whose weight is zero, for rows of d elements (d a positive
// multiple of 32); with heads 2 or 4 (AVX-512), for that many weight
// vectors stride floats apart and outputs d floats apart, each row decoded
// once for them all, each head's FMAs masked by its weight being non-zero.
// Columns go in chunks of blocks kept in registers over all rows: AVX2 2
// and 1 blocks (64, 32 columns), AVX-512 4, 2 and 1 of one head or of each
// of two, 2 and 1 of each of four.
func kvQ4Values(w width, heads int) {
	kvText("values", kvQ4, w, heads, "o, w *float32", "v *%s, rows, d int", "")
	loadArgs("o w stride v rows d", RDI, R10, headStride(heads), RSI, R11, RDX)
	q4RowBytes(RDX, RBX)
	chunks := []int{64, 32} // 2 and 1 blocks
	if w.wide() {
		chunks = []int{128, 64, 32}
		if heads == 4 {
			chunks = []int{64, 32}
		}
	}
	k := q4Regs{mask: Y13, eight: Y14}
	if w.wide() {
		k = q4Regs{tab: Z30}
	}
	k.load()
	if heads > 1 {
		valuesX4Strides()
		c.CMPQ(R10, R11)
		c.JEQ(ref("done"))
	}
	s := valuesKernel{w: w, heads: heads, chunks: chunks,
		rowBytes: func(n int) int { return 18 * n / 32 }}
	s.row = func(n int, a Register, acc func(h, i int) Register) {
		for b := 0; b < n/32; b++ {
			switch {
			case heads > 1:
				// Z20-Z25 two blocks' codes and d (in turn, for four
				// blocks), Z26-Z29 the heads' w·d.
				t := 20 + 3*(b%2)
				vs := []Register{zr(t), zr(t + 1)}
				q4Decode(w, mem(R13, 18*b), vs, zr(t+2), k)
				for h, m := range valuesMasks[:heads] {
					c.VMULPS(zr(16+h), zr(t+2), zr(26+h))
					for i := 0; i < 2; i++ {
						c.VFMADD231PS(zr(26+h), vs[i], m, acc(h, 2*b+i))
					}
				}
				continue
			case w.wide():
				// Z16-Z27: three registers' temporaries per block.
				t := 16 + 3*b
				vs := []Register{zr(t), zr(t + 1)}
				q4Decode(w, mem(R8, 18*b), vs, zr(t+2), k)
				c.VMULPS(a, zr(t+2), zr(t+2))
				for i := 0; i < 2; i++ {
					c.VFMADD231PS(zr(t+2), vs[i], acc(0, 2*b+i))
				}
			default:
				vs := regs(ys[8:12])
				q4Decode(w, mem(R8, 18*b), vs, Y12, k)
				c.VMULPS(a, Y12, Y12)
				for i := 0; i < 4; i++ {
					c.VFMADD231PS(Y12, vs[i], acc(0, 4*b+i))
				}
			}
		}
	}
	s.emit()
}
