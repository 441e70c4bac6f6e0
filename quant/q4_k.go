package quant

// Q4_K super-block of 256 elements: fp16 d, fp16 dmin, 12 bytes of packed
// 6-bit scales and mins for eight 32-element sub-blocks (see scaleMinK4),
// then 128 bytes of 4-bit quants. Each 32-byte group of quants covers 64
// elements: low nibbles the first 32, high nibbles the next 32. Element i
// of sub-block j is d·sc_j·q_i - dmin·m_j.
const q4_KBytes = 2 + 2 + kScaleSize + QKK/2

func dequantQ4_K(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [q4_KBytes]byte](dst, src) {
		dequantK45(y, b[:], (*[QKK / 2]byte)(b[16:]), &noFifthBits)
	}
}

// noFifthBits is Q4_K's fifth bits for dequantK45: none.
var noFifthBits [32]byte

// dequantK45 decodes one Q4_K or Q5_K super-block b to y: the header
// (d, dmin, the packed scales and mins), then the 128 bytes of nibbles
// q, each with its fifth bit from qh (zeros for Q4_K; see q5_k.go for
// the bits' order). Element i of sub-block j is d·sc_j·q_i - dmin·m_j.
func dequantK45(y *[QKK]float32, b []byte, q *[QKK / 2]byte, qh *[32]byte) {
	var sc, m [8]int32
	d := f16At(b[0:])
	dmin := f16At(b[2:])
	scalesMinsK4((*[kScaleSize]byte)(b[4:]), &sc, &m)
	for c := 0; c < 4; c++ {
		d0, n0 := d*float32(sc[2*c]), dmin*float32(m[2*c])
		d1, n1 := d*float32(sc[2*c+1]), dmin*float32(m[2*c+1])
		qc := (*[32]byte)(q[32*c:])
		y0 := (*[32]float32)(y[64*c:])
		y1 := (*[32]float32)(y[64*c+32:])
		sh := uint(2 * c)
		for l := 0; l < 32; l++ {
			h := qh[l] >> sh
			y0[l] = d0*float32(qc[l]&0xf|(h&1)<<4) - n0
			y1[l] = d1*float32(qc[l]>>4|(h&2)<<3) - n1
		}
	}
}

// quantQ4_K follows quantize_row_q4_K_ref: make_qkx2_quants with 15 levels
// per sub-block (21 candidate scales from nmax-1 in steps of 0.1), then
// 6-bit scales and mins relative to the largest of each.
func quantQ4_K(dst []byte, src []float32) {
	var l [QKK]uint8
	for x, b := range blocks[[QKK]float32, [q4_KBytes]byte](src, dst) {
		quantSubBlocksK4(b[:], x, &l, 15, -1, 0.1, 20)
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(b[16+32*c:])
			for i := 0; i < 32; i++ {
				q[i] = l[64*c+i] | l[64*c+32+i]<<4
			}
		}
	}
}

// dotQ4_K is ggml_vec_dot_q4_K_q8_K: per super-block
// d_w·d_x·Σ_j sc_j·Σ q_w·q_x  -  dmin_w·d_x·Σ_j m_j·(sum of the Q8_K quants
// of sub-block j), the last sum taken from the Q8_K bsums.
func dotQ4_K(n int, w, x []byte) float32 {
	var sc, m [8]int32
	var sum float32
	for a, b := range dotBlocks[[q4_KBytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		scalesMinsK4((*[kScaleSize]byte)(a[4:]), &sc, &m)
		var sumi int32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(a[16+32*c:])
			y0 := (*[32]byte)(b[4+64*c:])
			y1 := (*[32]byte)(b[4+64*c+32:])
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				s0 += int32(q[l]&0xf) * int32(int8(y0[l]))
				s1 += int32(q[l]>>4) * int32(int8(y1[l]))
			}
			sumi += sc[2*c]*s0 + sc[2*c+1]*s1
		}
		sum += blockSumK4(a[:], f32At(b[0:]), sumi, minSumK4(&m, (*[32]byte)(b[4+QKK:])))
	}
	return sum
}

// bsum reads the i-th int16 sum of 16 quants from a Q8_K block's bsums.
func bsum(b *[32]byte, i int) int32 {
	return int32(int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8))
}

// swarQ4_K is the pure-Go tile kernel of Q4_K on four rows (see swar.go),
// with the integer sums of dotQ4_K. A row at a time: the four rows written
// out side by side ran 11% faster (BenchmarkTile, L1) but were the same
// block four times.
func swarQ4_K(w0, w1, w2, w3 []byte, p *xpack, acc *[4]float32) {
	var sc, m [8]int32
	nb, ws := swarBlocks(w0, w1, w2, w3, q4_KBytes)
	xq, d, bs := p.q[:64*nb], p.d[:nb], p.bs[:16*nb]
	for i, dy := range d {
		x := (*[64]uint64)(xq[64*i:])
		b := (*[16]int32)(bs[16*i:])
		var blk [4]*[q4_KBytes]byte
		for r, w := range ws {
			blk[r] = (*[q4_KBytes]byte)(w[q4_KBytes*i:])
		}
		for r, a := range blk {
			scalesMinsK4((*[kScaleSize]byte)(a[4:]), &sc, &m)
			var sumi, summ int32
			for c := 0; c < 4; c++ {
				y := (*[16]uint64)(x[16*c:])
				q := (*[32]byte)(a[16+32*c:])
				v0, v1, v2, v3 := le64(q[0:]), le64(q[8:]), le64(q[16:]), le64(q[24:])
				s0 := top16(q4Group(v0, v1, (*[4]uint64)(y[0:]))) + top16(q4Group(v2, v3, (*[4]uint64)(y[4:])))
				s1 := top16(q4Group(v0>>4, v1>>4, (*[4]uint64)(y[8:]))) + top16(q4Group(v2>>4, v3>>4, (*[4]uint64)(y[12:])))
				sumi += sc[2*c]*s0 + sc[2*c+1]*s1
				summ += m[2*c]*(b[4*c]+b[4*c+1]) + m[2*c+1]*(b[4*c+2]+b[4*c+3])
			}
			acc[r] += blockSumK4(a[:], dy, sumi, summ)
		}
	}
}
