package quant

// IQ4_XS super-block of 256 elements, 136 bytes:
//
//	[0:2)    d (fp16)
//	[2:4)    scales_h (uint16 LE): bits 2b..2b+1 are the top two bits of
//	         the 6-bit scale code of sub-block b
//	[4:8)    scales_l: the low four bits of the codes, sub-block b in
//	         nibble b%2 (low first) of byte b/2
//	[8:136)  qs: 4-bit codes, 16 bytes per 32-element sub-block in the
//	         IQ4_NL order (byte j: element j low nibble, j+16 high nibble)
//
// Element 32b + j is d·(ls_b - 32)·iq4nlValues[code] with ls_b the 6-bit
// code of sub-block b.
const iq4_XSBytes = 2 + 2 + QKK/64 + QKK/2

// iq4XSScale returns the 6-bit scale code of sub-block ib (0..7) minus 32.
func iq4XSScale(b *[iq4_XSBytes]byte, ib int) int32 {
	h := le16(b[2:])
	ls := b[4+ib/2]>>(4*uint(ib%2))&0xf | byte(h>>(2*uint(ib))&3)<<4
	return int32(ls) - 32
}

func dequantIQ4_XS(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [iq4_XSBytes]byte](dst, src) {
		d := f16At(b[0:])
		for ib := 0; ib < 8; ib++ {
			dequantLUT((*[QK]float32)(y[32*ib:]), (*[QK / 2]byte)(b[8+16*ib:]), d*float32(iq4XSScale(b, ib)), &iq4nlValues)
		}
	}
}

// quantIQ4_XS follows quantize_iq4_xs without an importance matrix (which
// is also ggml's quantize_row_iq4_xs_ref): per 32-element sub-block the
// scale of quantIQ4Blocks, then 6-bit codes relative to the scale of
// largest magnitude mapped to -32, and the codes of each sub-block
// recomputed against d·code (d before fp16 rounding, as in ggml).
func quantIQ4_XS(dst []byte, src []float32) {
	var scales [QKK / 32]float32
	var l [QKK]uint8
	for x, b := range blocks[[QKK]float32, [iq4_XSBytes]byte](src, dst) {
		quantIQ4Blocks(x[:], scales[:], l[:])
		maxScale, _ := signedAbsMax(scales[:])
		d := -maxScale / 32
		put16(b[0:], FP32ToFP16(d))
		id := invScale(d)
		var sh uint16
		clear(b[4:8])
		for ib := range scales {
			c := clamp32(nearestInt(float32(id*scales[ib])), -32, 31)
			dl := float32(d * float32(c))
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			for j := 32 * ib; j < 32*ib+32; j++ {
				l[j] = bestIndexIQ4(float32(idl * x[j]))
			}
			u := uint8(c + 32)
			b[4+ib/2] |= (u & 0xf) << (4 * uint(ib%2))
			sh |= uint16(u>>4) << (2 * uint(ib))
		}
		put16(b[2:], sh)
		packNibbles(b[8:], l[:])
	}
}

// dotIQ4_XS is ggml_vec_dot_iq4_xs_q8_K. Per super-block:
//
//	isum = Σ_b (ls_b-32) · Σ_{i in b} iq4nlValues[code_i]·y_i   (exact, int32)
//	sum += (d·d_x)·isum
//
// This is the x86 order (one float product per super-block); ggml's
// portable code multiplies each sub-block's sum by its own float scale,
// which differs only in rounding. Loop order, to mirror in SIMD: for each
// sub-block b, the 16 code bytes at 8+16b give 32 codes (low nibbles
// elements 0..15, high nibbles 16..31) looked up in the level table and
// multiplied with the Q8_K bytes 32b..32b+31; the sub-block's sum is
// scaled by its integer code.
func dotIQ4_XS(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq4_XSBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		h := le16(a[2:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			ls := int32(a[4+ib/2]>>(4*uint(ib%2))&0xf|byte(h>>(2*uint(ib))&3)<<4) - 32
			isum += ls * lutSum(&iq4nlValues32, (*[16]byte)(a[8+16*ib:]), (*[QK]byte)(b[4+32*ib:]))
		}
		sum += f16At(a[0:]) * f32At(b[0:]) * float32(isum)
	}
	return sum
}
