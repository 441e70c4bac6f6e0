package quant

// IQ1_S super-block of 256 elements, 50 bytes:
//
//	[0:2)   d (fp16)
//	[2:34)  the low eight bits of 32 iq1sGrid indexes, one a group of
//	        eight elements
//	[34:50) eight little-endian uint16, one a sub-block of 32 elements:
//	        bits 3g..3g+2 the high index bits of its group g, bits 12..14
//	        its scale s, bit 15 the sign of its offset δ
//
// Element e of a group is d·(2s + 1)·(byte e of its grid point + δ), the
// grid byte -1, 0 or 1 and δ = ±1/8 (−1/8 when bit 15 is set). Any bytes
// form a valid block.
const iq1_SBytes = 2 + QKK/8 + QKK/16

// iq1Delta is ggml's IQ1S_DELTA (and IQ1M_DELTA): the offset added to
// every IQ1 lattice element.
const iq1Delta = 0.125

// iq1SGroup reads group g (0..31) of an IQ1_S block: its grid point, its
// sub-block's scale code s and the sign of its offset (true for −δ).
func iq1SGroup(b []byte, g int) (grid uint64, s uint32, neg bool) {
	qh := uint32(le16(b[34+2*(g/4):]))
	return iq1sGrid[uint32(b[2+g])|(qh>>(3*uint(g%4))&7)<<8], qh >> 12 & 7, qh&0x8000 != 0
}

// decodeIQ1 writes the eight elements scale·(int8(byte e of grid) +
// delta), as ggml rounds them.
func decodeIQ1(y []float32, scale, delta float32, grid uint64) {
	y = y[:8]
	for e := range y {
		y[e] = scale * (float32(int8(grid>>(8*uint(e)))) + delta)
	}
}

// dotIQ1_S is ggml_vec_dot_iq1_s_q8_K. Per super-block, exactly in
// integers, Σ_b (2s_b+1)·Σ grid·y and Σ_b (2s_b+1)·±Σ y (the sum of y from
// the Q8_K block's bsums); then d·d_x·(first + 1/8·second).
func dotIQ1_S(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq1_SBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var sumi, sumi1 int32
		for ib := 0; ib < 8; ib++ {
			qh := uint32(le16(a[34+2*ib:]))
			ls := int32(2*(qh>>12&7) + 1)
			var s int32
			for g := 0; g < 4; g++ {
				idx := uint32(a[2+4*ib+g]) | (qh>>(3*uint(g))&7)<<8
				gw, y := iq1sGrid[idx&2047], le64(b[4+32*ib+8*g:])
				s += dot4(gw, y) + dot4(gw>>32, y>>32)
			}
			ys := int32(int16(le16(b[4+QKK+4*ib:]))) + int32(int16(le16(b[4+QKK+4*ib+2:])))
			if qh&0x8000 != 0 {
				ys = -ys
			}
			sumi += ls * s
			sumi1 += ls * ys
		}
		sum += float32(f16At(a[0:])*f32At(b[0:])) * (float32(sumi) + iq1Delta*float32(sumi1))
	}
	return sum
}
