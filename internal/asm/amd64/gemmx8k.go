package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The GEMM kernels of Q4_K's and Q5_K's X8 layouts, one group of eight
// rows against a panel of Q8_K activations (quant's gemm_k.go):
//
//	gemm<T>X8GVNNI(w *byte, wStride int, p *byte, nb int, out *float32, outStride int, cols int)
//
// sets out[c*outStride+r] for r < 8 and c < cols over nb ≥ 1 super-blocks
// (wStride is unused). The rows' lanes are the vector's: a 32-byte chunk of
// the block column holds a group of four codes of each of the eight rows,
// so one VPAND (and a VPSRLD) makes the low- and high-nibble sub-blocks'
// unsigned bytes for all eight rows, and VPDPBUSD with a column's four
// activation bytes broadcast from the panel (embedded broadcast) adds them
// to that column's eight row sums. Each unpacked chunk serves eight
// columns; a panel of 32 is taken in passes of eight, the super-block's
// 1184 bytes staying in L1 between passes.
//
// The arithmetic is the decode kernel's (matVecX8Go), per row, column and
// super-block: S = Σ_j sc_j·s_j and M = Σ_j m_j·Σy_j as integers, then
// acc += S·(d·d_x) and acc −= M·(dmin·d_x), each fused, so a column's
// results equal MatVec's on that token bit for bit. The scales enter in
// integer arithmetic without a sum per sub-block: the even (low-nibble)
// sub-blocks' sums run on in one register, E_k after sub-block 2k, and
// Σ_k sc_2k·s_2k = Σ_k E_k·(sc_2k − sc_2k+2) (sc_8 = 0), one VPMULLD and
// one VPADDD per pair of sub-blocks and column; the odd ones likewise.
// The panel holds Σy_j of the column as int16 pairs (j = 2k, 2k+1), so M
// is four VPDPWSSD against the rows' (m_2k, m_2k+1) pairs.
//
// Frame: the 32 columns' float accumulators (8 floats each), then per
// super-block the rows' scale differences (even chain, odd chain), min
// pairs, d and dmin as floats.
//
// Q5_K's fifth bits come from the group's qh chunk (VPTERNLOGD), read again
// for each pair of sub-blocks.
//
// Registers: Y0-Y7 the columns' even running sums, Y8-Y15 odd (then M
// and the end's scratch), Y16-Y23 S, Y24 the 0x0F mask, Y25/Y26 a chunk's
// low and high nibbles, Y27 scratch, Y28 Q5_K's 0x10 mask, Y29 its
// shifted qh. General: SI the block column, DI the
// panel's super-block, CX super-blocks left, R11 the pass's column bytes,
// R9 their end.

const (
	x8kAcc   = 0
	x8kDsc   = x8kAcc + 32*32 // 8 vectors: even chain k, then odd chain k
	x8kMins  = x8kDsc + 8*32  // 4 vectors of (m_2k, m_2k+1) word pairs
	x8kD     = x8kMins + 4*32
	x8kDmin  = x8kD + 32
	x8kFrame = x8kDmin + 32
)

// kPanelPairs is the offset in a Q4_K panel super-block of its Σy pairs:
// 128 bytes per pair k, column c's (Σy_2k, Σy_2k+1) int16 at 4c.
func kPanelPairs() int { return kPanel{32}.dx() + 128 }

// gemmX8K emits the GEMM kernel of Q4_K's or Q5_K's X8 layout.
func gemmX8K(t *superType) {
	pan := kPanel{32}
	name := fmt.Sprintf("gemm%sX8GVNNI", t.name)
	text(name, 0, gemmSig)
	at := x8kBegin(x8kFrame, x8kAcc, Y27, func() {
		bcast32(0x0F0F0F0F, Y24)
		if t.hbits {
			bcast32(0x10101010, Y28)
		}
	})

	label("super")
	// The rows' factors of this super-block.
	for j := 0; j < 8; j++ {
		c.VPMOVZXBD(mem(RSI, 32+8*j), yr(16+j))
	}
	for k := 0; k < 4; k++ {
		for odd := 0; odd < 2; odd++ {
			j := 2*k + odd
			dst := at(x8kDsc + 32*(4*odd+k))
			if k == 3 {
				c.VMOVDQU32(yr(16+j), dst)
				continue
			}
			c.VPSUBD(yr(16+j+2), yr(16+j), Y27)
			c.VMOVDQU32(Y27, dst)
		}
	}
	for k := 0; k < 4; k++ {
		c.VPMOVZXBD(mem(RSI, 96+8*(2*k)), Y25)
		c.VPMOVZXBD(mem(RSI, 96+8*(2*k+1)), Y26)
		c.VPSLLD(U8(16), Y26, Y26)
		c.VPORD(Y26, Y25, Y25)
		c.VMOVDQU32(Y25, at(x8kMins+32*k))
	}
	// (d, dmin) pairs: the low words are d, the high ones dmin.
	c.VMOVDQU32(mem(RSI, 0), Y27)
	c.VPMOVDW(Y27, X25)
	c.VCVTPH2PS(X25, Y25)
	c.VMOVUPS(Y25, at(x8kD))
	c.VPSRLD(U8(16), Y27, Y27)
	c.VPMOVDW(Y27, X25)
	c.VCVTPH2PS(X25, Y25)
	c.VMOVUPS(Y25, at(x8kDmin))

	c.XORQ(R11, R11)
	label("pass")
	// col is column c's dword at off of the panel's super-block.
	col := func(off, cc int) Mem { return memx(RDI, off+4*cc, R11, 1) }
	for i := 0; i < 24; i++ {
		zero(yr(i))
	}
	for jj := 0; jj < 4; jj++ {
		for g := 0; g < 8; g++ {
			chunk := mem(RSI, 160+32*(8*jj+g))
			if t.hbits {
				chunk = mem(RSI, 160+160*g+32+32*jj)
			}
			c.VPANDD(chunk, Y24, Y25)
			c.VPSRLD(U8(4), chunk, Y26)
			c.VPANDD(Y24, Y26, Y26)
			if t.hbits {
				// Bits 2jj and 2jj+1 of the qh bytes are bit 4 of the
				// low and high nibbles' values.
				qh := mem(RSI, 160+160*g)
				for k, u := range []Register{Y25, Y26} {
					switch b := 2*jj + k; {
					case b < 4:
						c.VPSLLD(U8(4-b), qh, Y29)
					case b > 4:
						c.VPSRLD(U8(b-4), qh, Y29)
					default:
						c.VMOVDQU32(qh, Y29)
					}
					c.VPTERNLOGD(U8(0xF8), Y28, Y29, u)
				}
			}
			for cc := 0; cc < 8; cc++ {
				VPDPBUSDBcast(col((2*jj)*pan.subBytes()+128*g, cc), Y25, yr(cc))
				VPDPBUSDBcast(col((2*jj+1)*pan.subBytes()+128*g, cc), Y26, yr(8+cc))
			}
		}
		for cc := 0; cc < 8; cc++ {
			for odd := 0; odd < 2; odd++ {
				c.VPMULLD(at(x8kDsc+32*(4*odd+jj)), yr(8*odd+cc), Y27)
				c.VPADDD(Y27, yr(16+cc), yr(16+cc))
			}
		}
	}
	// M per column in Y0-Y7, the min pairs in Y8-Y11.
	for k := 0; k < 4; k++ {
		c.VMOVDQU32(at(x8kMins+32*k), yr(8+k))
	}
	for cc := 0; cc < 8; cc++ {
		zero(yr(cc))
		for k := 0; k < 4; k++ {
			VPDPWSSDBcast(col(kPanelPairs()+128*k, cc), yr(8+k), yr(cc))
		}
	}
	c.VMOVUPS(at(x8kD), Y12)
	c.VMOVUPS(at(x8kDmin), Y13)
	x8kAddColumns(at(x8kAcc), pan, Y12, Y13, Y27, Y14, Y15)
	x8kNext(t, pan, at(x8kAcc))
}

// x8kBegin opens a GEMM X8 kernel: its frame of frameBytes (at gives a
// place in it), the arguments (R9 the bytes of the passes' columns, 32
// per eight), the constants consts sets, and the 32 column sums from
// acc on zeroed through z.
func x8kBegin(frameBytes, acc int, z Register, consts func()) func(off int) Mem {
	frame := c.AllocLocal(frameBytes)
	at := func(off int) Mem { return frame.Offset(off) }
	loadArgs("w p nb cols", RSI, RDI, RCX, R9)
	c.ADDQ(U8(7), R9)
	c.ANDQ(I8(-8), R9)
	c.SHLQ(U8(2), R9)
	consts()
	zero(z)
	for i := 0; i < 32; i++ {
		c.VMOVDQU32(z, at(acc+32*i))
	}
	return at
}

// x8kAddColumns adds to each of the pass's eight columns' float sums
// (from acc on, at R11) d·d_x times its int32 sums in Y16-Y23 and, where
// dmin is not nil, less dmin·d_x times those in Y0-Y7; d_x comes from the
// panel. sum, prod and f are scratch.
func x8kAddColumns(acc Mem, pan kPanel, d, dmin, sum, prod, f Register) {
	for cc := 0; cc < 8; cc++ {
		a := acc.Offset(32*cc).Idx(R11, 8)
		dx := memx(RDI, pan.dx()+4*cc, R11, 1)
		c.VMOVUPS(a, sum)
		c.VMULPS_BCST(dx, d, prod)
		c.VCVTDQ2PS(yr(16+cc), f)
		c.VFMADD231PS(prod, f, sum)
		if dmin != nil {
			c.VMULPS_BCST(dx, dmin, prod)
			c.VCVTDQ2PS(yr(cc), f)
			c.VFNMADD231PS(prod, f, sum)
		}
		c.VMOVUPS(sum, a)
	}
}

// x8kNext closes a GEMM X8 kernel's loops: the next eight columns of the
// pass, the next super-block with its panel, and at the end the column
// sums in the frame from acc on stored to out.
func x8kNext(t *superType, pan kPanel, acc Mem) {
	c.ADDQ(U8(32), R11)
	c.CMPQ(R11, R9)
	c.JB(ref("pass"))

	c.ADDQ(U32(x8SuperBytes(t)), RSI)
	c.ADDQ(U32(pan.bytes()), RDI)
	decJNZ(RCX, "super")

	loadArgs("out outStride cols", R12, R13, RCX)
	c.SHLQ(U8(2), R13)
	c.LEAQ(acc, RAX)
	label("store")
	c.VMOVUPS(mem(RAX, 0), Y0)
	c.VMOVUPS(Y0, mem(R12, 0))
	c.ADDQ(U8(32), RAX)
	c.ADDQ(R13, R12)
	decJNZ(RCX, "store")
	retVoid()
}

// The GEMM kernel of Q6_K's X8 layout, as gemmX8K's (gemmQ6_KX8GVNNI):
// a group of four elements g of half h is three chunks (ql dwords 16h+g
// and 16h+8+g, qh dword 8h+g) that hold the unsigned 6-bit values of the
// four quarters q for all eight rows, each facing sub-block j = 8h+2q+g/4
// of the panel. A pass of eight columns takes two rounds: quarters 0 and
// 2 (the first ql chunk's low and high nibbles), then 1 and 3. Per quarter
// and column one register runs on over the quarter's sub-blocks 2q, 2q+1,
// 8+2q, 9+2q (Abel's sum as in gemmX8K, with the scales' differences along
// that chain); it starts at the panel's T_j = −32·Σy_j and adds the next
// sub-block's T_j at each step, so that S = Σ_j sc_j·(T_j + Σu·y) is the
// decode kernels' integer, and acc += S·(d·d_x) fused.
//
// Frame: the 32 columns' float accumulators, the chains' 16 scale
// differences, d as floats.
//
// Registers: Y0-Y7 the round's low quarter's running sums, Y8-Y15 the
// high one's, Y16-Y23 S, Y24 0x0F, Y25 0x30, Y26 the qh chunk, Y27/Y28
// the quarters' values, Y29 scratch. General as gemmX8K's.

const (
	x8k6Acc   = 0
	x8k6Dsc   = x8k6Acc + 32*32
	x8k6D     = x8k6Dsc + 16*32
	x8k6Frame = x8k6D + 32
)

// q6Chain is the sub-blocks quarter q's running sums pass, in order.
func q6Chain(q int) [4]int { return [4]int{2 * q, 2*q + 1, 8 + 2*q, 9 + 2*q} }

// gemmX8Q6 emits the GEMM kernel of Q6_K's X8 layout.
func gemmX8Q6(t *superType) {
	pan := kPanel{16}
	text(fmt.Sprintf("gemm%sX8GVNNI", t.name), 0, gemmSig)
	at := x8kBegin(x8k6Frame, x8k6Acc, Y29, func() {
		bcast32(0x0F0F0F0F, Y24)
		bcast32(0x30303030, Y25)
	})

	label("super")
	// The chains' scale differences; sc_j in Y0-Y15.
	for j := 0; j < 16; j++ {
		c.VPMOVSXBD(mem(RSI, 16+8*j), yr(j))
	}
	for q := 0; q < 4; q++ {
		ch := q6Chain(q)
		for i := 0; i < 4; i++ {
			dst := at(x8k6Dsc + 32*(4*q+i))
			if i == 3 {
				c.VMOVDQU32(yr(ch[i]), dst)
				continue
			}
			c.VPSUBD(yr(ch[i+1]), yr(ch[i]), Y29)
			c.VMOVDQU32(Y29, dst)
		}
	}
	c.VCVTPH2PS(mem(RSI, 0), Y29)
	c.VMOVUPS(Y29, at(x8k6D))

	c.XORQ(R11, R11)
	label("pass")
	col := func(off, cc int) Mem { return memx(RDI, off+4*cc, R11, 1) }
	tOff := func(j int) int { return j*pan.subBytes() + 128*pan.groups() }
	for cc := 0; cc < 8; cc++ {
		zero(yr(16 + cc))
	}
	for round := 0; round < 2; round++ {
		quarters := [2]int{round, round + 2}
		for k, q := range quarters {
			for cc := 0; cc < 8; cc++ {
				c.VPBROADCASTD(col(tOff(q6Chain(q)[0]), cc), yr(8*k+cc))
			}
		}
		// step folds chain position i of both quarters into S and,
		// unless it is the last, starts the next sub-block with its T_j.
		step := func(i int) {
			for k, q := range quarters {
				for cc := 0; cc < 8; cc++ {
					r := yr(8*k + cc)
					c.VPMULLD(at(x8k6Dsc+32*(4*q+i)), r, Y29)
					c.VPADDD(Y29, yr(16+cc), yr(16+cc))
					if i < 3 {
						c.VPADDD_BCST(col(tOff(q6Chain(q)[i+1]), cc), r, r)
					}
				}
			}
		}
		for h := 0; h < 2; h++ {
			for g := 0; g < 8; g++ {
				if g == 4 || (h == 1 && g == 0) {
					step(2*h + g/4 - 1)
				}
				base := 144 + 96*(8*h+g)
				ql := mem(RSI, base+32*round)
				c.VMOVDQU32(mem(RSI, base+64), Y26)
				// The low quarter: the low nibbles, qh bits 2q..2q+1
				// moved to bits 4-5.
				c.VPANDD(ql, Y24, Y27)
				c.VPSLLD(U8(4-2*round), Y26, Y29)
				c.VPTERNLOGD(U8(0xF8), Y25, Y29, Y27)
				// The high quarter (q+2): the high nibbles, qh bits
				// 4+2q..5+2q.
				c.VPSRLD(U8(4), ql, Y28)
				c.VPANDD(Y24, Y28, Y28)
				hq := Y26
				if round == 1 {
					c.VPSRLD(U8(2), Y26, Y29)
					hq = Y29
				}
				c.VPTERNLOGD(U8(0xF8), Y25, hq, Y28)
				for k, q := range quarters {
					j := 8*h + 2*q + g/4
					for cc := 0; cc < 8; cc++ {
						VPDPBUSDBcast(col(j*pan.subBytes()+128*(g%4), cc), yr(27+k), yr(8*k+cc))
					}
				}
			}
		}
		step(3)
	}
	c.VMOVUPS(at(x8k6D), Y26)
	x8kAddColumns(at(x8k6Acc), pan, Y26, nil, Y29, Y27, Y28)
	x8kNext(t, pan, at(x8k6Acc))
}
