package quant

// Q2_K super-block of 256 elements, 84 bytes:
//
//	[0:16)   scales: one byte per 16-element group g, low nibble the scale
//	         code sc_g, high nibble the min code m_g
//	[16:80)  qs: 2-bit quants, four per byte
//	[80:82)  d    (fp16), the scale of the scale codes
//	[82:84)  dmin (fp16), the scale of the min codes
//
// Element i is d·sc_g·q_i - dmin·m_g with g = i/16. The quants are laid out
// in two halves of 128 elements: half h uses qs[32h:32h+32], and element
// 128h + 32j + l (j < 4, l < 32) is bits 2j..2j+1 of qs[32h+l]. So one
// 32-byte load of qs holds four 32-element runs, one per shift, and group g
// = 8h + 2j + l/16.
const q2_KBytes = QKK/16 + QKK/4 + 2 + 2

func dequantQ2_K(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [q2_KBytes]byte](dst, src) {
		d := f16At(b[80:])
		dmin := f16At(b[82:])
		for h := 0; h < 2; h++ {
			q := (*[32]byte)(b[16+32*h:])
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				g := 8*h + 2*j
				sc0, sc1 := b[g], b[g+1]
				d0, m0 := d*float32(sc0&0xf), dmin*float32(sc0>>4)
				d1, m1 := d*float32(sc1&0xf), dmin*float32(sc1>>4)
				yy := (*[32]float32)(y[128*h+32*j:])
				for l := 0; l < 16; l++ {
					yy[l] = d0*float32(q[l]>>shift&3) - m0
					yy[l+16] = d1*float32(q[l+16]>>shift&3) - m1
				}
			}
		}
	}
}

// quantQ2_K follows quantize_row_q2_K_ref, which is also what llama-quantize
// runs without an importance matrix: make_qkx2_quants with 4 levels per
// 16-element group, weighted by |x| and minimising the absolute error (16
// candidate scales from nmax-0.5 in steps of 0.1), then 4-bit scale and min
// codes relative to the largest of each, and a final requantization against
// the stored codes.
func quantQ2_K(dst []byte, src []float32) {
	var l [QKK]uint8
	var laux [16]uint8
	var weights [16]float32
	var scales, mins [QKK / 16]float32
	for x, b := range blocks[[QKK]float32, [q2_KBytes]byte](src, dst) {
		var maxScale, maxMin float32
		for g := 0; g < QKK/16; g++ {
			xs := x[16*g : 16*g+16]
			for i, v := range xs {
				weights[i] = abs32(v)
			}
			scales[g], mins[g] = makeQKX2Quants(3, xs, weights[:], l[16*g:16*g+16], laux[:], -0.5, 0.1, 15, true)
			if scales[g] > maxScale {
				maxScale = scales[g]
			}
			if mins[g] > maxMin {
				maxMin = mins[g]
			}
		}
		// As in ggml, a code is stored through a byte, so an (unexpected)
		// negative one wraps rather than clamps.
		if maxScale > 0 {
			iscale := 15 / maxScale
			for g := range scales {
				b[g] = byte(nearestInt(float32(iscale * scales[g])))
			}
			put16(b[80:], FP32ToFP16(maxScale/15))
		} else {
			clear(b[:16])
			put16(b[80:], 0)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for g := range mins {
				b[g] |= byte(nearestInt(float32(iscale*mins[g])) << 4)
			}
			put16(b[82:], FP32ToFP16(maxMin/15))
		} else {
			put16(b[82:], 0)
		}
		d, dmin := f16At(b[80:]), f16At(b[82:])
		for g := 0; g < QKK/16; g++ {
			dl := float32(d * float32(b[g]&0xf))
			if dl == 0 {
				continue // ggml keeps make_qkx2_quants' levels here
			}
			dm := float32(dmin * float32(b[g]>>4))
			for i := 16 * g; i < 16*g+16; i++ {
				l[i] = uint8(clamp32(nearestInt(float32((x[i]+dm)/dl)), 0, 3))
			}
		}
		packQ2Bits((*[64]byte)(b[16:]), &l)
	}
}

// packQ2Bits stores the low two bits of 256 levels in the Q2_K/Q3_K order:
// byte 32h+l holds elements 128h+l, +32, +64 and +96 in bit pairs 0, 2, 4, 6.
func packQ2Bits(qs *[64]byte, l *[QKK]uint8) {
	for h := 0; h < 2; h++ {
		for i := 0; i < 32; i++ {
			j := 128*h + i
			qs[32*h+i] = l[j]&3 | (l[j+32]&3)<<2 | (l[j+64]&3)<<4 | (l[j+96]&3)<<6
		}
	}
}

// dotQ2_K is ggml_vec_dot_q2_K_q8_K. Per super-block:
//
//	isum  = Σ_g sc_g · Σ_{i in g} q_i·y_i        (exact, int32)
//	summs = Σ_g m_g · bsums_g                    (exact, int32)
//	sum  += (d_x·d)·isum - (d_x·dmin)·summs
//
// Loop order, to mirror in SIMD: for each half h (32 bytes of qs, 128 Q8_K
// quants) and each shift j, the 32 quants (qs[32h:32h+32] >> 2j) & 3 meet
// the 32 activation bytes at 128h+32j; the two 16-element halves of that
// run have their own scale codes 8h+2j and 8h+2j+1. The min term needs no
// quants at all: it comes from the Q8_K bsums.
func dotQ2_K(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q2_KBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		sc := (*[16]byte)(a[0:])
		bsums := (*[32]byte)(b[4+QKK:])
		var summs int32
		for g := 0; g < 16; g++ {
			summs += int32(sc[g]>>4) * bsum(bsums, g)
		}
		var isum int32
		for h := 0; h < 2; h++ {
			q := le64x4(a[16+32*h:])
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				y := (*[32]byte)(b[4+128*h+32*j:])
				var s [4]int32
				for k := 0; k < 4; k++ {
					v := q[k] >> shift & lanes03
					yk := le64(y[8*k:])
					s[k] = dot4(v, yk) + dot4(v>>32, yk>>32)
				}
				g := 8*h + 2*j
				isum += int32(sc[g]&0xf)*(s[0]+s[1]) + int32(sc[g+1]&0xf)*(s[2]+s[3])
			}
		}
		dy := f32At(b[0:])
		dall := dy * f16At(a[80:])
		dmin := dy * f16At(a[82:])
		sum += dall*float32(isum) - dmin*float32(summs)
	}
	return sum
}
