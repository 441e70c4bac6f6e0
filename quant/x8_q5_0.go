package quant

import "encoding/binary"

// Q5_0's X8 layout (x8.go) keeps each row's 32 fifth bits in a dword of
// its own order, the one the kernels take them in with two shifts per
// chunk of codes: bit 2c+h of byte i is the fifth bit of element
// 16h+4c+i, whose nibble is in byte i of the row's dword of chunk c (its
// low nibble for h 0, high for h 1).

// q50X8BitsOf is, for a byte b of a Q5_0 block's qh (bit j the fifth bit
// of element j of eight), b's bits at their X8 places for the first
// byte of qh: bit j at bit 8(j%4) + 2(j/4). Byte k's go k/2 + 4(k%2)
// further (q50X8Bits).
var q50X8BitsOf = func() (t [256]uint32) {
	for b := range t {
		for j := 0; j < 8; j++ {
			t[b] |= uint32(b>>j&1) << (8*(j%4) + 2*(j/4))
		}
	}
	return t
}()

// q50X8Bits is the X8 dword of a Q5_0 block's fifth bits qh (little
// endian, bit j element j's): byte k of qh holds elements 8k..8k+7,
// so h = k/2 and c = 2(k%2) + j/4.
func q50X8Bits(qh []byte) uint32 {
	return q50X8BitsOf[qh[0]] | q50X8BitsOf[qh[1]]<<4 | q50X8BitsOf[qh[2]]<<1 | q50X8BitsOf[qh[3]]<<5
}

// repackX8Q5_0 writes row r's Q5_0 block blk to its place in the block
// column o: the scale at 2r, the fifth bits at 16+4r, the code bytes'
// dword c at 48+32c+4r.
func repackX8Q5_0(o, blk []byte, r int) {
	o[2*r], o[2*r+1] = blk[0], blk[1]
	binary.LittleEndian.PutUint32(o[16+4*r:], q50X8Bits(blk[2:6]))
	for c := 0; c < 4; c++ {
		put4(o[48+32*c+4*r:], blk[6+4*c:])
	}
}

// x8Q5_0Code is the 5-bit code (0..31, the value plus 16) of element e
// of row r in a Q5_0 X8 block column gb.
func x8Q5_0Code(gb []byte, r, e int) int32 {
	c, i, h := e%16/4, e%4, e/16
	q := gb[48+32*c+4*r+i] >> (4 * h) & 0xF
	hb := gb[16+4*r+i] >> (2*c + h) & 1
	return int32(q | hb<<4)
}

// q50X8Levels is the value of each Q5_0 code: the code less 16.
var q50X8Levels = func() (v [32]int8) {
	for c := range v {
		v[c] = int8(c - 16)
	}
	return v
}()
