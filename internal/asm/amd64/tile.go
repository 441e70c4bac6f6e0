package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Tile kernels: four weight rows against one column (decode) or several
// (prefill), out[c*outStride+r] for r < 4, over nb blocks, nb a positive
// multiple of the kernel's unroll (8 blocks of 32 elements, 1 super-block).
// Rows are at SI, BX, R8, R9; columns at DI, DX, R10, R11. Each iteration
// prefetches the same bytes of the rows of a later tile (two tiles on for
// 4×1, one for wider), as the hardware prefetchers, seeing four short
// streams at a time, fetch them late.

const tileSig = "func(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)"

var (
	tileRowRegs = []Register{RSI, RBX, R8, R9}
	tileColRegs = []Register{RDI, RDX, R10, R11}
)

// tileName is the name quant's tile_amd64.go knows the kernel by.
func tileName(t string, w width, cols int) string {
	return fmt.Sprintf("tile%s%s4x%d", t, w.suffix(), cols)
}

// tileRows loads the four row pointers from w and wStride (AX).
func tileRows() {
	loadArgs("w wStride", RSI, RAX)
	c.LEAQ(memx(RSI, 0, RAX, 1), RBX)
	c.LEAQ(memx(RSI, 0, RAX, 2), R8)
	c.LEAQ(memx(RBX, 0, RAX, 2), R9)
}

// tileCols loads the column pointers from x and xStride.
func tileCols(cols int) {
	c.Load(c.Param("x"), RDI)
	if cols == 1 {
		return
	}
	if cols == 2 {
		c.Load(c.Param("xStride"), RDX)
		c.ADDQ(RDI, RDX)
		return
	}
	c.Load(c.Param("xStride"), RAX)
	c.LEAQ(memx(RDI, 0, RAX, 1), RDX)
	c.LEAQ(memx(RDI, 0, RAX, 2), R10)
	c.LEAQ(memx(RDX, 0, RAX, 2), R11)
}

// prefetchDist sets reg to the distance to the rows prefetched: 8 rows on
// for a 4×1 kernel, 4 for wider ones.
func prefetchDist(reg Register, cols int) {
	c.Load(c.Param("wStride"), reg)
	if cols == 1 {
		c.SHLQ(U8(3), reg)
	} else {
		c.SHLQ(U8(2), reg)
	}
}

// prefetchRows prefetches the bytes (rounded up to cache lines) one
// iteration reads of each row, dist further on: into L1 for the tiles of
// batches (cols > 1), into L2 for decode's (cols 1), which the next tile
// but one reads after two whole rows, tens of KB later. On Emerald
// Rapids L2 was the faster target (examples/bench -repack=false tg32, 2
// threads: TinyLlama Q4_K_M 26-29 against 32 tok/s, Gemma-2-9B Q4_K_M
// 3.2-3.4 against 3.6-3.7), as for the X8 kernels (x8Prefetch).
func prefetchRows(dist Register, bytes, cols int) {
	for _, r := range tileRowRegs {
		for off := 0; off < bytes; off += 64 {
			if cols == 1 {
				c.PREFETCHT1(memx(r, off, dist, 1))
			} else {
				c.PREFETCHT0(memx(r, off, dist, 1))
			}
		}
	}
}

// nextRows advances the rows by n bytes.
func nextRows(n int) {
	for _, r := range tileRowRegs {
		c.ADDQ(U32(n), r)
	}
}

// nextCols advances the columns by n bytes.
func nextCols(cols, n int) {
	for _, r := range tileColRegs[:cols] {
		c.ADDQ(U32(n), r)
	}
}

// reduce4Z leaves the sums of the four Z accumulators as the four floats
// of the X form of the first (Y20, X20 scratch).
func reduce4Z(a, b, cc, d Register) {
	for _, z := range []Register{a, b, cc, d} {
		c.VEXTRACTF64X4(U8(1), z, Y20)
		c.VADDPS(Y20, asY(z), asY(z))
	}
	reduce4Y(asY(a), asY(b), asY(cc), asY(d), X20, true)
}

// reduce4Y leaves the sums of the four Y accumulators as the four floats
// of the X form of the first; t is scratch.
func reduce4Y(a, b, cc, d, t Register, evex bool) {
	c.VHADDPS(b, a, a)
	c.VHADDPS(d, cc, cc)
	c.VHADDPS(cc, a, a)
	if evex {
		c.VEXTRACTF32X4(U8(1), a, t)
	} else {
		c.VEXTRACTF128(U8(1), a, t)
	}
	c.VADDPS(t, asX(a), asX(a))
}

// storeTile writes the four sums of a one-column tile, in x, to out.
func storeTile(x Register) {
	c.Load(c.Param("out"), R12)
	c.VMOVUPS(x, mem(R12, 0))
}

// zeroAcc clears accumulators 0..n-1 of width w.
func zeroAcc(w width, n int) {
	for i := 0; i < n; i++ {
		zero(w.vec(i))
	}
}

// pairIdx is the VPERMPS table of tileBlock: 64 bytes per pair p, dword 2p
// in lanes 0-7 and 2p+1 in 8-15.
func pairIdx() Mem {
	d := make([]uint32, 64)
	for i := range d {
		p, lane := i/16, i%16
		d[i] = uint32(2*p + lane/8)
	}
	return dwordsTable("pairIdx", d)
}

// tileBlock emits the tile kernel of a 32-element block type (Q4_0, Q8_0)
// for a width and a number of columns.
//
// VNNI (4×1, 4×4): eight blocks per iteration as four pairs, one pair per
// Z register as in the dot product; -bias·Σy, which depends on the
// activations only, is computed once per column and pair (Z23-Z26) and
// seeds every row's integer sum. The products d_w·d_x of a row and
// column's eight blocks go to a 64-byte stack slot per (row, column), 64-
// byte aligned from R13 so that VPERMPS never reads across a cache line,
// and VPERMPS spreads those of a pair over its two halves. Z0-Z15
// accumulators (row r, column c in Z(4r+c)), Z16-Z19 activation pairs, Z20
// weight pair, Z21-Z22 scratch, Z27 the pair's scale index, Z28 shift
// counts, Z29 bytes 0x0F, Z30 the bias bytes, Z31 (IQ4_NL) the biased
// levels.
//
// VBMI (Q4_0, IQ4_NL, 4×1): each row's eight blocks come in with three
// loads and VPERMT2B picks out a pair's nibble bytes, VGF2P8AFFINEQB splits
// them; IQ4_NL's levels come from a VPERMB of a table in memory.
//
// AVX2 (4×1, Q4_0 also 4×2): one block per Y register as in the dot
// product, the scales gathered by VPGATHERDD and their products parked on
// the stack.
func tileBlock(t *blockType, w width, cols int) {
	switch w {
	case avx2:
		tileBlockAVX2(t, cols)
	case vbmi:
		tileBlockVBMI(t)
	default:
		tileBlockVNNI(t, cols)
	}
}

// tileWPair loads the weight pair p of row into Z20 as unsigned bytes;
// for Q5_0 and Q5_1 the pair's 64 high bits, in element order, become a mask (K2)
// under which the bytes 0x10 in Z30 are added.
func tileWPair(t *blockType, row Register, woff int) {
	weightPair(t, row, woff, Z20, Z28, Z29, Z30)
	if t.hbits {
		c.KMOVD(mem(row, woff+t.qw-4), K2)
		c.KMOVD(mem(row, woff+t.wb+t.qw-4), K3)
		c.KSHIFTLQ(U8(32), K3, K3)
		c.KORQ(K3, K2, K2)
		c.VPADDB(Z30, Z20, K2, Z20)
	}
}

// tileXPair loads activation pair p of col into xp and -bias·Σ of each
// four of its bytes into corr.
func tileXPair(t *blockType, col Register, xoff int, xp, corr Register) {
	c.VMOVDQU64(mem(col, xoff+t.qx), asY(xp))
	c.VINSERTI64X4(U8(1), mem(col, xoff+t.xb+t.qx), xp, xp)
	c.VPXORD(corr, corr, corr)
	if t.bias == 0 {
		return // Q4_1: no bias
	}
	VPDPBUSD(xp, Z30, corr)
	c.VPXORD(Z21, Z21, Z21)
	c.VPSUBD(corr, Z21, corr)
}

// tileRC adds d_w·d_x·Σ(w-bias)·y of the weight pair in Z20 and the
// activation pair xp to acc; the scale products are at slot from R13.
func tileRC(xp, corr Register, slot int, acc Register) {
	c.VMOVDQA32(corr, Z21)
	VPDPBUSD(xp, Z20, Z21)
	c.VCVTDQ2PS(Z21, Z21)
	c.VPERMPS(mem(R13, slot), Z27, Z22)
	c.VFMADD231PS(Z22, Z21, acc)
}

// tileConst loads the constants of the VNNI block tiles.
func tileConst(t *blockType) {
	if t.nibble {
		kmask(0xFF00, K1)
		c.VMOVDQU64(shift0044(), Z28)
		bcast32(0x0F0F0F0F, Z29)
	}
	bcast32(addBytes(t), Z30)
	if t.lut {
		c.VBROADCASTI32X4(t.lutTable(true), Z31)
	}
}

// shift0044 is the qword shift counts 0, 0, 4, 4 per 256 bits: low
// nibbles in 128-bit lanes 0 and 2, high ones in 1 and 3.
func shift0044() Mem { return table("shift0044", 0, 0, 4, 4, 0, 0, 4, 4) }

func tileBlockVNNI(t *blockType, cols int) {
	a := NOSPLIT
	if cols > 1 {
		a = 0 // the frame is too large for NOSPLIT
	}
	text(tileName(t.name, vnni, cols), a, tileSig)
	c.AllocLocal(64*4*cols + 64)
	tileRows()
	dist := R10
	if cols > 1 {
		dist = R12
	}
	prefetchDist(dist, cols)
	c.LEAQ(mem(RSP, 63), R13)
	c.ANDQ(I32(-64), R13)
	tileCols(cols)
	c.Load(c.Param("nb"), RCX)
	tileConst(t)
	zeroAcc(vnni, 4*cols)
	pidx := pairIdx()
	oneWindow := 7*t.wb+2 <= 128

	label("loop")
	prefetchRows(dist, 8*t.wb, cols)
	c.VMOVDQU64(scaleIdx(t.xb, 0, 4, 1), Z22)
	for ci := 0; ci < cols; ci++ {
		scales8(tileColRegs[ci], t.xb, yr(16+ci), Z22, Z22, Z20, Z21)
	}
	// Blocks under 32 bytes (Q5_0) need a second window of their own.
	ownWindows := !oneWindow && 8*t.wb-128 < 4*t.wb
	if oneWindow {
		c.VMOVDQU64(scaleIdx(t.wb, 0, 8, 1), Z23)
	} else if ownWindows {
		scaleTables(t.wb, Z23, Z24)
	}
	for r, row := range tileRowRegs {
		switch {
		case oneWindow:
			wScales8(t, row, Y20, Z23, nil, Z20, Z21)
		case ownWindows:
			scales8(row, t.wb, Y20, Z23, Z24, Z20, Z21)
		default:
			scales8(row, t.wb, Y20, Z22, Z22, Z20, Z21)
		}
		for ci := 0; ci < cols; ci++ {
			c.VMULPS(yr(16+ci), Y20, Y21)
			c.VMOVUPS(Y21, mem(R13, 64*(cols*r+ci)))
		}
	}
	if t.withMin {
		tileMinsVNNI(t, cols)
	}
	for p := 0; p < 4; p++ {
		c.VMOVDQU64(pidx.Offset(64*p), Z27)
		for ci := 0; ci < cols; ci++ {
			tileXPair(t, tileColRegs[ci], 2*p*t.xb, zr(16+ci), zr(23+ci))
		}
		for r, row := range tileRowRegs {
			tileWPair(t, row, 2*p*t.wb)
			for ci := 0; ci < cols; ci++ {
				tileRC(zr(16+ci), zr(23+ci), 64*(cols*r+ci), zr(cols*r+ci))
			}
		}
	}
	nextRows(8 * t.wb)
	nextCols(cols, 8*t.xb)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
	storeTilesZ(cols)
}

// tileMinsVNNI adds m·s of the eight blocks (Q4_1) to each row and
// column's accumulator: the columns' s in Z25-Z27, Z31, each row's m in
// Y20 in turn (Y registers, so the upper halves of their Z forms are 0).
func tileMinsVNNI(t *blockType, cols int) {
	sRegs := []Register{Z25, Z26, Z27, Z31}
	c.VMOVDQU64(minIdx(t.xb, false), Z22)
	c.VMOVDQU64(minIdx(t.xb, true), Z23)
	for ci := 0; ci < cols; ci++ {
		scales8(tileColRegs[ci], t.xb, asY(sRegs[ci]), Z22, Z23, Z20, Z21)
	}
	c.VMOVDQU64(minIdx(t.wb, false), Z22)
	c.VMOVDQU64(minIdx(t.wb, true), Z23)
	for r, row := range tileRowRegs {
		scales8(row, t.wb, Y20, Z22, Z23, Z20, Z21)
		for ci := 0; ci < cols; ci++ {
			c.VFMADD231PS(sRegs[ci], Z20, zr(cols*r+ci))
		}
	}
}

// minIdx is the scales8 index table of the fp16 at offset 2 of eight
// blocks of bb bytes, whose eighth lies past the first 128 bytes: the
// first window's or (second) the second's.
func minIdx(bb int, second bool) Mem {
	if 7*bb+4 <= 128 {
		panic("minIdx: one window")
	}
	if !second {
		return scaleIdx(bb, 2, 4, 1)
	}
	return scaleIdx(bb, 4*bb-min(4*bb, 8*bb-128)+2, 4, 1)
}

// storeTilesZ sums the four rows of each of cols columns, whose
// accumulators stand in Z0-Z(4·cols-1) row by row, stores them and
// returns.
func storeTilesZ(cols int) {
	for ci := 0; ci < cols; ci++ {
		reduce4Z(zr(ci), zr(cols+ci), zr(2*cols+ci), zr(3*cols+ci))
		if cols > 1 {
			storeTileCol(ci)
		}
	}
	if cols == 1 {
		storeTile(X0)
	}
	retVoid()
}

// storeTileCol stores column ci of a 4×4 tile (its sums in Xci) as soon
// as it is reduced, R12/R13 loaded on the first.
func storeTileCol(ci int) {
	if ci == 0 {
		loadArgs("out outStride", R12, R13)
		c.SHLQ(U8(2), R13)
	}
	x := xs[ci]
	switch ci {
	case 0:
		c.VMOVUPS(x, mem(R12, 0))
	case 3:
		c.LEAQ(memx(R13, 0, R13, 2), RAX)
		c.VMOVUPS(x, memx(R12, 0, RAX, 1))
	default:
		c.VMOVUPS(x, memx(R12, 0, R13, uint8(ci)))
	}
}

func retVoid() {
	c.VZEROUPPER()
	c.RET()
}

// tileBlockVBMI: Z0-Z3 accumulators, Z4-Z7 the rows' scale products (row
// r in Z(4+r)), Z8-Z19 the rows' bytes (row r's 0-63, 64-127 and 80-143 in
// Z(8+3r), Z(9+3r), Z(10+3r)), Z20 weight pair, Z21-Z22 scratch, Z23
// activation pair, Z24 its correction, Z25 the bit matrices, Z26, Z28,
// Z29 and Z31 the VPERMT2B indexes of pairs 0-3, Z27 the pair's scale
// index, Z30 the bias bytes.
func tileBlockVBMI(t *blockType) {
	text(tileName(t.name, vbmi, 1), NOSPLIT, tileSig)
	tileRows()
	c.SHLQ(U8(3), RAX)
	c.MOVQ(RAX, R10)
	tileCols(1)
	c.Load(c.Param("nb"), RCX)
	bcast32(t.bias, Z30)
	kmask(0xCC, K2)
	bcastq(U64(0x0102040800000000), Z25, nil)
	bcastq(U64(0x1020408000000000), Z25, K2)
	// VPERMT2B indexes, 64 bytes per pair: block 2p's nibble bytes in
	// 128-bit lanes 0-1, block 2p+1's in 2-3, from bytes 0-127 of the row
	// (pairs 0-2) or 64-143 (pair 3, from the second and third loads).
	third := 8*t.wb - 64
	b := make([]byte, 256)
	for p := 0; p < 4; p++ {
		for i := 0; i < 64; i++ {
			lane, k := i/16, i%16
			at := 2*p*t.wb + t.qw + k + t.wb*(lane/2)
			if p == 3 {
				// Bytes 64..127 are indexes 0..63, the third load's
				// bytes third.. are 64...
				if at < 128 {
					at -= 64
				} else {
					at = at - third + 64
				}
			}
			b[64*p+i] = byte(at)
		}
	}
	idx := bytesTable("vbmiPairs", b)
	for p, z := range []Register{Z26, Z28, Z29, Z31} {
		c.VMOVDQU64(idx.Offset(64*p), z)
	}
	zeroAcc(vnni, 4)
	pidx := pairIdx()

	label("loop")
	c.VMOVDQU64(scaleIdx(t.xb, 0, 4, 1), Z22)
	scales8(RDI, t.xb, Y21, Z22, Z22, Z20, Z21)
	c.VMOVDQU64(scaleIdx(t.wb, 0, 8, 1), Z22)
	for r, row := range tileRowRegs {
		a, bb, cc, prod := zr(8+3*r), zr(9+3*r), zr(10+3*r), zr(4+r)
		c.VMOVDQU64(mem(row, 0), a)
		c.VMOVDQU64(mem(row, 64), bb)
		c.VMOVDQU64(mem(row, third), cc)
		c.VMOVDQA64(a, prod)
		c.VPERMT2W(bb, Z22, prod)
		halvesToFloats(t, 0, asX(prod), asY(prod), Y20)
		c.VMULPS(Y21, asY(prod), asY(prod))
	}
	for _, row := range tileRowRegs {
		for off := 0; off < 8*t.wb; off += 64 {
			c.PREFETCHT0(memx(row, off, R10, 1))
		}
	}
	for p, ix := range []Register{Z26, Z28, Z29, Z31} {
		c.VMOVDQU64(pidx.Offset(64*p), Z27)
		tileXPair(t, RDI, 2*p*t.xb, Z23, Z24)
		for r := 0; r < 4; r++ {
			t1, t2 := zr(8+3*r), zr(9+3*r)
			if p == 3 {
				t1, t2 = zr(9+3*r), zr(10+3*r)
			}
			c.VMOVDQA64(t1, Z20)
			c.VPERMT2B(t2, ix, Z20)
			VGF2P8AFFINEQB(U8(0), Z25, Z20, Z20)
			if t.lut {
				c.VPERMB(t.lutBiased64(), Z20, Z20)
			}
			c.VMOVDQA32(Z24, Z21)
			VPDPBUSD(Z23, Z20, Z21)
			c.VCVTDQ2PS(Z21, Z21)
			c.VPERMPS(zr(4+r), Z27, Z22)
			c.VFMADD231PS(Z22, Z21, zr(r))
		}
	}
	nextRows(8 * t.wb)
	nextCols(1, 8*t.xb)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
	reduce4Z(Z0, Z1, Z2, Z3)
	storeTile(X0)
	retVoid()
}

// gatherScales8 converts the fp16 scales of the eight blocks at base to
// floats in Y register dst, with VPGATHERDD of the dwords at the blocks'
// offsets (in offs); mask is the gather mask register.
func gatherScales8(base, offs, dst, mask Register) {
	gatherAt(base, 0, offs, dst, mask)
}

// gatherAt is gatherScales8 of the fp16 at off in each block.
func gatherAt(base Register, off int, offs, dst, mask Register) {
	c.VPCMPEQD(mask, mask, mask)
	c.VPXOR(dst, dst, dst)
	c.VPGATHERDD(mask, memx(base, off, offs, 1), dst)
	c.VPSHUFB(packLow(), dst, dst)
	c.VPERMQ(U8(0x08), dst, dst)
	c.VCVTPH2PS(asX(dst), dst)
}

// packLow is the VPSHUFB mask packing the low words of four dwords into
// the low 8 bytes of each 128-bit lane.
func packLow() Mem {
	return table("packLow", 0x0D0C090805040100, 0x8080808080808080, 0x0D0C090805040100, 0x8080808080808080)
}

// blockOffsets is a table of the byte offsets of eight blocks of bb bytes.
func blockOffsets(bb int) Mem {
	d := make([]uint32, 8)
	for i := range d {
		d[i] = uint32(i * bb)
	}
	return dwordsTable(fmt.Sprintf("blockOffsets%d", bb), d)
}

// tileBlockAVX2 4×1: Y0-Y3 accumulators, Y4 the activation block, Y5 its
// bias·Σ of pairs, Y6-Y10 scratch, Y11/Y12 gather offsets, Y13 words 1,
// Y14 the bias bytes (IQ4_NL: the signed levels), Y15 bytes 0x0F; the
// scale products of row r at 32r on the stack.
//
// 4×2 (Q4_0): each weight block is unpacked once for both columns. Y0-Y3
// accumulators of column 0, Y4-Y7 of column 1, Y8/Y9 the columns'
// activation blocks, Y10/Y11 their bias·Σ of pairs, Y12 the weight block,
// Y13/Y14 scratch, Y15 bytes 0x0F (words 1 and the bias come from
// memory); the scale products of row r and column c at 64r+32c.
func tileBlockAVX2(t *blockType, cols int) {
	text(tileName(t.name, avx2, cols), NOSPLIT, tileSig)
	stack := c.AllocLocal(128 * cols)
	tileRows()
	prefetchDist(R10, cols)
	tileCols(cols)
	c.Load(c.Param("nb"), RCX)
	woffs, xoffs := blockOffsets(t.wb), blockOffsets(t.xb)
	if cols == 2 {
		tileBlockAVX2x2(t, stack, woffs, xoffs)
		return
	}
	bcast32(0x00010001, Y13)
	if t.lut {
		c.VBROADCASTI128(t.lutTable(false), Y14)
		bcast32(0x0F0F0F0F, Y15)
	} else if t.nibble {
		bcast32(addBytes(t), Y14)
		bcast32(0x0F0F0F0F, Y15)
	}
	wIdx := Y11
	if t.wb != t.xb {
		wIdx = Y12
		c.VMOVDQU(woffs, Y12)
	}
	c.VMOVDQU(xoffs, Y11)
	zeroAcc(avx2, 4)

	label("loop")
	prefetchRows(R10, 8*t.wb, cols)
	gatherScales8(RDI, Y11, Y9, Y10)
	for r, row := range tileRowRegs {
		if t.e8m0 {
			gatherE8M0(row, wIdx, Y8, Y10)
		} else {
			gatherScales8(row, wIdx, Y8, Y10)
		}
		c.VMULPS(Y9, Y8, Y8)
		c.VMOVUPS(Y8, stack.Offset(32*r))
	}
	if t.withMin {
		// m·s of the eight blocks straight into the accumulators.
		gatherAt(RDI, 2, Y11, Y4, Y10)
		for r, row := range tileRowRegs {
			gatherAt(row, 2, wIdx, Y8, Y10)
			c.VFMADD231PS(Y4, Y8, yr(r))
		}
	}
	for b := 0; b < 8; b++ {
		c.VMOVDQU(mem(RDI, b*t.xb+t.qx), Y4)
		if t.nibble && !t.lut && t.bias != 0 {
			c.VPMADDUBSW(Y4, Y14, Y5)
		}
		for r, row := range tileRowRegs {
			if t.lut {
				c.VMOVDQU(mem(row, b*t.wb+t.qw), X6)
				c.VPSRLW(U8(4), X6, X7)
				c.VINSERTI128(U8(1), X7, Y6, Y6)
				c.VPAND(Y15, Y6, Y6)
				c.VPSHUFB(Y6, Y14, Y6)
				signedMul(Y6, Y4, Y8, Y7, Y6)
			} else if t.nibble {
				c.VMOVDQU(mem(row, b*t.wb+t.qw), X6)
				c.VPSRLW(U8(4), X6, X7)
				c.VINSERTI128(U8(1), X7, Y6, Y6)
				c.VPAND(Y15, Y6, Y6)
				if t.hbits {
					// As the dot product: bit j of the dword at 2 adds
					// 0x10 to byte j.
					c.VPBROADCASTD(mem(row, b*t.wb+t.qw-4), Y7)
					c.VPSHUFB(bytesTable("spread4", spreadBytes()), Y7, Y7)
					c.VPAND(bits8(), Y7, Y7)
					c.VPCMPEQB(bits8(), Y7, Y7)
					c.VPAND(Y14, Y7, Y7)
					c.VPOR(Y7, Y6, Y6)
				}
				c.VPMADDUBSW(Y4, Y6, Y6)
				if t.bias != 0 {
					c.VPSUBW(Y5, Y6, Y6)
				}
			} else {
				c.VMOVDQU(mem(row, b*t.wb+t.qw), Y6)
				c.VPSIGNB(Y6, Y6, Y7)
				c.VPSIGNB(Y6, Y4, Y6)
				c.VPMADDUBSW(Y6, Y7, Y6)
			}
			c.VPMADDWD(Y13, Y6, Y6)
			c.VCVTDQ2PS(Y6, Y6)
			c.VBROADCASTSS(stack.Offset(32*r+4*b), Y7)
			c.VFMADD231PS(Y7, Y6, yr(r))
		}
	}
	nextRows(8 * t.wb)
	nextCols(1, 8*t.xb)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
	reduce4Y(Y0, Y1, Y2, Y3, X1, false)
	storeTile(X0)
	retVoid()
}

func tileBlockAVX2x2(t *blockType, stack, woffs, xoffs Mem) {
	ones := table("words1", 0x0001000100010001, 0x0001000100010001, 0x0001000100010001, 0x0001000100010001)
	b4 := uint64(t.bias)
	bias := table(fmt.Sprintf("bias%08x", t.bias), b4|b4<<32, b4|b4<<32, b4|b4<<32, b4|b4<<32)
	bcast32(0x0F0F0F0F, Y15)
	zeroAcc(avx2, 8)
	scales := func(base Register, offs Mem, dst Register) {
		c.VMOVDQU(offs, Y14)
		gatherScales8(base, Y14, dst, Y13)
	}

	label("loop")
	prefetchRows(R10, 8*t.wb, 2)
	scales(RDI, xoffs, Y8)
	scales(RDX, xoffs, Y9)
	for r, row := range tileRowRegs {
		scales(row, woffs, Y12)
		c.VMULPS(Y8, Y12, Y13)
		c.VMOVUPS(Y13, stack.Offset(64*r))
		c.VMULPS(Y9, Y12, Y13)
		c.VMOVUPS(Y13, stack.Offset(64*r+32))
	}
	for b := 0; b < 8; b++ {
		c.VMOVDQU(mem(RDI, b*t.xb+t.qx), Y8)
		c.VMOVDQU(mem(RDX, b*t.xb+t.qx), Y9)
		c.VMOVDQU(bias, Y13)
		c.VPMADDUBSW(Y8, Y13, Y10)
		c.VPMADDUBSW(Y9, Y13, Y11)
		for r, row := range tileRowRegs {
			c.VMOVDQU(mem(row, b*t.wb+t.qw), X12)
			c.VPSRLW(U8(4), X12, X13)
			c.VINSERTI128(U8(1), X13, Y12, Y12)
			c.VPAND(Y15, Y12, Y12)
			for ci, x := range []Register{Y8, Y9} {
				c.VPMADDUBSW(x, Y12, Y13)
				c.VPSUBW([]Register{Y10, Y11}[ci], Y13, Y13)
				c.VPMADDWD(ones, Y13, Y13)
				c.VCVTDQ2PS(Y13, Y13)
				c.VBROADCASTSS(stack.Offset(64*r+32*ci+4*b), Y14)
				c.VFMADD231PS(Y14, Y13, yr(4*ci+r))
			}
		}
	}
	nextRows(8 * t.wb)
	nextCols(2, 8*t.xb)
	c.SUBQ(U8(8), RCX)
	c.JNZ(ref("loop"))
	loadArgs("out outStride", R12, R13)
	reduce4Y(Y0, Y1, Y2, Y3, X8, false)
	c.VMOVUPS(X0, mem(R12, 0))
	reduce4Y(Y4, Y5, Y6, Y7, X8, false)
	c.VMOVUPS(X4, memx(R12, 0, R13, 4))
	retVoid()
}

// bits8 is the bytes 1, 2, 4 … 0x80 repeated: bit k of byte k mod 8.
func bits8() Mem {
	const b = 0x8040201008040201
	return table("bits8", b, b, b, b)
}
