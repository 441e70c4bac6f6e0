package quant

import "encoding/binary"

// Q5_0 block: fp16 scale d, a little-endian uint32 qh holding the fifth bit
// of element j at bit j, then 16 bytes of low nibbles laid out as in Q4_0;
// x = d·(q-16).
const q5_0Bytes = 2 + 4 + QK/2

func dequantQ5_0(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [q5_0Bytes]byte](dst, src) {
		d := f16At(b[0:])
		qh := binary.LittleEndian.Uint32(b[2:])
		for j, q := range (*[QK / 2]byte)(b[6:]) {
			lo, hi := q5Pair(qh, q, j)
			y[j] = float32(lo-16) * d
			y[j+QK/2] = float32(hi-16) * d
		}
	}
}

// q5Pair returns the 5-bit quants j and j+16 of a Q5_0 or Q5_1 block from
// its fifth bits qh and its nibble byte q = qs[j] (the Q4_0 order): bit j
// of qh is the fifth bit of element j.
func q5Pair(qh uint32, q byte, j int) (lo, hi int32) {
	return int32(q&0xf) | int32(qh>>j&1)<<4, int32(q>>4) | int32(qh>>(j+QK/2)&1)<<4
}

// packQ5 stores 5-bit levels l as q5Pair reads them: the low four bits
// to qs, the fifth bits in the word it returns.
func packQ5(qs *[QK / 2]byte, l *[QK]uint8) (qh uint32) {
	for j := range qs {
		lo, hi := l[j], l[j+QK/2]
		qs[j] = lo&0xf | hi<<4
		qh |= uint32(lo>>4)<<j | uint32(hi>>4)<<(j+QK/2)
	}
	return qh
}

// quantQ5_0 follows quantize_row_q5_0_ref: like Q4_0 with the largest
// magnitude mapped to -16.
func quantQ5_0(dst []byte, src []float32) { quantSmall(dst, src, q5_0Bytes, false, 5) }

// dotQ5_0 is ggml_vec_dot_q5_0_q8_0: Σ_blocks d_w·d_x·Σ(q_w-16)·q_x.
func dotQ5_0(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q5_0Bytes]byte, [q8_0Bytes]byte](n/QK, w, x) {
		isum := q5Dot(binary.LittleEndian.Uint32(a[2:]), (*[QK / 2]byte)(a[6:]), (*[QK]byte)(b[2:]), 16)
		sum += (f16At(a[0:]) * f16At(b[0:])) * float32(isum)
	}
	return sum
}

// q5Dot is Σ(q_j-off)·y_j over the 5-bit quants of a block (nibbles qs,
// fifth bits qh, see q5Pair) and the Q8 quants y: the integer sum of
// dotQ5_0 (off 16) and dotQ5_1 (off 0).
func q5Dot(qh uint32, qs *[QK / 2]byte, y *[QK]byte, off int32) int32 {
	var s0, s1 int32
	for j, q := range qs {
		// q5Pair written out: through it this function is past the
		// inlining budget.
		h := qh >> j
		s0 += (int32(q&0xf|byte(h&1)<<4) - off) * int32(int8(y[j]))
		s1 += (int32(q>>4|byte(h>>(QK/2)&1)<<4) - off) * int32(int8(y[j+QK/2]))
	}
	return s0 + s1
}

// q5Bits maps a byte of Q5_0/Q5_1 fifth bits to bit 4 of 16-bit lanes:
// bits 0, 2, 4, 6 to lanes 0-3; the odd bits go through b>>1.
var q5Bits = func() (t [256]uint64) {
	for b := range t {
		for i := 0; i < 4; i++ {
			t[b] |= uint64(b>>(2*i)&1) << (16*i + 4)
		}
	}
	return t
}()

// q5Block is the exact Σq_w·q_x of a Q5_0/Q5_1 block's quants, nibbles q
// and fifth bits qh, with a packed column x (see swar.go): 5-bit quants
// leave room for two products per lane sum. Byte k of qh holds the fifth
// bits of elements 8k..8k+7, which are words 2k and 2k+1 of the packQ8
// order.
func q5Block(qh *[4]byte, q *[QK / 2]byte, x *[8]uint64) int32 {
	lo, hi := le64(q[0:]), le64(q[8:])
	h0, h1, h2, h3 := qh[0], qh[1], qh[2], qh[3]
	return top16((lo&lanes4|q5Bits[h0])*x[0]+(lo>>8&lanes4|q5Bits[h0>>1])*x[1]) +
		top16((hi&lanes4|q5Bits[h1])*x[2]+(hi>>8&lanes4|q5Bits[h1>>1])*x[3]) +
		top16((lo>>4&lanes4|q5Bits[h2])*x[4]+(lo>>12&lanes4|q5Bits[h2>>1])*x[5]) +
		top16((hi>>4&lanes4|q5Bits[h3])*x[6]+(hi>>12&lanes4|q5Bits[h3>>1])*x[7])
}

// swarQ5_0 is the pure-Go tile kernel of Q5_0 on four rows (see swar.go):
// the block sums of dotQ5_0, with Σ(q_w-16)·q_x taken as
// Σq_w·q_x - 16·Σq_x.
func swarQ5_0(w0, w1, w2, w3 []byte, p *xpack, acc *[4]float32) {
	nb, ws := swarBlocks(w0, w1, w2, w3, q5_0Bytes)
	xq, d, s := p.q[:8*nb], p.d[:nb], p.s[:2*nb]
	for i, dx := range d {
		x := (*[8]uint64)(xq[8*i:])
		c := 16 * (s[2*i] + s[2*i+1])
		for r, w := range ws {
			a := (*[q5_0Bytes]byte)(w[q5_0Bytes*i:])
			acc[r] += (f16At(a[0:]) * dx) * float32(q5Block((*[4]byte)(a[2:]), (*[QK / 2]byte)(a[6:]), x)-c)
		}
	}
}
