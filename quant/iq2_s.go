package quant

// IQ2_S super-block of 256 elements, 82 bytes:
//
//	[0:2)   d (fp16)
//	[2:34)  the low eight bits of 32 iq2sGrid indexes, one a group of
//	        eight elements
//	[34:66) signs: byte k covers group k, bit e element e (1 = negative)
//	[66:74) qh: bits 2j, 2j+1 of byte b are the ninth and tenth index
//	        bits of group j of sub-block b
//	[74:82) scales: sub-block b has s = the low nibble of byte b for its
//	        groups 0 and 1, the high nibble for groups 2 and 3
//
// Element e of a group is d·(0.5 + s)/4 · byte e of its grid point,
// negated where its sign bit is set. Any bytes form a valid block.
const iq2_SBytes = 2 + QKK/4 + QKK/16

// iq2SGroup reads group g (0..31) of an IQ2_S block: its grid point, its
// signs and its half sub-block's scale code s.
func iq2SGroup(b []byte, g int) (grid uint64, signs uint8, s uint32) {
	blk := (*[iq2_SBytes]byte)(b)
	return iq2sGrid[iq2SIndex(blk, g/4, g%4)&1023], blk[34+g], uint32(blk[74+g/4]>>(4*uint(g%4/2))) & 15
}

// iq2SIndex is the grid index of group g of sub-block ib.
func iq2SIndex(b *[iq2_SBytes]byte, ib, g int) int {
	return int(b[2+4*ib+g]) | int(b[66+ib]>>(2*uint(g))&3)<<8
}
