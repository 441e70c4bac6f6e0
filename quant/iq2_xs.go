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

// dotIQ2_XS is ggml_vec_dot_iq2_xs_q8_K: per sub-block the two halves'
// exact sums times their scales 2s+1, per super-block times d·d_x, and
// the total times 1/8.
func dotIQ2_XS(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq2_XSBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var bsum int32
		for ib := 0; ib < 8; ib++ {
			var s [2]int32
			for g := 0; g < 4; g++ {
				q := uint32(le16(a[2+8*ib+2*g:]))
				s[g/2] += dotSigned8(iq2xsGrid[q&511], iq2Signs(q>>9), le64(b[4+32*ib+8*g:]))
			}
			sc := int32(a[66+ib])
			bsum += s[0]*(2*(sc&15)+1) + s[1]*(2*(sc>>4)+1)
		}
		sum += float32(f16At(a[0:])*f32At(b[0:])) * float32(bsum)
	}
	return 0.125 * sum
}
