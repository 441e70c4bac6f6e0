package quant

// Q6_K super-block of 256 elements: 128 bytes ql of low nibbles, 64 bytes qh
// of high bit pairs, 16 int8 scales (one per 16 elements), then fp16 d.
// Each half of 128 elements uses 64 bytes of ql and 32 of qh: for l < 32,
// ql[l] holds elements l (low nibble) and l+64 (high), ql[l+32] elements l+32
// and l+96, and qh[l] their top two bits in bit pairs 0, 2, 4, 6 for
// elements l, l+32, l+64, l+96. Element i is d·scale_{i/16}·(q_i - 32).
const q6_KBytes = QKK/2 + QKK/4 + QKK/16 + 2

func dequantQ6_K(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [q6_KBytes]byte](dst, src) {
		d := f16At(b[208:])
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[128+32*h:])
			sc := (*[8]byte)(b[192+8*h:])
			yy := (*[128]float32)(y[128*h:])
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int32(ql[l]&0xf|(qh[l]&3)<<4) - 32
				q2 := int32(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32
				q3 := int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
				q4 := int32(ql[l+32]>>4|(qh[l]>>6)<<4) - 32
				yy[l] = d * float32(int8(sc[is])) * float32(q1)
				yy[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
				yy[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
				yy[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
		}
	}
}

// quantQ6_K follows quantize_row_q6_K_ref: make_qx_quants with 64 levels and
// x² weights per 16 elements, then 8-bit scales relative to the scale of
// largest magnitude mapped to -128.
func quantQ6_K(dst []byte, src []float32) {
	var l [QKK]int8
	var scales [QKK / 16]float32
	for x, b := range blocks[[QKK]float32, [q6_KBytes]byte](src, dst) {
		for ib := 0; ib < QKK/16; ib++ {
			scales[ib] = makeQXQuants(32, x[16*ib:16*ib+16], l[16*ib:16*ib+16], nil)
		}
		maxScale, maxAbsScale := signedAbsMax(scales[:])
		if maxAbsScale < groupMaxEps {
			*b = [q6_KBytes]byte{}
			continue
		}
		iscale := -128 / maxScale
		put16(b[208:], FP32ToFP16(1/iscale))
		d := f16At(b[208:])
		for ib := 0; ib < QKK/16; ib++ {
			b[192+ib] = byte(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
		}
		for j := 0; j < QKK/16; j++ {
			dl := d * float32(int8(b[192+j]))
			if dl == 0 {
				continue // ggml keeps make_qx_quants' levels here
			}
			for i := 16 * j; i < 16*j+16; i++ {
				l[i] = int8(clamp32(nearestInt(float32(x[i]/dl)), -32, 31) + 32)
			}
		}
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(b[64*h:])
			qh := (*[32]byte)(b[128+32*h:])
			q := (*[128]int8)(l[128*h:])
			for i := 0; i < 32; i++ {
				q1, q2, q3, q4 := byte(q[i]), byte(q[i+32]), byte(q[i+64]), byte(q[i+96])
				ql[i] = q1&0xf | (q3&0xf)<<4
				ql[i+32] = q2&0xf | (q4&0xf)<<4
				qh[i] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// dotQ6_K is ggml_vec_dot_q6_K_q8_K: per super-block
// d_w·d_x·Σ_{16-element groups g} scale_g·Σ (q_w-32)·q_x.
func dotQ6_K(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q6_KBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var sumi int32
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(a[64*h:])
			qh := (*[32]byte)(a[128+32*h:])
			sc := (*[8]byte)(a[192+8*h:])
			y := (*[128]byte)(b[4+128*h:])
			for g := 0; g < 2; g++ {
				var s1, s2, s3, s4 int32
				for l := 16 * g; l < 16*g+16; l++ {
					s1 += (int32(ql[l]&0xf|(qh[l]&3)<<4) - 32) * int32(int8(y[l]))
					s2 += (int32(ql[l+32]&0xf|(qh[l]>>2&3)<<4) - 32) * int32(int8(y[l+32]))
					s3 += (int32(ql[l]>>4|(qh[l]>>4&3)<<4) - 32) * int32(int8(y[l+64]))
					s4 += (int32(ql[l+32]>>4|(qh[l]>>6)<<4) - 32) * int32(int8(y[l+96]))
				}
				sumi += int32(int8(sc[g]))*s1 + int32(int8(sc[g+2]))*s2 +
					int32(int8(sc[g+4]))*s3 + int32(int8(sc[g+6]))*s4
			}
		}
		sum += f16At(a[208:]) * f32At(b[0:]) * float32(sumi)
	}
	return sum
}

// swarQ6_K is the pure-Go tile kernel of Q6_K on four rows (see swar.go):
// 6-bit quants leave room for one product per lane sum, and Σ(q_w-32)·q_x
// is taken as Σq_w·q_x - 32·Σq_x per 16 elements.
func swarQ6_K(w0, w1, w2, w3 []byte, p *xpack, acc *[4]float32) {
	nb, ws := swarBlocks(w0, w1, w2, w3, q6_KBytes)
	xq, d, xs := p.q[:64*nb], p.d[:nb], p.s[:16*nb]
	for i, dy := range d {
		var blk [4]*[q6_KBytes]byte
		for r, w := range ws {
			blk[r] = (*[q6_KBytes]byte)(w[q6_KBytes*i:])
		}
		var sumi [4]int32
		for h := 0; h < 2; h++ {
			x := (*[32]uint64)(xq[64*i+32*h:])
			s := (*[8]int32)(xs[16*i+8*h:])
			for kk := 0; kk < 2; kk++ {
				// Words 2k and 2k+1 of each 32 elements are in the 16
				// with scale k/2.
				c0, c1, c2, c3 := 32*s[kk], 32*s[kk+2], 32*s[kk+4], 32*s[kk+6]
				for r, a := range blk {
					ql := (*[64]byte)(a[64*h:])
					qh := (*[32]byte)(a[128+32*h:])
					sc := (*[8]byte)(a[192+8*h:])
					var t0, t1, t2, t3 int32
					for k := 2 * kk; k < 2*kk+2; k++ {
						l1, l2, hb := le64(ql[8*k:]), le64(ql[32+8*k:]), le64(qh[8*k:])
						// The eight 6-bit quants of each group, a byte each,
						// then split into even and odd lanes.
						b0 := l1&nibbles | hb<<4&bits45
						b1 := l2&nibbles | hb<<2&bits45
						b2 := l1>>4&nibbles | hb&bits45
						b3 := l2>>4&nibbles | hb>>2&bits45
						t0 += top16((b0&lanes8)*x[2*k]) + top16((b0>>8&lanes8)*x[2*k+1])
						t1 += top16((b1&lanes8)*x[8+2*k]) + top16((b1>>8&lanes8)*x[9+2*k])
						t2 += top16((b2&lanes8)*x[16+2*k]) + top16((b2>>8&lanes8)*x[17+2*k])
						t3 += top16((b3&lanes8)*x[24+2*k]) + top16((b3>>8&lanes8)*x[25+2*k])
					}
					sumi[r] += int32(int8(sc[kk]))*(t0-c0) + int32(int8(sc[kk+2]))*(t1-c1) +
						int32(int8(sc[kk+4]))*(t2-c2) + int32(int8(sc[kk+6]))*(t3-c3)
				}
			}
		}
		for r, a := range blk {
			acc[r] += f16At(a[208:]) * dy * float32(sumi[r])
		}
	}
}
