package quant

// Q5_K super-block of 256 elements: fp16 d, fp16 dmin, 12 bytes of packed
// 6-bit scales and mins as in Q4_K, 32 bytes qh of fifth bits, then 128
// bytes of low nibbles laid out as in Q4_K. For the 64 elements of 32-byte
// group c, bit 2c of qh[l] is the fifth bit of element 64c+l and bit 2c+1
// that of element 64c+32+l. Element i of sub-block j is d·sc_j·q_i - dmin·m_j.
const q5_KBytes = 2 + 2 + kScaleSize + QKK/8 + QKK/2

func dequantQ5_K(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [q5_KBytes]byte](dst, src) {
		dequantK45(y, b[:], (*[QKK / 2]byte)(b[48:]), (*[32]byte)(b[16:]))
	}
}

// quantQ5_K follows quantize_row_q5_K_ref: make_qkx2_quants with 31 levels
// (16 candidate scales from nmax-0.5 in steps of 0.1), then 6-bit scales and
// mins as in Q4_K.
func quantQ5_K(dst []byte, src []float32) {
	var l [QKK]uint8
	for x, b := range blocks[[QKK]float32, [q5_KBytes]byte](src, dst) {
		quantSubBlocksK4(b[:], x, &l, 31, -0.5, 0.1, 15)
		qh := (*[32]byte)(b[16:])
		*qh = [32]byte{}
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[48+32*c:])
			for i := 0; i < 32; i++ {
				lo, hi := l[64*c+i], l[64*c+32+i]
				qh[i] |= (lo>>4)<<(2*c) | (hi>>4)<<(2*c+1)
				q[i] = lo&0xf | (hi&0xf)<<4
			}
		}
	}
}

// dotQ5_K is ggml_vec_dot_q5_K_q8_K; it differs from dotQ4_K only in the
// fifth bit of each weight quant.
func dotQ5_K(n int, w, x []byte) float32 {
	var sc, m [8]int32
	var sum float32
	for a, b := range dotBlocks[[q5_KBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		scalesMinsK4((*[kScaleSize]byte)(a[4:]), &sc, &m)
		qh := (*[32]byte)(a[16:])
		var sumi int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(a[48+32*c:])
			y0 := (*[32]byte)(b[4+64*c:])
			y1 := (*[32]byte)(b[4+64*c+32:])
			sh := uint(2 * c)
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				h := qh[l] >> sh
				s0 += int32(q[l]&0xf|(h&1)<<4) * int32(int8(y0[l]))
				s1 += int32(q[l]>>4|(h&2)<<3) * int32(int8(y1[l]))
			}
			sumi += sc[2*c]*s0 + sc[2*c+1]*s1
		}
		sum += blockSumK4(a[:], f32At(b[0:]), sumi, minSumK4(&m, (*[32]byte)(b[4+QKK:])))
	}
	return sum
}

// swarQ5_K is the pure-Go tile kernel of Q5_K on four rows (see swar.go),
// with the integer sums of dotQ5_K. Bit 2c of qh[l] is the fifth bit of
// element l of sub-block 2c, bit 2c+1 that of sub-block 2c+1; 5-bit quants
// leave room for two products per lane sum.
func swarQ5_K(w0, w1, w2, w3 []byte, p *xpack, acc *[4]float32) {
	nb, ws := swarBlocks(w0, w1, w2, w3, q5_KBytes)
	xq, d, bs := p.q[:64*nb], p.d[:nb], p.bs[:16*nb]
	for i, dy := range d {
		x := (*[64]uint64)(xq[64*i:])
		b := (*[16]int32)(bs[16*i:])
		for r, w := range ws {
			a := (*[q5_KBytes]byte)(w[q5_KBytes*i:])
			s := (*[kScaleSize]byte)(a[4:])
			qh := (*[32]byte)(a[16:])
			u0, u1, u2, u3 := le64(qh[0:]), le64(qh[8:]), le64(qh[16:]), le64(qh[24:])
			var sumi, summ int32
			for c := 0; c < 4; c++ {
				q := (*[32]byte)(a[48+32*c:])
				y := (*[16]uint64)(x[16*c:])
				v0, v1, v2, v3 := le64(q[0:]), le64(q[8:]), le64(q[16:]), le64(q[24:])
				h0, h1, h2, h3 := u0>>(2*c), u1>>(2*c), u2>>(2*c), u3>>(2*c)
				s0 := top16((v0&lanes4|(h0&lanes1)<<4)*y[0]+(v0>>8&lanes4|(h0>>8&lanes1)<<4)*y[1]) +
					top16((v1&lanes4|(h1&lanes1)<<4)*y[2]+(v1>>8&lanes4|(h1>>8&lanes1)<<4)*y[3]) +
					top16((v2&lanes4|(h2&lanes1)<<4)*y[4]+(v2>>8&lanes4|(h2>>8&lanes1)<<4)*y[5]) +
					top16((v3&lanes4|(h3&lanes1)<<4)*y[6]+(v3>>8&lanes4|(h3>>8&lanes1)<<4)*y[7])
				s1 := top16((v0>>4&lanes4|(h0>>1&lanes1)<<4)*y[8]+(v0>>12&lanes4|(h0>>9&lanes1)<<4)*y[9]) +
					top16((v1>>4&lanes4|(h1>>1&lanes1)<<4)*y[10]+(v1>>12&lanes4|(h1>>9&lanes1)<<4)*y[11]) +
					top16((v2>>4&lanes4|(h2>>1&lanes1)<<4)*y[12]+(v2>>12&lanes4|(h2>>9&lanes1)<<4)*y[13]) +
					top16((v3>>4&lanes4|(h3>>1&lanes1)<<4)*y[14]+(v3>>12&lanes4|(h3>>9&lanes1)<<4)*y[15])
				// The codes are unpacked here, not once per block with
				// scalesMinsK4 as in dotQ5_K: that call, per row and
				// block, made this kernel about a quarter slower
				// (BenchmarkTile, L1).
				sc0, m0 := scaleMinK4(2*c, s)
				sc1, m1 := scaleMinK4(2*c+1, s)
				sumi += int32(sc0)*s0 + int32(sc1)*s1
				summ += int32(m0)*(b[4*c]+b[4*c+1]) + int32(m1)*(b[4*c+2]+b[4*c+3])
			}
			acc[r] += blockSumK4(a[:], dy, sumi, summ)
		}
	}
}
