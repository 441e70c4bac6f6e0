package quant

import (
	"encoding/binary"
	"sync"
)

// The X8 layouts of the low-bit types (see x8.go for the idea). As for
// Q4_K, packed scales are unpacked to one byte per sub-block and row, so
// the kernels load eight rows' scales with one widening move (unpacking
// IQ4_XS's in the kernel instead, to save its 16 bytes, cost 9 % of the
// kernel's speed from the L2 cache); a block column is read front to
// back, one sequential stream:
//
//   - IQ4_XS (1104 bytes, 16 more than the rows' blocks): the eight F16 d
//     (row r at 2r); the scales ls_j − 32 of the eight sub-blocks as
//     int8 (sub-block j, row r at 16+8j+r); then 32 chunks of 32 bytes,
//     chunk k holding bytes 4k..4k+3 of each row's 128 code bytes (row r
//     at 80+32k+4r).
//   - Q2_K (672 bytes, the rows' blocks exactly): the eight rows' (d,
//     dmin) F16 pairs (row r at 4r); the scale bytes of the sixteen
//     sub-blocks as they are, scale low nibble and min high, in pairs
//     (i, i+2) that the kernel multiplies as words (x8PairScale: pair
//     p = 4h+2q+lh holds sub-blocks 8h+4q+lh and 8h+4q+lh+2, row r's two
//     at 32+16p+2r); then 16 chunks of 32 bytes, chunk k holding
//     bytes 4k..4k+3 of each row's 64 bytes of 2-bit codes (row r at
//     160+32k+4r).
//   - Q3_K (912 bytes, 32 more than the rows' blocks): the eight F16 d
//     (row r at 2r); the scales s_i − 32 of the sixteen sub-blocks as
//     int8, paired as Q2_K's (x8PairScale, from 16); then for m = 0..7
//     the three chunks B0, B1, B2 of element columns 4m..4m+3, at
//     144+96m (+32, +64), row r's dword at 4r. Column l holds the eight
//     3-bit values u = q+4 of the elements 128h+32j+l, (h, j) written
//     hj, in its three bytes: B0 = u00 | u01<<3 | (u12&3)<<6, B1 = u02 | u03<<3
//     | (u13&3)<<6, B2 = u10 | u11<<3 | (u12>>2)<<6 | (u13>>2)<<7, so
//     that the kernel takes each value out with one mask, in place.
//   - IQ4_NL (144 bytes, the rows' blocks exactly): Q4_0's layout (the
//     eight F16 d, then four chunks of the rows' code bytes), whose
//     nibbles index the levels iq4nlValues.
//   - MXFP4 (136 bytes, the rows' blocks exactly): the eight E8M0
//     exponent bytes (row r at r), then Q4_0's four chunks of the rows'
//     code bytes (chunk c at 8+32c holding bytes 4c..4c+3 of each row's
//     sixteen, row r at 8+32c+4r), whose nibbles index the levels
//     mxfp4Values. The exponents stay bytes, made the floats 2^(e−128)
//     (e8m0Half) in the kernel, a few integer operations a block column
//     of eight rows: as F32 (or F16, which cannot hold 2^−128..2^127)
//     they would take 24 bytes more a block column, 18 % more to stream.
//   - IQ3_S (1104 bytes, 224 more than the rows' blocks): IQ4_XS's
//     layout, the grid resolved at load time. The eight F16 d (row r at
//     2r); the sub-blocks' scales 1+2s as int8 (sub-block j, row r at
//     16+8j+r); then IQ4_XS's chunks of code nibbles, element 32j+l
//     (l < 16) in the low nibble of row byte 16j+l and element 32j+16+l
//     in its high one, its code (m−1)/2 | 8·sign for the magnitude m of
//     its grid entry (odd, 1..15) and its sign bit. So one 16-entry
//     table (x8Levels) gives an element's level ±m, and the kernels are
//     IQ4_XS's: the gathers of the row kernel's 9-bit grid indexes, too
//     slow to keep up with memory, are done once at the repack.

// repackX8Low writes row r's block blk of a low-bit type t to its place
// in the block column o, and reports whether t is one (false: nothing
// written).
func repackX8Low(t Type, o, blk []byte, r int) bool {
	switch t {
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M:
		repackX8Lattice(t, o, blk, r)
	case IQ4_XS:
		o[2*r], o[2*r+1] = blk[0], blk[1]
		b := (*[iq4_XSBytes]byte)(blk)
		for j := 0; j < 8; j++ {
			o[16+8*j+r] = byte(int8(iq4XSScale(b, j)))
		}
		for k := 0; k < 32; k++ {
			put4(o[80+32*k+4*r:], blk[8+4*k:])
		}
	case IQ4_NL:
		o[2*r], o[2*r+1] = blk[0], blk[1]
		for c := 0; c < 4; c++ {
			put4(o[16+32*c+4*r:], blk[2+4*c:])
		}
	case Q5_0:
		repackX8Q5_0(o, blk, r)
	case MXFP4:
		o[r] = blk[0]
		for c := 0; c < 4; c++ {
			put4(o[8+32*c+4*r:], blk[1+4*c:])
		}
	case IQ3_S:
		o[2*r], o[2*r+1] = blk[0], blk[1]
		codes := iq3sX8Codes()
		// Group k (elements 4k..4k+3 of sub-block j): its grid index and
		// its four sign bits.
		group := func(j, k int) uint32 {
			i := int(blk[2+8*j+k]) | int(blk[66+j]>>k&1)<<8
			return codes[i<<4|int(blk[74+4*j+k/2]>>(4*(k%2))&0xF)]
		}
		for j := 0; j < 8; j++ {
			o[16+8*j+r] = 1 + 2*(blk[106+j/2]>>(4*(j%2))&0xF)
			// Row bytes 16j+4k..+3 hold groups k (low nibbles) and k+4.
			for k := 0; k < 4; k++ {
				binary.LittleEndian.PutUint32(o[80+32*(4*j+k)+4*r:], group(j, k)|group(j, k+4)<<4)
			}
		}
	case Q2_K:
		put4(o[4*r:], blk[80:84])
		for i := 0; i < 16; i++ {
			o[x8PairScale(32, r, i)] = blk[i]
		}
		for k := 0; k < 16; k++ {
			put4(o[160+32*k+4*r:], blk[16+4*k:])
		}
	case Q3_K:
		o[2*r], o[2*r+1] = blk[108], blk[109]
		s := (*[12]byte)(blk[96:])
		for i := 0; i < 16; i++ {
			o[x8PairScale(16, r, i)] = byte(int8(q3KScale(s, i) - 32))
		}
		for l := 0; l < 32; l++ {
			var u [2][4]byte
			for h := 0; h < 2; h++ {
				for j := 0; j < 4; j++ {
					u[h][j] = blk[32+32*h+l]>>(2*j)&3 | blk[l]>>(4*h+j)&1<<2
				}
			}
			a := 144 + 96*(l/4) + 4*r + l%4
			o[a] = u[0][0] | u[0][1]<<3 | u[1][2]&3<<6
			o[a+32] = u[0][2] | u[0][3]<<3 | u[1][3]&3<<6
			o[a+64] = u[1][0] | u[1][1]<<3 | u[1][2]>>2<<6 | u[1][3]>>2<<7
		}
	default:
		return false
	}
	return true
}

// x8LowCode is the unsigned code of element e (< 256; IQ4_NL's, MXFP4's
// and Q5_0's < 32) of row r in a block column gb of the X8 layout of
// low-bit type t (or Q5_0): IQ4_XS's, IQ4_NL's and MXFP4's 4-bit index,
// Q5_0's 5-bit value plus 16, IQ3_S's
// 4-bit code (x8Levels), Q2_K's 2-bit value, Q3_K's 3-bit value plus 4
// (u).
func x8LowCode(t Type, gb []byte, r, e int) int32 {
	switch t {
	case Q5_0:
		return x8Q5_0Code(gb, r, e)
	case IQ4_NL, MXFP4:
		q := gb[x8BlockCodes(t)+32*(e%16/4)+4*r+e%4]
		if e >= 16 {
			q >>= 4
		}
		return int32(q & 0xF)
	case IQ4_XS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M:
		// Sub-block j's 16 code bytes: element 32j+l (l < 16) in the low
		// nibble of byte 16j+l, element 32j+16+l in its high nibble.
		j, l := e/32, e%32
		o := 16*j + l%16
		base := 80
		if isLattice(t) {
			base = 144
		}
		q := gb[base+32*(o/4)+4*r+o%4]
		if l >= 16 {
			q >>= 4
		}
		return int32(q & 0xF)
	case Q2_K:
		// Element 128h+32j+l: bits 2j, 2j+1 of code byte 32h+l.
		h, j, l := e/128, e%128/32, e%32
		o := 32*h + l
		return int32(gb[160+32*(o/4)+4*r+o%4] >> (2 * j) & 3)
	default:
		// Q3_K: the bytes of column l of the first half.
		h, j, l := e/128, e%128/32, e%32
		at := 144 + 96*(l/4) + 4*r + l%4
		b0, b1, b2 := gb[at], gb[at+32], gb[at+64]
		var u byte
		switch 4*h + j {
		case 0:
			u = b0
		case 1:
			u = b0 >> 3
		case 2:
			u = b1
		case 3:
			u = b1 >> 3
		case 4:
			u = b2
		case 5:
			u = b2 >> 3
		case 6:
			u = b0>>6 | b2>>6&1<<2
		case 7:
			u = b1>>6 | b2>>7<<2
		}
		return int32(u & 7)
	}
}

// iq3sX8Levels is the level of each IQ3_S X8 code: ±(2(c&7)+1), negative
// when c&8 is set.
var iq3sX8Levels = func() (v [16]int8) {
	for c := range v {
		v[c] = int8(2*(c&7) + 1)
		if c&8 != 0 {
			v[c] = -v[c]
		}
	}
	return v
}()

// iq3sX8Codes is, for grid index i and four sign bits s, the X8 codes of
// the group's four elements, one a byte (element e in byte e), at
// i<<4|s: what the repack writes for a group, without a lookup an
// element (which made it seven times slower).
var iq3sX8Codes = sync.OnceValue(func() *[512 << 4]uint32 {
	var t [512 << 4]uint32
	for i, g := range iq3sGrid {
		for s := 0; s < 16; s++ {
			var v uint32
			for e := 0; e < 4; e++ {
				m := g >> (8 * e) & 0xFF
				v |= ((m-1)/2 | uint32(s>>e&1)<<3) << (8 * e)
			}
			t[i<<4|s] = v
		}
	}
	return &t
})

// x8Levels is the table of levels the 4-bit codes of IQ4_XS's X8 layout
// stand for in type t (IQ4_XS, IQ3_S or a lattice type).
func x8Levels(t Type) *[16]int8 {
	if t == IQ3_S {
		return &iq3sX8Levels
	}
	if isLattice(t) {
		return latX8Levels(t)
	}
	return &iq4nlValues
}

// x8PairScale is the offset in a Q2_K or Q3_K X8 block column, whose
// scales begin at base, of row r's scale byte of sub-block i: the
// sub-blocks 8h+2j+lh pair up as j = 2q and 2q+1, in pair 4h+2q+lh.
func x8PairScale(base, r, i int) int {
	h, q, w, lh := i/8, i%8/4, i%4/2, i%2
	return base + 16*(4*h+2*q+lh) + 2*r + w
}

// matVecX8LowGo is the pure-Go twin of the low-bit types' X8 decode
// kernels, in their order of operations. Per super-block, exact in int32:
// IQ4_XS and IQ3_S S = Σ_j sc_j·Σ_l level·y; Q3_K
// S = Σ_i sc_i·(Σ u·y − 4·Σy_i); Q2_K S = Σ_i sc_i·Σ q·y and
// M = Σ_i m_i·Σy_i. Then acc += S·(d·d_x) fused, and for Q2_K
// acc −= M·(dmin·d_x) fused. IQ4_NL, MXFP4 and Q5_0, per block:
// s = Σ level·y (Q5_0's level its code less 16) exactly, then
// acc += d_w·(s·d_x) fused, MXFP4's d_w e8m0Half(e).
func matVecX8LowGo(t Type, n int, w []byte, groups int, x []byte, out []float32) {
	if t == IQ4_NL || t == MXFP4 || t == Q5_0 {
		matVecX8LUTGo(t, n, w, groups, x, out)
		return
	}
	x8EachBlock(t, n/QKK, w, groups, x, q8_KBytes, out, func(gb, xb []byte, acc *[8]float32) {
		dx := f32At(xb)
		y := func(e int) int32 { return int32(int8(xb[4+e])) }
		bsum := func(i int) int32 { return int32(int16(binary.LittleEndian.Uint16(xb[260+2*i:]))) }
		for r := 0; r < 8; r++ {
			var s, m int32
			switch t {
			case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M:
				// A scale each sixteen elements, and d·d_x·f: the row
				// layout's power of two, exact.
				s = scaledLevels(t, gb, r, y, 16)
				acc[r] = fma32(float32(s), f16At(gb[2*r:])*dx*latX8Factor(t), acc[r])
				continue
			case IQ4_XS, IQ3_S:
				s = scaledLevels(t, gb, r, y, 32)
			case Q2_K:
				for i := 0; i < 16; i++ {
					var si int32
					for e := 16 * i; e < 16*i+16; e++ {
						si += x8LowCode(t, gb, r, e) * y(e)
					}
					sc := gb[x8PairScale(32, r, i)]
					s += int32(sc&0xF) * si
					m += int32(sc>>4) * bsum(i)
				}
			case Q3_K:
				for i := 0; i < 16; i++ {
					si := -4 * bsum(i)
					for e := 16 * i; e < 16*i+16; e++ {
						si += x8LowCode(t, gb, r, e) * y(e)
					}
					s += int32(int8(gb[x8PairScale(16, r, i)])) * si
				}
			}
			if t == Q2_K {
				acc[r] = fma32(float32(s), f16At(gb[4*r:])*dx, acc[r])
				acc[r] = fma32(-float32(m), f16At(gb[4*r+2:])*dx, acc[r])
				continue
			}
			acc[r] = fma32(float32(s), f16At(gb[2*r:])*dx, acc[r])
		}
	})
}

// scaledLevels is Σ_i sc_i·Σ level·y of row r of a block column gb in
// IQ4_XS's layout (or the lattice types'): span elements a scale, scale i of
// the row at 16+8i+r.
func scaledLevels(t Type, gb []byte, r int, y func(int) int32, span int) int32 {
	lv := x8Levels(t)
	var s int32
	for i := 0; i < QKK/span; i++ {
		var si int32
		for e := span * i; e < span*(i+1); e++ {
			si += int32(lv[x8LowCode(t, gb, r, e)]) * y(e)
		}
		s += int32(int8(gb[16+8*i+r])) * si
	}
	return s
}

// matVecX8LUTGo is matVecX8LowGo for IQ4_NL, MXFP4 and Q5_0: blocks of
// 32 elements whose codes index a table of levels (Q5_0's the codes
// less 16), and Q8_0 activations.
func matVecX8LUTGo(t Type, n int, w []byte, groups int, x []byte, out []float32) {
	levels := iq4nlValues[:]
	switch t {
	case MXFP4:
		levels = mxfp4Values[:]
	case Q5_0:
		levels = q50X8Levels[:]
	}
	x8EachBlock(t, n/QK, w, groups, x, q8_0Bytes, out, func(gb, xb []byte, acc *[8]float32) {
		dx := f16At(xb)
		for r := 0; r < 8; r++ {
			var s int32
			for e := 0; e < QK; e++ {
				s += int32(levels[x8LowCode(t, gb, r, e)]) * int32(int8(xb[2+e]))
			}
			d := e8m0Half(gb[r])
			if t != MXFP4 {
				d = f16At(gb[2*r:])
			}
			acc[r] = fma32(d, float32(s)*dx, acc[r])
		}
	})
}

// x8BlockCodes is the offset of the code chunks in an IQ4_NL or MXFP4
// block column: past the eight rows' scales, F16 or E8M0.
func x8BlockCodes(t Type) int {
	if t == MXFP4 {
		return 8
	}
	return 16
}

// x8EachBlock runs block over every block column of groups groups of
// nb blocks of type t in the X8 layout w, with the activation block it
// meets (xBytes bytes of x each) and the group's eight running sums,
// which it then writes to out[8·g:]: the loop the twins share.
func x8EachBlock(t Type, nb int, w []byte, groups int, x []byte, xBytes int, out []float32, block func(gb, xb []byte, acc *[8]float32)) {
	bb := X8BlockBytes(t)
	for g := 0; g < groups; g++ {
		var acc [8]float32
		for b := 0; b < nb; b++ {
			block(w[(g*nb+b)*bb:(g*nb+b+1)*bb], x[b*xBytes:(b+1)*xBytes], &acc)
		}
		copy(out[8*g:8*g+8], acc[:])
	}
}
