package quant

import "encoding/binary"

// Q5_1 block: fp16 scale d, fp16 minimum m, a little-endian uint32 of fifth
// bits, then 16 bytes of low nibbles, laid out as in Q5_0; x = d·q + m.
const q5_1Bytes = 2 + 2 + 4 + QK/2

func dequantQ5_1(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [q5_1Bytes]byte](dst, src) {
		d := f16At(b[0:])
		m := f16At(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		for j, q := range (*[QK / 2]byte)(b[8:]) {
			lo, hi := q5Pair(qh, q, j)
			y[j] = float32(lo)*d + m
			y[j+QK/2] = float32(hi)*d + m
		}
	}
}

// quantQ5_1 follows quantize_row_q5_1_ref: 32 even steps from the block's
// minimum to its maximum.
func quantQ5_1(dst []byte, src []float32) { quantSmall(dst, src, q5_1Bytes, true, 5) }

// dotQ5_1 is ggml_vec_dot_q5_1_q8_1: Σ_blocks d_w·d_x·Σq_w·q_x + m_w·s_x.
func dotQ5_1(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q5_1Bytes]byte, [q8_1Bytes]byte](n/QK, w, x) {
		isum := q5Dot(binary.LittleEndian.Uint32(a[4:]), (*[QK / 2]byte)(a[8:]), (*[QK]byte)(b[4:]), 0)
		sum += (f16At(a[0:])*f16At(b[0:]))*float32(isum) + f16At(a[2:])*f16At(b[2:])
	}
	return sum
}

// swarQ5_1 is the pure-Go tile kernel of Q5_1 on four rows (see swar.go),
// with the block sums of dotQ5_1.
func swarQ5_1(w0, w1, w2, w3 []byte, p *xpack, acc *[4]float32) {
	nb, ws := swarBlocks(w0, w1, w2, w3, q5_1Bytes)
	xq, d, m := p.q[:8*nb], p.d[:nb], p.m[:nb]
	for i, dx := range d {
		x := (*[8]uint64)(xq[8*i:])
		for r, w := range ws {
			a := (*[q5_1Bytes]byte)(w[q5_1Bytes*i:])
			acc[r] += (f16At(a[0:])*dx)*float32(q5Block((*[4]byte)(a[4:]), (*[QK / 2]byte)(a[8:]), x)) + f16At(a[2:])*m[i]
		}
	}
}
