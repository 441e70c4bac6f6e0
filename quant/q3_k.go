package quant

// Q3_K super-block of 256 elements, 110 bytes:
//
//	[0:32)    hmask: the third (high) bit of every quant
//	[32:96)   qs: the low two bits, four per byte, in the Q2_K order
//	[96:108)  scales: sixteen 6-bit signed scale codes, packed (q3KScale)
//	[108:110) d (fp16)
//
// Element i is d·(s_g-32)·(q_i-4) with g = i/16 and q_i in 0..7. Half h
// (elements 128h…128h+127) uses qs[32+32h:32+32h+32]: element
// 128h + 32j + l (j < 4, l < 32) has its low bits in bits 2j..2j+1 of that
// byte l, and its high bit in bit 4h+j of hmask[l]. A clear high bit means
// q-4 is negative: the value is low2 - 4·(1 - hbit).
const q3_KBytes = QKK/8 + QKK/4 + 12 + 2

// q3KScale returns the 6-bit scale code of group g (0..15), 0..63: its low
// four bits are nibble g/8 of byte g%8 (low nibble first), its top two bits
// are bits 2·(g/4)..2·(g/4)+1 of byte 8 + g%4.
func q3KScale(s *[12]byte, g int) int32 {
	lo := s[g%8] >> (4 * uint(g/8)) & 0xf
	hi := s[8+g%4] >> (2 * uint(g/4)) & 3
	return int32(lo | hi<<4)
}

// q3KScales decodes all sixteen scale codes minus 32.
func q3KScales(s *[12]byte, out *[16]int32) {
	for g := 0; g < 16; g++ {
		out[g] = q3KScale(s, g) - 32
	}
}

func dequantQ3_K(dst []float32, src []byte) {
	var sc [16]int32
	for y, b := range blocks[[QKK]float32, [q3_KBytes]byte](dst, src) {
		d := f16At(b[108:])
		q3KScales((*[12]byte)(b[96:]), &sc)
		hm := (*[32]byte)(b[0:])
		for h := 0; h < 2; h++ {
			q := (*[32]byte)(b[32+32*h:])
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				m := uint(4*h + j)
				g := 8*h + 2*j
				d0, d1 := d*float32(sc[g]), d*float32(sc[g+1])
				yy := (*[32]float32)(y[128*h+32*j:])
				for l := 0; l < 16; l++ {
					yy[l] = d0 * float32(int32(q[l]>>shift&3|(hm[l]>>m&1)<<2)-4)
					yy[l+16] = d1 * float32(int32(q[l+16]>>shift&3|(hm[l+16]>>m&1)<<2)-4)
				}
			}
		}
	}
}

// quantQ3_K follows quantize_row_q3_K_ref, which is also what llama-quantize
// runs without an importance matrix: make_q3_quants (8 levels, x² weights,
// five rounds of coordinate descent) per 16-element group, then 6-bit scale
// codes relative to the scale of largest magnitude mapped to -32, and a
// final requantization against the stored codes.
func quantQ3_K(dst []byte, src []float32) {
	var l [QKK]uint8
	var scales [QKK / 16]float32
	for x, b := range blocks[[QKK]float32, [q3_KBytes]byte](src, dst) {
		for g := 0; g < QKK/16; g++ {
			scales[g] = makeQ3Quants(4, x[16*g:16*g+16], l[16*g:16*g+16])
		}
		maxScale, _ := signedAbsMax(scales[:])
		s := (*[12]byte)(b[96:])
		*s = [12]byte{}
		if maxScale != 0 {
			iscale := -32 / maxScale
			for g := 0; g < QKK/16; g++ {
				// ggml rounds into an int8 before clamping.
				c := byte(clamp32(int32(int8(nearestInt(float32(iscale*scales[g])))), -32, 31) + 32)
				s[g%8] |= (c & 0xf) << (4 * uint(g/8))
				s[8+g%4] |= (c >> 4) << (2 * uint(g/4))
			}
			put16(b[108:], FP32ToFP16(1/iscale))
		} else {
			put16(b[108:], 0)
		}
		d := f16At(b[108:])
		for g := 0; g < QKK/16; g++ {
			dl := float32(d * float32(q3KScale(s, g)-32))
			if dl == 0 {
				continue // ggml keeps make_q3_quants' levels here
			}
			for i := 16 * g; i < 16*g+16; i++ {
				l[i] = uint8(clamp32(nearestInt(float32(x[i]/dl)), -4, 3) + 4)
			}
		}
		hm := (*[32]byte)(b[0:])
		*hm = [32]byte{}
		for i, v := range l {
			if v > 3 {
				hm[i%32] |= 1 << uint(i/32)
			}
		}
		packQ2Bits((*[64]byte)(b[32:]), &l)
	}
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: it fits
// x ≈ scale·(L-nmax) with L in [0, 2·nmax), starting from the scale that
// maps the element of largest magnitude to -nmax and then moving one level
// at a time while that lowers the x²-weighted squared error, for at most
// five passes. It returns the scale; l receives L.
func makeQ3Quants(nmax int32, x []float32, l []uint8) float32 {
	n := len(x)
	l = l[:n]
	max, amax := signedAbsMax(x)
	if amax < groupMaxEps {
		clear(l)
		return 0
	}
	var li [16]int32 // the signed levels; callers pass 16 elements
	lv := li[:n]
	iscale := -float32(nmax) / max
	var sumlx, suml2 float32
	for i, v := range x {
		q := clamp32(nearestInt(float32(iscale*v)), -nmax, nmax-1)
		lv[i] = q
		w := float32(v * v)
		sumlx += float32(float32(w*v) * float32(q))
		fq := float32(q)
		suml2 += float32(float32(w*fq) * fq)
	}
	for itry := 0; itry < 5; itry++ {
		changed := false
		for i, v := range x {
			w := float32(v * v)
			q := float32(lv[i])
			slx := sumlx - float32(float32(w*v)*q)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*q)*q)
				nq := clamp32(nearestInt(float32(float32(v*sl2)/slx)), -nmax, nmax-1)
				if nq != lv[i] {
					fq := float32(nq)
					slx += float32(float32(w*v) * fq)
					sl2 += float32(float32(w*fq) * fq)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						lv[i] = nq
						sumlx = slx
						suml2 = sl2
						changed = true
					}
				}
			}
		}
		if !changed {
			break
		}
	}
	for i := range lv {
		l[i] = uint8(lv[i] + nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// dotQ3_K is ggml_vec_dot_q3_K_q8_K. Per super-block:
//
//	isum = Σ_g (s_g-32) · Σ_{i in g} (q_i-4)·y_i     (exact, int32)
//	sum += (d·d_x)·isum
//
// ggml's portable code keeps eight int32 lanes and its x86 code eight
// float lanes; both sum the same integers, so only the float rounding
// differs. Loop order, to mirror in SIMD: decode the sixteen scales once;
// for each half h (32 bytes of qs, 128 Q8_K quants) and shift j, the 32
// quants (qs >> 2j) & 3, minus 4 where bit 4h+j of hmask is clear, meet
// the 32 activation bytes at 128h+32j; the two 16-element halves of the
// run take scales 8h+2j and 8h+2j+1. (x86 computes maddubs(low2, y) -
// maddubs(4·!hbit, y), since maddubs wants an unsigned operand.)
func dotQ3_K(n int, w, x []byte) float32 {
	var sc [16]int32
	var sum float32
	for a, b := range dotBlocks[[q3_KBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		q3KScales((*[12]byte)(a[96:]), &sc)
		hm := le64x4(a[0:])
		var isum int32
		for h := 0; h < 2; h++ {
			q := le64x4(a[32+32*h:])
			for j := 0; j < 4; j++ {
				shift, m := uint(2*j), uint(4*h+j)
				y := (*[32]byte)(b[4+128*h+32*j:])
				var s [4]int32
				for k := 0; k < 4; k++ {
					// Eight quants as signed bytes: the low two bits,
					// with the top six set (-4) where the high bit is
					// clear.
					v := q[k]>>shift&lanes03 | (hm[k]>>m&lanes01^lanes01)*0xfc
					yk := le64(y[8*k:])
					s[k] = dot4(v, yk) + dot4(v>>32, yk>>32)
				}
				g := 8*h + 2*j
				isum += sc[g]*(s[0]+s[1]) + sc[g+1]*(s[2]+s[3])
			}
		}
		sum += f16At(a[108:]) * f32At(b[0:]) * float32(isum)
	}
	return sum
}
