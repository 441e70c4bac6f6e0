package quant

// IQ3_XXS super-block of 256 elements, 98 bytes:
//
//	[0:2)   d (fp16)
//	[2:66)  64 iq3xxsGrid indexes, one a group of four elements
//	[66:98) one little-endian uint32 a sub-block of 32 elements: bits
//	        7k..7k+6 the signs (iq2Signs) of its elements 8k..8k+7, the
//	        top four bits its scale s
//
// Element j of sub-block b is d·(0.5 + s)/2 · byte j%4 of
// iq3xxsGrid[index 8b + j/4], negated where its sign bit is set. Any bytes
// form a valid block.
const iq3_XXSBytes = 2 + 3*QKK/8

// iq3XXSGroup reads elements 8k..8k+7 (k = 0..31) of an IQ3_XXS block:
// their two grid points, their signs and their sub-block's scale code s.
func iq3XXSGroup(b []byte, k int) (grid uint64, signs uint8, s uint32) {
	blk := (*[iq3_XXSBytes]byte)(b)
	aux := le32(blk[66+4*(k/4):])
	return iq3xxsPair(blk, k/4, k%4), iq2Signs(aux >> (7 * uint(k%4))), aux >> 28
}

// iq3xxsPair is the eight magnitudes of elements 8k..8k+7 of sub-block
// ib: two grid points side by side.
func iq3xxsPair(b *[iq3_XXSBytes]byte, ib, k int) uint64 {
	return uint64(iq3xxsGrid[b[2+8*ib+2*k]]) | uint64(iq3xxsGrid[b[2+8*ib+2*k+1]])<<32
}

// dotIQ3_XXS is ggml_vec_dot_iq3_xxs_q8_K: per sub-block the exact sum
// times 2s+1, per super-block times d·d_x, the total times 1/4.
func dotIQ3_XXS(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq3_XXSBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var bsum int32
		for ib := 0; ib < 8; ib++ {
			aux := le32(a[66+4*ib:])
			var s int32
			for k := 0; k < 4; k++ {
				s += dotSigned8(iq3xxsPair(a, ib, k), iq2Signs(aux>>(7*uint(k))), le64(b[4+32*ib+8*k:]))
			}
			bsum += s * int32(2*(aux>>28)+1)
		}
		sum += float32(f16At(a[0:])*f32At(b[0:])) * float32(bsum)
	}
	return 0.25 * sum
}
