package quant

import "encoding/binary"

// Q5_1 block: fp16 scale d, fp16 minimum m, a little-endian uint32 of fifth
// bits, then 16 bytes of low nibbles, laid out as in Q5_0; x = d·q + m.
const q5_1Bytes = 2 + 2 + 4 + QK/2

func dequantQ5_1(dst []float32, src []byte) {
	for y, b := range blocks(dst, QK, src, q5_1Bytes) {
		b := (*[q5_1Bytes]byte)(b)
		y := (*[QK]float32)(y)
		d := f16At(b[0:])
		m := f16At(b[2:])
		qh := binary.LittleEndian.Uint32(b[4:])
		for j := 0; j < QK/2; j++ {
			q := b[8+j]
			lo := uint32(q&0xf) | (qh>>j&1)<<4
			hi := uint32(q>>4) | (qh>>(j+QK/2)&1)<<4
			y[j] = float32(lo)*d + m
			y[j+QK/2] = float32(hi)*d + m
		}
	}
}

// quantQ5_1 follows quantize_row_q5_1_ref: 32 even steps from the block's
// minimum to its maximum.
func quantQ5_1(dst []byte, src []float32) {
	for x, b := range blocks(src, QK, dst, q5_1Bytes) {
		x := (*[QK]float32)(x)
		b := (*[q5_1Bytes]byte)(b)
		min, max := minMax(x[:])
		d := (max - min) / 31
		id := invScale(d)
		put16(b[0:], FP32ToFP16(d))
		put16(b[2:], FP32ToFP16(min))
		var qh uint32
		for j := 0; j < QK/2; j++ {
			lo := truncClamp(float32((x[j]-min)*id)+0.5, 31)
			hi := truncClamp(float32((x[j+QK/2]-min)*id)+0.5, 31)
			b[8+j] = lo&0xf | hi<<4
			qh |= uint32(lo>>4) << j
			qh |= uint32(hi>>4) << (j + QK/2)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}

// dotQ5_1 is ggml_vec_dot_q5_1_q8_1: Σ_blocks d_w·d_x·Σq_w·q_x + m_w·s_x.
func dotQ5_1(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks(n/QK, w, q5_1Bytes, x, q8_1Bytes) {
		a := (*[q5_1Bytes]byte)(a)
		b := (*[q8_1Bytes]byte)(b)
		qh := binary.LittleEndian.Uint32(a[4:])
		var s0, s1 int32
		for j := 0; j < QK/2; j++ {
			q := a[8+j]
			lo := int32(q&0xf) | int32(qh>>j&1)<<4
			hi := int32(q>>4) | int32(qh>>(j+QK/2)&1)<<4
			s0 += lo * int32(int8(b[4+j]))
			s1 += hi * int32(int8(b[4+QK/2+j]))
		}
		sum += (f16At(a[0:])*f16At(b[0:]))*float32(s0+s1) + f16At(a[2:])*f16At(b[2:])
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
