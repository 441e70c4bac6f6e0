package quant

// IQ1_M super-block of 256 elements, 56 bytes, without a scale field of
// its own:
//
//	[0:32)  the low eight bits of 32 iq1sGrid indexes, one a group of
//	        eight elements
//	[32:48) qh: two bytes a sub-block of 32 elements; for its groups 2h
//	        and 2h+1, byte h holds in bits 0..2 and 4..6 their high index
//	        bits and in bits 3 and 7 the signs of their offsets δ
//	[48:56) four little-endian uint16 sc: the 3-bit scales of groups
//	        0–1 and 2–3 of sub-block b at bits 6(b%2) and 6(b%2)+3 of
//	        sc[b/2]; the top nibbles of sc[0..3] are, low to high, the
//	        fp16 super-block scale d
//
// Element e of a group is d·(2s + 1)·(byte e of its grid point + δ), δ =
// ±1/8 (−1/8 when its bit is set). Any bytes form a valid block.
const iq1_MBytes = QKK/8 + QKK/16 + QKK/32

// iq1MScale returns IQ1_M's super-block scale d and the block's four
// scale words.
func iq1MScale(b *[iq1_MBytes]byte) (d float32, sc [4]uint32) {
	for i := range sc {
		sc[i] = uint32(le16(b[48+2*i:]))
	}
	h := sc[0]>>12 | sc[1]>>8&0x00f0 | sc[2]>>4&0x0f00 | sc[3]&0xf000
	return FP16ToFP32(uint16(h)), sc
}

// iq1MGroup returns the grid index and offset sign (true for −δ) of group
// g of sub-block ib.
func iq1MGroup(b *[iq1_MBytes]byte, ib, g int) (idx uint32, neg bool) {
	h := uint32(b[32+2*ib+g/2]) >> (4 * uint(g%2))
	return uint32(b[4*ib+g]) | (h&7)<<8, h&8 != 0
}

// iq1MDequantGroup reads group g (0..31) of an IQ1_M block: its grid
// point, its half sub-block's scale code s and the sign of its offset.
func iq1MDequantGroup(b []byte, g int) (grid uint64, s uint32, neg bool) {
	blk := (*[iq1_MBytes]byte)(b)
	ib := g / 4
	idx, neg := iq1MGroup(blk, ib, g%4)
	return iq1sGrid[idx&2047], uint32(le16(blk[48+2*(ib/2):])) >> (6*uint(ib%2) + 3*uint(g%4/2)) & 7, neg
}

// iq1MD is IQ1_M's super-block scale.
func iq1MD(b []byte) float32 {
	d, _ := iq1MScale((*[iq1_MBytes]byte)(b))
	return d
}

// dotIQ1_M is ggml_vec_dot_iq1_m_q8_K: per super-block, exactly in
// integers, Σ grid·y and Σ ±y over each half sub-block, each times its
// scale 2s+1; then d·d_x·(first + 1/8·second).
func dotIQ1_M(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq1_MBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		d, sc := iq1MScale(a)
		var sumi1, sumi2 int32
		for ib := 0; ib < 8; ib++ {
			var s1, s2 [2]int32
			for g := 0; g < 4; g++ {
				idx, neg := iq1MGroup(a, ib, g)
				gw, y := iq1sGrid[idx&2047], le64(b[4+32*ib+8*g:])
				s1[g/2] += dot4(gw, y) + dot4(gw>>32, y>>32)
				ys := dot4(lanes01, y) + dot4(lanes01, y>>32)
				if neg {
					ys = -ys
				}
				s2[g/2] += ys
			}
			s := sc[ib/2] >> (6 * uint(ib%2))
			ls1, ls2 := int32(2*(s&7)+1), int32(2*(s>>3&7)+1)
			sumi1 += s1[0]*ls1 + s1[1]*ls2
			sumi2 += s2[0]*ls1 + s2[1]*ls2
		}
		sum += float32(d*f32At(b[0:])) * (float32(sumi1) + iq1Delta*float32(sumi2))
	}
	return sum
}
