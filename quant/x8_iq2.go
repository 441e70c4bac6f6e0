package quant

import (
	"encoding/binary"
	"sync"
)

// The X8 layout of the 2-bit lattice types IQ2_XXS, IQ2_XS and IQ2_S, one
// for the three (1168 bytes a block column, against their rows' 528, 592
// and 656): their row kernels spend half their time fetching grid points
// (a 9- or 10-bit index a group of eight elements; without the fetches
// the AVX-512 IQ2_XS kernel ran at 7.8 against 4.1 GB/s, one thread),
// so the repack resolves the grid at load time into IQ4_XS's chunks of
// 4-bit codes and keeps a scale for each sixteen elements:
//
//   - the eight F16 d (row r at 2r);
//   - the scales 2s+1 of the sixteen halves of sub-blocks as int8 (half
//     i, elements 16i..16i+15, row r at 16+8i+r): IQ2_XS's and IQ2_S's
//     nibbles, IQ2_XXS's sub-block scale twice;
//   - IQ4_XS's 32 chunks of code nibbles from 144: element 32j+l (l < 16)
//     in the low nibble of row byte 16j+l, element 32j+16+l in its high
//     one, row byte o at 144+32(o/4)+4r+o%4; code c is the index of the
//     element's magnitude (8, 25 or 43: c&3) with its sign in c&8
//     (iq2X8Levels).
//
// The element is d·(2s+1)/8 times its level, as in the row layout; the
// kernels sum each half exactly, times its scale, and apply d·d_x/8 a
// super-block (the power of two exact in float32).

// x8IQ2Bytes is the IQ2 types' X8 block column.
const x8IQ2Bytes = 16 + 8*16 + 8*128

// isIQ2 reports whether t is one of the 2-bit lattice types with the X8
// layout above.
func isIQ2(t Type) bool { return t == IQ2_XXS || t == IQ2_XS || t == IQ2_S }

// iq2X8Levels is the level of each code: ±{8, 25, 43}[c&3], negative when
// c&8 is set (c&3 == 3 is never written).
var iq2X8Levels = func() (v [16]int8) {
	for c := range v {
		v[c] = [4]int8{8, 25, 43, 0}[c&3]
		if c&8 != 0 {
			v[c] = -v[c]
		}
	}
	return v
}()

// iq2X8Tables holds, for each IQ2 type's grid entry, its eight magnitude
// indexes as the nibbles of a uint32 (element e in nibble e), and for each
// sign byte the nibbles' sign bits: a group's codes are one OR, without a
// lookup an element.
type iq2X8Tables struct {
	xxs [256]uint32
	xs  [512]uint32
	s   [1024]uint32
	sgn [256]uint32
	// sgn7 is sgn of seven stored sign bits completed by their parity
	// (iq2Signs).
	sgn7 [128]uint32
}

var iq2X8Codes = sync.OnceValue(func() *iq2X8Tables {
	t := new(iq2X8Tables)
	mags := func(g uint64) uint32 {
		var v uint32
		for e := 0; e < 8; e++ {
			var m uint32
			switch g >> (8 * e) & 0xFF {
			case 25:
				m = 1
			case 43:
				m = 2
			}
			v |= m << (4 * e)
		}
		return v
	}
	for i, g := range iq2xxsGrid {
		t.xxs[i] = mags(g)
	}
	for i, g := range iq2xsGrid {
		t.xs[i] = mags(g)
	}
	for i, g := range iq2sGrid {
		t.s[i] = mags(g)
	}
	for s := range t.sgn {
		for e := 0; e < 8; e++ {
			t.sgn[s] |= uint32(s>>e&1) << (4*e + 3)
		}
	}
	for s := range t.sgn7 {
		t.sgn7[s] = t.sgn[iq2Signs(uint32(s))]
	}
	return t
})

// iq2X8Groups reads the 32 groups of an IQ2 block of type t: each
// group's eight codes as nibbles, and each half sub-block's scale code.
func iq2X8Groups(t Type, blk []byte, codes *[32]uint32, scales *[16]uint32) {
	tab := iq2X8Codes()
	switch t {
	case IQ2_XXS:
		for j := 0; j < 8; j++ {
			q := blk[2+8*j : 2+8*j+8]
			aux := le32(q[4:])
			for k := 0; k < 4; k++ {
				codes[4*j+k] = tab.xxs[q[k]] | tab.sgn7[aux>>(7*uint(k))&127]
			}
			scales[2*j], scales[2*j+1] = aux>>28, aux>>28
		}
	case IQ2_XS:
		for g := 0; g < 32; g++ {
			q := uint32(le16(blk[2+2*g:]))
			codes[g] = tab.xs[q&511] | tab.sgn7[q>>9]
		}
		for j := 0; j < 8; j++ {
			scales[2*j], scales[2*j+1] = uint32(blk[66+j]&15), uint32(blk[66+j]>>4)
		}
	default:
		b := (*[iq2_SBytes]byte)(blk)
		for g := 0; g < 32; g++ {
			codes[g] = tab.s[iq2SIndex(b, g/4, g%4)&1023] | tab.sgn[b[34+g]]
		}
		for j := 0; j < 8; j++ {
			scales[2*j], scales[2*j+1] = uint32(b[74+j]&15), uint32(b[74+j]>>4)
		}
	}
}

// nibblesToBytes moves nibble e of v to the low nibble of byte e.
func nibblesToBytes(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	return (x | x<<4) & 0x0F0F0F0F0F0F0F0F
}

// repackX8IQ2 writes row r's block blk of IQ2 type t to its place in the
// block column o.
func repackX8IQ2(t Type, o, blk []byte, r int) {
	var codes [32]uint32
	var scales [16]uint32
	iq2X8Groups(t, blk, &codes, &scales)
	o[2*r], o[2*r+1] = blk[0], blk[1]
	for i, s := range scales {
		o[16+8*i+r] = byte(2*s + 1)
	}
	for j := 0; j < 8; j++ {
		// Row bytes 16j+8k..+7 (k = 0, 1): group 4j+k's codes in the low
		// nibbles, group 4j+k+2's in the high ones.
		for k := 0; k < 2; k++ {
			b := nibblesToBytes(codes[4*j+k]) | nibblesToBytes(codes[4*j+k+2])<<4
			at := 144 + 32*(4*j+2*k) + 4*r
			binary.LittleEndian.PutUint32(o[at:], uint32(b))
			binary.LittleEndian.PutUint32(o[at+32:], uint32(b>>32))
		}
	}
}
