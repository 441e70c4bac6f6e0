package quant

// IQ2_XXS super-block of 256 elements, 66 bytes:
//
//	[0:2)   d (fp16)
//	[2:66)  eight sub-blocks of 32 elements, eight bytes each: four
//	        iq2xxsGrid indexes (one a group of eight elements), then a
//	        little-endian uint32 whose bits 7g..7g+6 are group g's signs
//	        (iq2Signs) and whose top four bits are the sub-block's scale s
//
// Element e of group g of sub-block b is
//
//	d·(0.5 + s)/4 · byte e of iq2xxsGrid[index g]·(-1 if sign bit e is set)
//
// Any bytes form a valid block.
const iq2_XXSBytes = 2 + QKK/4

// iq2XXSGroup reads group g (0..31) of an IQ2_XXS block: its grid point,
// its signs and its sub-block's scale code s.
func iq2XXSGroup(b []byte, g int) (grid uint64, signs uint8, s uint32) {
	q := b[2+8*(g/4) : 2+8*(g/4)+8]
	aux := le32(q[4:])
	return iq2xxsGrid[q[g%4]], iq2Signs(aux >> (7 * uint(g%4))), aux >> 28
}

// decodeSigned8 writes the eight elements scale·(byte e of grid),
// negated where bit e of signs is set, the product rounded once as ggml
// does.
func decodeSigned8(y []float32, scale float32, grid uint64, signs uint8) {
	y = y[:8]
	for e := range y {
		v := scale * float32(grid>>(8*uint(e))&0xff)
		if signs>>uint(e)&1 != 0 {
			v = -v
		}
		y[e] = v
	}
}

// dotIQ2_XXS is ggml_vec_dot_iq2_xxs_q8_K: per super-block the exact
// integer Σ_b (2s_b+1)·Σ ±grid·y, scaled by d·d_x, and the sum over
// super-blocks times 1/8. The signs are applied to the grid bytes as
// (g ^ m) + (m & 1) per byte (see dotIQ3_S).
func dotIQ2_XXS(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq2_XXSBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var bsum int32
		for ib := 0; ib < 8; ib++ {
			q := a[2+8*ib:]
			aux := le32(q[4:])
			var s int32
			for g := 0; g < 4; g++ {
				s += dotSigned8(iq2xxsGrid[q[g]], iq2Signs(aux>>(7*uint(g))), le64(b[4+32*ib+8*g:]))
			}
			bsum += s * int32(2*(aux>>28)+1)
		}
		sum += float32(f16At(a[0:])*f32At(b[0:])) * float32(bsum)
	}
	return 0.125 * sum
}

// dotSigned8 is Σ_e ±(byte e of grid)·int8(byte e of y), negated where
// bit e of signs is set. No grid byte is 0 or above 127, so negating
// with the mask cannot carry between bytes.
func dotSigned8(grid uint64, signs uint8, y uint64) int32 {
	m := iq3sSignMask[signs]
	v := (grid ^ m) + (m & lanes01)
	return dot4(v, y) + dot4(v>>32, y>>32)
}
