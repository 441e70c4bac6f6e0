package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// tileSuper emits the tile kernel of a k-quant (Q4_K, Q5_K, Q6_K) for a width
// and a number of columns. One super-block per iteration; the loop ends
// when row 0 reaches its end, kept on the stack.
//
// VNNI (4×1, 4×4): each row's quants are unpacked once, unsigned, into
// four registers of 64 elements (Z16-Z19) and its scales spread to words
// (Z20-Z23), both reused for every column: VPMADDUBSW then VPDPWSSD with
// the scales give Σ sc·q·y in 16 dwords. Q4_K: the four rows' scales and
// mins are unpacked together, one row per 128-bit lane (Z28), the mins as
// words in Y24 face the block sums, and d·y.d, dmin·y.d of every (row,
// column) go to the stack. Q6_K: the -32 is taken off as 32·Σ sc·bsums
// (the scales as words in Y24), and d·y.d goes to the stack. Z0-Z15
// accumulators (row r, column c in Z(4r+c)), Z25-Z27 scratch. The 4×1
// kernel keeps its tables and the column in Z4-Z15.
//
// AVX2 (4×1): each row's super-block as in the dot product; Q5_K's qh
// in Y4, bytes 0x10 in Y5, a chunk's fifth bits in Y6/Y7.
func tileSuper(t *superType, w width, cols int) {
	text(tileName(t.name, w, cols), NOSPLIT, tileSig)
	facBytes := 32 // per column: (d, dmin) of four rows
	if t.six {
		facBytes = 16
	}
	stack := c.AllocLocal(4*facBytes + 8)
	end := stack.Offset(4 * facBytes)
	tileRows()
	rowEnd(t.wb, end)
	if w == avx2 {
		tileSuperAVX2(t, stack, end)
		return
	}
	if !t.six {
		// K2: the low eight lanes, where the mins' sums are (AVX-512
		// only: a KMOVW in the AVX2 kernel faults on CPUs without it).
		kmask(0xFF, K2)
	}
	dist := R10
	if cols > 1 {
		dist = R12
	}
	prefetchDist(dist, cols)
	tileCols(cols)
	var sc [4]Op
	var mn, shift, nib Op
	if t.six {
		c.VMOVDQU64(q6Shifts(true), Z28)
		c.VMOVDQU64(q6Shifts(false), Z29)
		bcast32(0x0F0F0F0F, Z30)
		bcast32(0x30303030, Z31)
		idx := q6Idx()
		for p := 0; p < 4; p++ {
			sc[p] = idx.Offset(64 * p)
			if cols == 1 {
				c.VMOVDQU64(sc[p], zr(4+p))
				sc[p] = zr(4 + p)
			}
		}
	} else {
		tab := k4Sc()
		mn, shift, nib = k4Mn(), k4Shift(), bytes64("nib0f", 0x0F)
		for j := 0; j < 4; j++ {
			sc[j] = tab.Offset(64 * j)
		}
		if cols == 1 {
			for j := 0; j < 4; j++ {
				c.VMOVDQU64(sc[j], zr(4+j))
				sc[j] = zr(4 + j)
			}
			c.VMOVDQU64(mn, Y13)
			c.VMOVDQU64(shift, Z14)
			c.VMOVDQU64(nib, Z15)
			mn, shift, nib = Y13, Z14, Z15
		}
	}
	zeroAcc(vnni, 4*cols)

	label("loop")
	prefetchRows(dist, t.wb, cols)
	// The fp16 d (Q6_K's read alone as it ends the block), or d and
	// dmin, of the four rows, times each column's y.d to the stack.
	if t.six {
		tileFactors(tileRowRegs, 208, false, cols, stack, facBytes)
	} else {
		tileFactors(tileRowRegs, 0, true, cols, stack, facBytes)
		k4Scales4()
	}
	var q [4]Op
	var bs Op
	if cols == 1 {
		for j := 0; j < 4; j++ {
			c.VMOVDQU64(mem(RDI, 4+64*j), zr(8+j))
			q[j] = zr(8 + j)
		}
		c.VMOVDQU64(mem(RDI, 260), Y12)
		bs = Y12
	}
	for r, row := range tileRowRegs {
		if t.six {
			q6TileRow(row, sc)
		} else {
			k4TileRow(t, row, r, sc, mn, shift, nib)
		}
		for ci := 0; ci < cols; ci++ {
			if cols > 1 {
				col := tileColRegs[ci]
				q = [4]Op{mem(col, 4), mem(col, 68), mem(col, 132), mem(col, 196)}
				bs = mem(col, 260)
			}
			kTileRC(t, q, bs, stack.Offset(facBytes*ci+facBytes/4*r), zr(cols*r+ci))
		}
	}
	nextSuperBlock(t.wb, cols, end)
	storeTilesZ(cols)
}

// bytes64 is a 64-byte table of one byte value.
func bytes64(name string, b byte) Mem {
	w := uint64(b) * 0x0101010101010101
	return table(name, w, w, w, w, w, w, w, w)
}

// q6Shifts: qword shift counts for Q6_K's high bits, left by 4 and 2 for
// the low nibbles of the two 256-bit halves, right by 0 and 2 for the high
// ones.
func q6Shifts(left bool) Mem {
	if left {
		return table("q6Shl", 4, 4, 4, 4, 2, 2, 2, 2)
	}
	return table("q6Shr", 0, 0, 0, 0, 2, 2, 2, 2)
}

// k4Sc: VPSHUFB masks from a row's unpacked scales (bytes) to words: mask
// j (64 bytes) repeats scale 2j in 128-bit lanes 0-1 and 2j+1 in 2-3.
func k4Sc() Mem {
	b := make([]byte, 256)
	for i := range b {
		j, lane := i/64, (i%64)/16
		if i%2 == 0 {
			b[i] = byte(2*j + lane/2)
		} else {
			b[i] = 0x80
		}
	}
	return bytesTable("k4Sc", b)
}

// k4Mn: VPSHUFB mask from a row's unpacked mins (bytes 8-15) to words,
// each twice, facing the sixteen block sums.
func k4Mn() Mem {
	b := make([]byte, 32)
	for i := range b {
		if i%2 == 0 {
			b[i] = byte(8 + i/4)
		} else {
			b[i] = 0x80
		}
	}
	return bytesTable("k4Mn", b)
}

// k4Shift: qword shift counts 0 in the lower 256 bits, 4 in the upper.
func k4Shift() Mem { return table("k4Shift", 0, 0, 0, 0, 4, 4, 4, 4) }

// k4Scales4 unpacks the scales and mins of the four rows' super-blocks
// into Z28, row r in lane r: bytes 0-7 the scales, 8-15 the mins, laid out
// as kScales does. In every lane, VPSHUFB gathers the scale bytes 0-3,
// 8-11 and the min bytes 4-7, 8-11 (P), and the bytes whose top bits
// complete scales and mins 4-7 (Q); a word shift by 4 takes the mins'
// nibbles of bytes 12-15; VPSRLW $2 moves bits 6-7 of every byte to 4-5.
func k4Scales4() {
	c.VMOVDQU64(mem(RSI, 4), X28)
	for r := 1; r < 4; r++ {
		c.VINSERTI32X4(U8(r), mem(tileRowRegs[r], 4), Z28, Z28)
	}
	lane := func(lo, hi uint64) []uint64 { return []uint64{lo, hi, lo, hi, lo, hi, lo, hi} }
	c.VPSHUFB(table("k4IdxQ", lane(0x0302010080808080, 0x0706050480808080)...), Z28, Z26)
	c.VPSHUFB(table("k4IdxP", lane(0x0B0A090803020100, 0x0B0A090807060504)...), Z28, Z28)
	c.VPSRLVW(table("k4Cnt", lane(0, 0x0004000400000000)...), Z28, Z28)
	c.VPANDD(table("k4MaskL", lane(0x0F0F0F0F3F3F3F3F, 0x0F0F0F0F3F3F3F3F)...), Z28, Z28)
	c.VPSRLW(U8(2), Z26, Z26)
	c.VPTERNLOGD(U8(0xF8), bytes64("bytes30", 0x30), Z26, Z28)
}

// k4TileRow prepares row r of a Q4_K tile: its scales as words in
// Z20-Z23 (chunk j's in Z(20+j)), its mins as words, each twice, in Y24,
// its nibbles in Z16-Z19 (chunk j: low nibbles in the lower 256 bits,
// facing y[64j:64j+32], high ones in the upper).
//
// Q5_K: the fifth bits of chunk j (bit 2j of qh's bytes for the low half,
// 2j+1 for the high) become a byte mask (K3) under which 0x10 is added;
// qh in both halves of Z25.
func k4TileRow(t *superType, row Register, r int, sc [4]Op, mn, shift, nib Op) {
	c.VSHUFI32X4(U8(0x55*r), Z28, Z28, Z27)
	for j := 0; j < 4; j++ {
		c.VPSHUFB(sc[j], Z27, zr(20+j))
	}
	c.VPSHUFB(mn, Y27, Y24)
	if t.hbits {
		c.VBROADCASTI64X4(mem(row, 16), Z25)
	}
	for j := 0; j < 4; j++ {
		z := zr(16 + j)
		c.VBROADCASTI64X4(mem(row, t.qs+32*j), z)
		c.VPSRLVQ(shift, z, z)
		c.VPANDD(nib, z, z)
		if t.hbits {
			c.VPTESTMB(q5KBits().Offset(64*j), Z25, K3)
			c.VPADDB(bytes64("bytes10", 0x10), z, K3, z)
		}
	}
}

// q5KBits: per chunk j, 64 bytes: 1<<2j in the low 32, 1<<(2j+1) in the
// high 32.
func q5KBits() Mem {
	b := make([]byte, 256)
	for i := range b {
		j, half := i/64, (i%64)/32
		b[i] = 1 << (2*j + half)
	}
	return bytesTable("q5KBits", b)
}

// q6TileRow prepares a row of a Q6_K tile: its scales as words in Y24 and
// spread per 128-bit lane in Z20-Z23 (VPERMW with the q6Idx indexes idx),
// its values in Z16-Z19 (half h: low nibbles in Z(16+2h), high in
// Z(17+2h)), from 64 bytes of ql in Z25 and 32 of qh in both halves of
// Z27; VPTERNLOGD $0xF8 computes high | (low & 0x0F). Z28/Z29 shift
// counts, Z30 bytes 0x0F, Z31 bytes 0x30.
func q6TileRow(row Register, idx [4]Op) {
	c.VPMOVSXBW(mem(row, 192), Y24)
	for p := 0; p < 4; p++ {
		z := zr(20 + p)
		if m, ok := idx[p].(Mem); ok {
			c.VMOVDQU64(m, z)
			c.VPERMW(Z24, z, z)
		} else {
			c.VPERMW(Z24, idx[p], z)
		}
	}
	for h := 0; h < 2; h++ {
		lo, hi := zr(16+2*h), zr(17+2*h)
		c.VMOVDQU64(mem(row, 64*h), Z25)
		c.VBROADCASTI64X4(mem(row, 128+32*h), Z27)
		c.VPSLLVQ(Z28, Z27, lo)
		c.VPANDD(Z31, lo, lo)
		c.VPTERNLOGD(U8(0xF8), Z30, Z25, lo)
		c.VPSRLQ(U8(4), Z25, Z25)
		c.VPSRLVQ(Z29, Z27, hi)
		c.VPANDD(Z31, hi, hi)
		c.VPTERNLOGD(U8(0xF8), Z30, Z25, hi)
	}
}

// kTileRC adds the prepared row times a column (quant chunks q, block sums
// bs) to acc: Q4_K d·y.d·Σ sc·q·y - dmin·y.d·Σ m·y, Q6_K d·y.d·(Σ sc·q·y -
// 32·Σ sc·bsums); the factors are at fac (and fac+4) on the stack.
func kTileRC(t *superType, q [4]Op, bs Op, fac Mem, acc Register) {
	c.VPMADDUBSW(q[0], Z16, Z25)
	c.VPMADDWD(Z20, Z25, Z26)
	for j := 1; j < 4; j++ {
		c.VPMADDUBSW(q[j], zr(16+j), Z25)
		VPDPWSSD(zr(20+j), Z25, Z26)
	}
	c.VPMADDWD(bs, Y24, Y27)
	if t.six {
		c.VPSLLD(U8(5), Y27, Y27)
		c.VPSUBD(Z27, Z26, Z26)
		c.VCVTDQ2PS(Z26, Z26)
		c.VFMADD231PS_BCST(fac, Z26, acc)
		return
	}
	c.VCVTDQ2PS(Z26, Z26)
	c.VCVTDQ2PS(Y27, Y27)
	c.VFMADD231PS_BCST(fac, Z26, acc)
	c.VFNMADD231PS_BCST(fac.Offset(4), Z27, K2, acc)
}

// tileSuperAVX2: Y0-Y3 accumulators. Q4_K: Y8 a row's scales as words in
// both lanes, Y9 its mins' sums, Y10/Y11 integer sums, Y12-Y14 scratch,
// Y15 bytes 0x0F. Q6_K: Y4 a half's scales as words, Y5-Y10 scratch,
// Y11/Y12 integer sums, Y14 bytes 0x30, Y15 bytes 0x0F.
func tileSuperAVX2(t *superType, stack, end Mem) {
	dist := R13
	if t.six {
		dist = R10
	}
	prefetchDist(dist, 1)
	tileCols(1)
	bcast32(0x0F0F0F0F, Y15)
	if t.six {
		bcast32(0x30303030, Y14)
	}
	if t.hbits {
		bcast32(0x10101010, Y5)
	}
	zeroAcc(avx2, 4)
	var shuf Mem
	if t.six {
		shuf = q6Shuf()
	} else {
		shuf = kShuf()
	}

	label("loop")
	prefetchRows(dist, t.wb, 1)
	for r, row := range tileRowRegs {
		acc := yr(r)
		if t.six {
			q6BlockAVX2(row, Y5, Y5, Y11, Y12, [8]Register{Y4, Y5, Y6, Y7, Y8, Y9, Y10}, shuf)
			halfScale(mem(row, 208), X5, Y5)
			c.VFMADD231PS(Y5, Y11, acc)
			continue
		}
		m := func(name string, b byte) Mem { return table(name, uint64(b)*0x0101010101010101) }
		kScales(row, X12, RAX, RDX, R10, R11, m("m3f", 0x3F), m("m03", 0x03), m("m0f", 0x0F))
		c.VPMOVZXBW(X12, X8)
		c.VINSERTI128(U8(1), X8, Y8, Y8)
		c.VPSRLDQ(U8(8), X12, X9)
		c.VPUNPCKLBW(X9, X9, X9)
		c.VPMOVZXBW(X9, Y9)
		c.VPMADDWD(mem(RDI, 260), Y9, Y9)
		c.VPXOR(Y10, Y10, Y10)
		c.VPXOR(Y11, Y11, Y11)
		if t.hbits {
			c.VMOVDQU(mem(row, 16), Y4)
		}
		for j := 0; j < 4; j++ {
			if t.hbits {
				kHighBitsOf(j, Y6, Y7, Y4, Y5)
			}
			kChunkAVX2Bits(t, row, RDI, j, Y8, Y12, Y13, Y14, Y10, Y11, shuf, Y6, Y7)
		}
		c.VPADDD(Y11, Y10, Y10)
		c.VCVTDQ2PS(Y10, Y10)
		c.VCVTDQ2PS(Y9, Y9)
		kFloatsAt(row, X12, X13, Y13, Y12)
		c.VFMADD231PS(Y13, Y10, acc)
		c.VFNMADD231PS(Y12, Y9, acc)
	}
	nextSuperBlock(t.wb, 1, end)
	reduce4Y(Y0, Y1, Y2, Y3, X1, false)
	storeTile(X0)
	retVoid()
}

// nextSuperBlock steps the tile's rows wb bytes to their next super-block
// and its cols columns to their next Q8_K block, looping until RSI reaches
// end.
func nextSuperBlock(wb, cols int, end Mem) {
	nextRows(wb)
	nextCols(cols, 292)
	c.CMPQ(RSI, end)
	c.JNE(ref("loop"))
}

// rowEnd stores at end the end of row 0 (RSI), nb blocks of wb bytes.
func rowEnd(wb int, end Mem) {
	c.Load(c.Param("nb"), RAX)
	c.IMUL3Q(U32(wb), RAX, RAX)
	c.ADDQ(RSI, RAX)
	c.MOVQ(RAX, end)
}

// tileFactors stores to the stack, facBytes apart per column, the fp16 d
// at off of each of rows (withMin: d and dmin, a dword), as float32 in
// X26 (Y26), times each column's y.d.
func tileFactors(rows []Register, off int, withMin bool, cols int, stack Mem, facBytes int) {
	v, y, p := Register(X26), Register(X27), Register(X25)
	if withMin {
		c.VMOVD(mem(rows[0], off), X26)
		for r := 1; r < len(rows); r++ {
			c.VPINSRD(U8(r), mem(rows[r], off), X26, X26)
		}
		c.VCVTPH2PS(X26, Y26)
		v, y, p = Y26, Y27, Y25
	} else {
		c.MOVWLZX(mem(rows[0], off), EAX)
		c.VMOVD(EAX, X26)
		for r := 1; r < len(rows); r++ {
			c.VPINSRW(U8(r), mem(rows[r], off), X26, X26)
		}
		c.VCVTPH2PS(X26, X26)
	}
	for ci := 0; ci < cols; ci++ {
		c.VBROADCASTSS(mem(tileColRegs[ci], 0), y)
		c.VMULPS(y, v, p)
		c.VMOVUPS(p, stack.Offset(facBytes*ci))
	}
}
