package quant

import (
	"encoding/binary"
	"sync"
)

// The X8 layout of the lattice types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ1_S and IQ1_M, one for the six (1168 bytes a block column, against
// their rows' 528, 592, 656, 784, 400 and 448): their row kernels spend
// half their time or more fetching grid points (a 8- to 11-bit index a
// group of four or eight elements; without the fetches the AVX-512 IQ2_XS
// kernel ran at 7.8 against 4.1 GB/s, one thread), so the repack
// resolves the grid at load time into IQ4_XS's chunks of 4-bit codes and
// keeps a scale for each sixteen elements:
//
//   - the eight F16 d (row r at 2r; IQ1_M's assembled from its scale
//     words);
//   - the scales 2s+1 of the sixteen halves of sub-blocks as int8 (half
//     i, elements 16i..16i+15, row r at 16+8i+r): IQ2_XS's, IQ2_S's and
//     IQ1_M's own, the others' sub-block scale twice;
//   - IQ4_XS's 32 chunks of code nibbles from 144: element 32j+l (l < 16)
//     in the low nibble of row byte 16j+l, element 32j+16+l in its high
//     one, row byte o at 144+32(o/4)+4r+o%4; code c is the index of the
//     element's magnitude with its sign in c&8 (latX8Levels: the IQ2
//     grids' 8, 25, 43; IQ3_XXS's 4, 12 … 62; the IQ1 types' grid −1, 0
//     or 1 plus δ = ±1/8, times 8: 1, 7, 9).
//
// The element is d·(2s+1)·level·f, f = 1/8 (the IQ2 and IQ1 types) or
// 1/4 (IQ3_XXS), as in the row layout; the kernels sum each half exactly,
// times its scale, and apply d·d_x·f a super-block (the power of two
// exact in float32).

// x8LatBytes is the lattice types' X8 block column.
const x8LatBytes = 16 + 8*16 + 8*128

// isLattice reports whether t is one of the lattice types with the X8
// layout above.
func isLattice(t Type) bool {
	switch t {
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M:
		return true
	}
	return false
}

// latX8Factor is f: the power of two the levels times 2s+1 and d stand
// short of an element.
func latX8Factor(t Type) float32 {
	if t == IQ3_XXS {
		return 0.25
	}
	return 0.125
}

// The magnitudes of codes c&7 of the three families of levels.
var (
	iq2Magnitudes   = []int8{8, 25, 43}
	iq3XXSMagnitude = []int8{4, 12, 20, 28, 36, 44, 52, 62}
	iq1Magnitudes   = []int8{1, 7, 9}
)

// latLevels is the table of the sixteen codes' levels of magnitudes m:
// ±m[c&7], negative when c&8 is set (codes past m stand for 0).
func latLevels(m []int8) (v [16]int8) {
	for c := range v {
		if c&7 < len(m) {
			v[c] = m[c&7]
		}
		if c&8 != 0 {
			v[c] = -v[c]
		}
	}
	return v
}

var (
	iq2X8Levels    = latLevels(iq2Magnitudes)
	iq3XXSX8Levels = latLevels(iq3XXSMagnitude)
	iq1X8Levels    = latLevels(iq1Magnitudes)
)

// latX8Levels is the level table of lattice type t's codes.
func latX8Levels(t Type) *[16]int8 {
	switch t {
	case IQ3_XXS:
		return &iq3XXSX8Levels
	case IQ1_S, IQ1_M:
		return &iq1X8Levels
	}
	return &iq2X8Levels
}

// latX8Tables holds, for each grid point of each lattice type, its
// elements' magnitude codes, element e's in byte e of a uint64 (the IQ1
// types' with the offset's sign, the IQ3_XXS points' four elements in the
// low four bytes), and for each sign byte the code sign bits (bit 3 of
// byte e; sgn7: seven stored signs completed by their parity, iq2Signs):
// a group's codes are an OR or two, without a lookup an element, laid
// out as the row bytes take them.
type latX8Tables struct {
	xxs    [256]uint64
	xs     [512]uint64
	s      [1024]uint64
	iq3xxs [256]uint64
	// iq1 is the codes of a grid point with δ = +1/8 (grid·8+1: −1 → 7
	// negative, 0 → 1, 1 → 9) and iq1neg with −1/8 (−1 → 9 negative,
	// 0 → 1 negative, 1 → 7).
	iq1, iq1neg [2048]uint64
	sgn         [256]uint64
	sgn7        [128]uint64
}

var latX8Codes = sync.OnceValue(func() *latX8Tables {
	t := new(latX8Tables)
	code := func(m []int8, v int8) uint64 {
		c := uint64(0)
		if v < 0 {
			c, v = 8, -v
		}
		for i, x := range m {
			if x == v {
				return c | uint64(i)
			}
		}
		panic("quant: a grid value outside its levels")
	}
	codes := func(g uint64, elems int, m []int8, f func(b uint8) int8) uint64 {
		var v uint64
		for e := 0; e < elems; e++ {
			v |= code(m, f(uint8(g>>(8*e)))) << (8 * e)
		}
		return v
	}
	mag := func(b uint8) int8 { return int8(b) }
	for i, g := range iq2xxsGrid {
		t.xxs[i] = codes(g, 8, iq2Magnitudes, mag)
	}
	for i, g := range iq2xsGrid {
		t.xs[i] = codes(g, 8, iq2Magnitudes, mag)
	}
	for i, g := range iq2sGrid {
		t.s[i] = codes(g, 8, iq2Magnitudes, mag)
	}
	for i, g := range iq3xxsGrid {
		t.iq3xxs[i] = codes(uint64(g), 4, iq3XXSMagnitude, mag)
	}
	for i, g := range iq1sGrid {
		t.iq1[i] = codes(g, 8, iq1Magnitudes, func(b uint8) int8 { return 8*int8(b) + 1 })
		t.iq1neg[i] = codes(g, 8, iq1Magnitudes, func(b uint8) int8 { return 8*int8(b) - 1 })
	}
	for s := range t.sgn {
		for e := 0; e < 8; e++ {
			t.sgn[s] |= uint64(s>>e&1) << (8*e + 3)
		}
	}
	for s := range t.sgn7 {
		t.sgn7[s] = t.sgn[iq2Signs(uint32(s))]
	}
	return t
})

// latX8Groups reads the 32 groups of eight elements of a block of lattice
// type t: each group's eight codes (byte e element e's), each half
// sub-block's scale code, and the block's F16 d.
func latX8Groups(t Type, blk []byte, codes *[32]uint64, scales *[16]uint32) (d uint16) {
	tab := latX8Codes()
	both := func(j int, s uint32) { scales[2*j], scales[2*j+1] = s, s }
	switch t {
	case IQ2_XXS:
		for j := 0; j < 8; j++ {
			q := blk[2+8*j : 2+8*j+8]
			aux := le32(q[4:])
			for k := 0; k < 4; k++ {
				codes[4*j+k] = tab.xxs[q[k]] | tab.sgn7[aux>>(7*uint(k))&127]
			}
			both(j, aux>>28)
		}
	case IQ2_XS:
		for g := 0; g < 32; g++ {
			q := uint32(le16(blk[2+2*g:]))
			codes[g] = tab.xs[q&511] | tab.sgn7[q>>9]
		}
		for j := 0; j < 8; j++ {
			scales[2*j], scales[2*j+1] = uint32(blk[66+j]&15), uint32(blk[66+j]>>4)
		}
	case IQ2_S:
		b := (*[iq2_SBytes]byte)(blk)
		for g := 0; g < 32; g++ {
			codes[g] = tab.s[iq2SIndex(b, g/4, g%4)&1023] | tab.sgn[b[34+g]]
		}
		for j := 0; j < 8; j++ {
			scales[2*j], scales[2*j+1] = uint32(b[74+j]&15), uint32(b[74+j]>>4)
		}
	case IQ3_XXS:
		for j := 0; j < 8; j++ {
			aux := le32(blk[66+4*j:])
			for k := 0; k < 4; k++ {
				q := blk[2+8*j+2*k:]
				codes[4*j+k] = (tab.iq3xxs[q[0]] | tab.iq3xxs[q[1]]<<32) | tab.sgn7[aux>>(7*uint(k))&127]
			}
			both(j, aux>>28)
		}
	case IQ1_S:
		for j := 0; j < 8; j++ {
			qh := uint32(le16(blk[34+2*j:]))
			grid := &tab.iq1
			if qh&0x8000 != 0 {
				grid = &tab.iq1neg
			}
			for k := 0; k < 4; k++ {
				codes[4*j+k] = grid[uint32(blk[2+4*j+k])|(qh>>(3*uint(k))&7)<<8]
			}
			both(j, qh>>12&7)
		}
	case IQ1_M:
		b := (*[iq1_MBytes]byte)(blk)
		_, sc := iq1MScale(b)
		for j := 0; j < 8; j++ {
			for k := 0; k < 4; k++ {
				idx, neg := iq1MGroup(b, j, k)
				if neg {
					codes[4*j+k] = tab.iq1neg[idx&2047]
				} else {
					codes[4*j+k] = tab.iq1[idx&2047]
				}
			}
			s := sc[j/2] >> (6 * uint(j%2))
			scales[2*j], scales[2*j+1] = s&7, s>>3&7
		}
		return uint16(sc[0]>>12 | sc[1]>>8&0x00f0 | sc[2]>>4&0x0f00 | sc[3]&0xf000)
	}
	return le16(blk)
}

// repackX8Lattice writes row r's block blk of lattice type t to its place
// in the block column o.
func repackX8Lattice(t Type, o, blk []byte, r int) {
	var codes [32]uint64
	var scales [16]uint32
	binary.LittleEndian.PutUint16(o[2*r:], latX8Groups(t, blk, &codes, &scales))
	for i, s := range scales {
		o[16+8*i+r] = byte(2*s + 1)
	}
	for j := 0; j < 8; j++ {
		// Row bytes 16j+8k..+7 (k = 0, 1): group 4j+k's codes in the low
		// nibbles, group 4j+k+2's in the high ones.
		for k := 0; k < 2; k++ {
			b := codes[4*j+k] | codes[4*j+k+2]<<4
			at := 144 + 32*(4*j+2*k) + 4*r
			binary.LittleEndian.PutUint32(o[at:], uint32(b))
			binary.LittleEndian.PutUint32(o[at+32:], uint32(b>>32))
		}
	}
}
