package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The low-bit types' multi-token X8 kernels (rowx8multi.go's skeleton,
// rowx8_lowbit.go's single-token kernels): four tokens share each block
// column's unpacking (IQ4_XS's loop serves IQ3_S too; IQ4_NL's are in
// rowx8_iq.go). All of them keep the single-token kernel's constants (its
// pre, run per token) and sum each token's super-block exactly in int32,
// the same integers as the single-token kernel in another order, then do
// its float operations: so each token's results equal it bit for bit. Per
// token k, acc_k is Y0+k (x8Acc) and S_k Y4+k. The activation dwords reach
// the VPDPBUSDs by embedded broadcast (VPDPBUSDBcast), which saves an
// instruction each and the registers (BenchmarkX8LowbitPrefill, MatVecN:
// 3-9 % faster than with VPBROADCASTD). Four tokens is what Q2_K's and
// Q3_K's registers hold.

// lowS is token k's integer sum of the super-block: Y4+k.
func lowS(k int) Register { return yr(4 + k) }

// lowT is token k's second sum of the super-block in the kernels of
// lowPairs (Q2_K's M_k, Q3_K's T_k): Y16+k.
func lowT(k int) Register { return yr(16 + k) }

// iq4XSX8Multi is iq4XSX8 for several tokens: each chunk's levels (low
// and high nibbles looked up) made once and faced with each token's
// activation dwords into the token's partial sums of the sub-block; per
// sub-block S_k += sc_j·(s_j − 128·Σy_j), the scales widened once. Up to
// four tokens: S_k in Y4+k, two partial sums each (Y16+2k, Y17+2k), the
// levels in Y24-Y27, the scales in Y8. Eight: S_k in Y16+k, one partial
// sum each (Y24+k), the levels in Y8-Y11, the scales in Y12.
var iq4XSX8Multi = x8Multi{d: iq4XSX8, acc: x8Acc, step: x8IQ4XSBytes,
	loop: func(tokens int) {
		wide := tokens > 4
		sAcc, levels, scales := lowS, 24, Y8
		part := func(k, h int) Register { return yr(16 + 2*k + h) }
		if wide {
			sAcc = func(k int) Register { return yr(16 + k) }
			levels, scales = 8, Y12
			part = func(k, _ int) Register { return yr(24 + k) }
		}
		for k := 0; k < tokens; k++ {
			zero(sAcc(k))
		}
		for j := 0; j < 8; j++ {
			for k := 0; k < tokens; k++ {
				zero(part(k, 0))
				if !wide {
					zero(part(k, 1))
				}
			}
			for ch := 0; ch < 4; ch++ {
				lo, hi := yr(levels+ch%2*2), yr(levels+1+ch%2*2)
				chunkLevels(80+32*(4*j+ch), lo, hi)
				for k := 0; k < tokens; k++ {
					VPDPBUSDBcast(xTok(k, 4+32*j+4*ch), lo, part(k, 0))
					VPDPBUSDBcast(xTok(k, 4+32*j+16+4*ch), hi, part(k, 1))
				}
			}
			c.VPMOVSXBD(mem(RSI, 16+8*j), scales)
			for k := 0; k < tokens; k++ {
				p := part(k, 0)
				if !wide {
					c.VPADDD(part(k, 1), p, p)
				}
				c.VPSUBD_BCST(mem(R8, iq4XSX8.frame*k+4*j), p, p)
				c.VPMULLD(p, scales, p)
				c.VPADDD(p, sAcc(k), sAcc(k))
			}
		}
		x8FinishTokens(tokens, sAcc, x8Acc, scales, yr(levels), yr(levels+1))
		nextColumn(x8IQ4XSBytes)
	},
}

// lowPairs runs the pairs of sub-blocks of a Q2_K or Q3_K super-block,
// the single-token kernels' pairs p = 4h+2q+lh of sub-blocks 8h+4q+lh
// and 8h+4q+lh+2 (elements 128h+32j+16lh.., j = 2q and 2q+1), one at a
// time, so that a token holds two sums (Y20+2k, Y21+2k), not eight: per
// step g < 4 of the pair, values(h, q, lh, g) leaves the two sub-blocks'
// values of the step in v, unsigned bytes, each times its own power of
// two, and each token's VPDPBUSDs add them against the activation dwords
// at xAt(h, j, lh, g); then pair(p, sums) folds each
// token's two sums into its accumulators. Each token's super-block sums
// (lowS and lowT) start at zero.
func lowPairs(tokens int, v [2]Register, values func(h, q, lh, g int), xAt func(h, j, lh, g int) int, pair func(p int, sums func(k, i int) Register)) {
	for k := 0; k < tokens; k++ {
		zero(lowS(k))
		zero(lowT(k))
	}
	sums := func(k, i int) Register { return yr(20 + 2*k + i) }
	for lh := 0; lh < 2; lh++ {
		for h := 0; h < 2; h++ {
			for q := 0; q < 2; q++ {
				for k := 0; k < tokens; k++ {
					zero(sums(k, 0))
					zero(sums(k, 1))
				}
				for g := 0; g < 4; g++ {
					values(h, q, lh, g)
					for k := 0; k < tokens; k++ {
						for i := 0; i < 2; i++ {
							VPDPBUSDBcast(xTok(k, xAt(h, 2*q+i, lh, g)), v[i], sums(k, i))
						}
					}
				}
				pair(4*h+2*q+lh, sums)
			}
		}
	}
}

// highWords sets K1 to the high words of dwords, for toWords.
func highWords() {
	c.MOVL(U32(0xAAAAAAAA), EAX)
	c.KMOVD(EAX, K1)
}

// toWords puts s0 (standing times 2^a) in the low words of s0 and s1
// (times 2^b) in the high ones, both at scale 1 (|s| < 2^15), as the
// single-token kernels do; with VPBLENDMW (K1 from highWords), since
// VPBLENDW cannot reach the sums in Y16-Y31.
func toWords(s0, s1 Register, a, b int) {
	if a > 0 {
		c.VPSRAD(U8(uint8(a)), s0, s0)
	}
	c.VPSLLD(U8(uint8(16-b)), s1, s1)
	c.VPBLENDMW(s1, s0, K1, s0)
}

// q2KX8Multi is q2KX8 for several tokens (lowPairs): a step's values are
// its chunk masked in place (Y8, Y9; Y28-Y31 hold the masks 0x03<<2j),
// sub-block j standing times 4^j; per pair the scales (Y12) and mins
// (Y13) widened once, and per token VPDPWSSD adds sc·s to S_k and m·Σy
// to M_k (Y16+k). At the end acc_k += S_k·(d·d_x), −= M_k·(dmin·d_x), as
// x8FinishMin does it, d and dmin (Y10, Y11) converted once.
var q2KX8Multi = x8Multi{d: q2KX8, acc: x8Acc, setup: highWords, step: x8Q2Bytes,
	loop: func(tokens int) {
		mAcc := lowT
		lowPairs(tokens, [2]Register{Y8, Y9},
			func(h, q, lh, g int) {
				at := 160 + 32*(8*h+4*lh+g)
				c.VPANDD(mem(RSI, at), yr(28+2*q), Y8)
				c.VPANDD(mem(RSI, at), yr(29+2*q), Y9)
			},
			func(h, j, lh, g int) int { return 4 + 128*h + 32*j + 16*lh + 4*g },
			func(p int, sums func(k, i int) Register) {
				q := p % 4 / 2
				c.VPMOVZXBW(mem(RSI, 32+16*p), Y12)
				c.VPSRLW(U8(4), Y12, Y13)
				c.VPAND(Y15, Y12, Y12)
				for k := 0; k < tokens; k++ {
					toWords(sums(k, 0), sums(k, 1), 4*q, 2*(2*q+1))
					VPDPWSSD(Y12, sums(k, 0), lowS(k))
					VPDPWSSDBcast(mem(R8, q2KX8.frame*k+4*p), Y13, mAcc(k))
				}
			})
		dDmin(Y9, Y10, Y11)
		for k := 0; k < tokens; k++ {
			x8AddMinToken(k, lowS(k), mAcc(k), Y10, Y11, Y13, Y12, Y14)
		}
		nextColumn(x8Q2Bytes)
	},
}

// q3KX8Multi is q3KX8 for several tokens (lowPairs). A step's values
// (Y28, Y29) come from the three bytes of its element columns (B0, B1,
// B2 at 144+96m, m = 4lh+g) with q3KX8's masks (Y10-Y14: 0x80, 0x40,
// 0x07, 0x38, 0xC0): (h, j) = 00 and 01 are B0's low and middle three
// bits (times 1 and 8), 02 and 03 B1's, 10 and 11 B2's; 12 and 13, split
// between bytes, are joined: u12·16 = (B0&0xC0)>>2 | B2&0x40, u13·32 =
// (B1&0xC0)>>1 | B2&0x80. Per pair the scales (Y8) widened once, and per
// token VPDPWSSD adds sc·s to S_k and sc·Σy to T_k (Y16+k); at the end
// S_k −= 4·T_k and acc_k += S_k·(d·d_x) (x8FinishTokens).
var q3KX8Multi = x8Multi{d: q3KX8, acc: x8Acc, setup: highWords, step: x8Q3Bytes,
	loop: func(tokens int) {
		tAcc := lowT
		lowPairs(tokens, [2]Register{Y28, Y29},
			func(h, q, lh, g int) {
				at := 144 + 96*(4*lh+g)
				if h == 1 && q == 1 {
					c.VPANDD(mem(RSI, at), Y14, Y28)
					c.VPSRLW(U8(2), Y28, Y28)
					c.VPTERNLOGD(U8(0xF8), mem(RSI, at+64), Y11, Y28) // | B2&0x40
					c.VPANDD(mem(RSI, at+32), Y14, Y29)
					c.VPSRLW(U8(1), Y29, Y29)
					c.VPTERNLOGD(U8(0xF8), mem(RSI, at+64), Y10, Y29) // | B2&0x80
					return
				}
				b := mem(RSI, at+32*(2*h+q))
				c.VPANDD(b, Y12, Y28)
				c.VPANDD(b, Y13, Y29)
			},
			func(h, j, lh, g int) int { return 4 + 128*h + 32*j + 4*(4*lh+g) },
			func(p int, sums func(k, i int) Register) {
				c.VPMOVSXBW(mem(RSI, 16+16*p), Y8)
				for k := 0; k < tokens; k++ {
					a, b := 0, 3
					if p >= 4 && p%4 >= 2 { // (h, q) = (1, 1)
						a, b = 4, 5
					}
					toWords(sums(k, 0), sums(k, 1), a, b)
					VPDPWSSD(Y8, sums(k, 0), lowS(k))
					VPDPWSSDBcast(mem(R8, q3KX8.frame*k+4*p), Y8, tAcc(k))
				}
			})
		for k := 0; k < tokens; k++ {
			c.VPSLLD(U8(2), tAcc(k), tAcc(k))
			c.VPSUBD(tAcc(k), lowS(k), lowS(k))
		}
		x8FinishTokens(tokens, lowS, x8Acc, Y8, Y9, Y20)
		nextColumn(x8Q3Bytes)
	},
}
