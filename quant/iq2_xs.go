package quant

// IQ2_XS super-block of 256 elements, 74 bytes:
//
//	[2:66)  32 little-endian uint16, one a group of eight elements: bits
//	        0..8 an iq2xsGrid index, bits 9..15 the group's signs
//	        (iq2Signs)
//	[66:74) scales: sub-block b (elements 32b..32b+31) has s = the low
//	        nibble of byte b for its groups 0 and 1, the high nibble for
//	        groups 2 and 3
//
// after d (fp16) at [0:2). Element e of a group is
// d·(0.5 + s)/4 · byte e of its grid point, negated where its sign bit is
// set. Any bytes form a valid block.
const iq2_XSBytes = 2 + QKK/4 + QKK/32

// iq2XSGroup reads group g (0..31) of an IQ2_XS block: its grid point, its
// signs and its half sub-block's scale code s.
func iq2XSGroup(b []byte, g int) (grid uint64, signs uint8, s uint32) {
	q := uint32(le16(b[2+2*g:]))
	return iq2xsGrid[q&511], iq2Signs(q >> 9), uint32(b[66+g/4]>>(4*uint(g%4/2))) & 15
}
