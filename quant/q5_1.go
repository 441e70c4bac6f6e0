package quant

import "encoding/binary"

// Q5_1 block: fp16 scale d, fp16 minimum m, a little-endian uint32 of fifth
// bits, then 16 bytes of low nibbles, laid out as in Q5_0; x = d·q + m.
const q5_1Bytes = 2 + 2 + 4 + QK/2

func dequantQ5_1(dst []float32, src []byte) {
	for len(dst) >= QK && len(src) >= q5_1Bytes {
		b := (*[q5_1Bytes]byte)(src)
		y := (*[QK]float32)(dst)
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
		src = src[q5_1Bytes:]
		dst = dst[QK:]
	}
}

// quantQ5_1 follows quantize_row_q5_1_ref: 32 even steps from the block's
// minimum to its maximum.
func quantQ5_1(dst []byte, src []float32) {
	for len(src) >= QK && len(dst) >= q5_1Bytes {
		x := (*[QK]float32)(src)
		b := (*[q5_1Bytes]byte)(dst)
		min, max := minMax(x[:])
		d := (max - min) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
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
		src = src[QK:]
		dst = dst[q5_1Bytes:]
	}
}

// dotQ5_1 is ggml_vec_dot_q5_1_q8_1: Σ_blocks d_w·d_x·Σq_w·q_x + m_w·s_x.
func dotQ5_1(n int, w, x []byte) float32 {
	nb := n / QK
	w = w[:nb*q5_1Bytes]
	x = x[:nb*q8_1Bytes]
	var sum float32
	for len(w) >= q5_1Bytes && len(x) >= q8_1Bytes {
		a := (*[q5_1Bytes]byte)(w)
		b := (*[q8_1Bytes]byte)(x)
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
		w = w[q5_1Bytes:]
		x = x[q8_1Bytes:]
	}
	return sum
}

// swarQ5_1 is the pure-Go tile kernel's row of Q5_1 (see swar.go), with
// the block sums of dotQ5_1.
func swarQ5_1(w []byte, ps []xpack, acc []float32) {
	acc = acc[:len(ps)]
	for i := 0; i < len(w)/q5_1Bytes; i++ {
		a := (*[q5_1Bytes]byte)(w[q5_1Bytes*i:])
		lo, hi := le64(a[8:]), le64(a[16:])
		// Byte k of qh holds the fifth bits of elements 8k..8k+7, which
		// are words 2k and 2k+1 of the packQ8 order.
		h0, h1, h2, h3 := a[4], a[5], a[6], a[7]
		w0, w1 := lo&lanes4|q5Bits[h0], lo>>8&lanes4|q5Bits[h0>>1]
		w2, w3 := hi&lanes4|q5Bits[h1], hi>>8&lanes4|q5Bits[h1>>1]
		w4, w5 := lo>>4&lanes4|q5Bits[h2], lo>>12&lanes4|q5Bits[h2>>1]
		w6, w7 := hi>>4&lanes4|q5Bits[h3], hi>>12&lanes4|q5Bits[h3>>1]
		dw, mw := f16At(a[0:]), f16At(a[2:])
		for c := range acc {
			p := &ps[c]
			x := (*[8]uint64)(p.q[8*i:])
			s := top16(w0*x[0]+w1*x[1]) + top16(w2*x[2]+w3*x[3]) +
				top16(w4*x[4]+w5*x[5]) + top16(w6*x[6]+w7*x[7])
			acc[c] += (dw*p.d[i])*float32(s) + mw*p.m[i]
		}
	}
}
