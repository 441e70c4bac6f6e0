package quant

import "math"

// Q4_1 block: fp16 scale d, fp16 minimum m, then 16 bytes of 4-bit quants
// laid out as in Q4_0; x = d·q + m.
const q4_1Bytes = 2 + 2 + QK/2

func dequantQ4_1(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [q4_1Bytes]byte](dst, src) {
		d := f16At(b[0:])
		m := f16At(b[2:])
		for j := 0; j < QK/2; j++ {
			q := b[4+j]
			y[j] = float32(q&0xf)*d + m
			y[j+QK/2] = float32(q>>4)*d + m
		}
	}
}

// quantQ4_1 follows quantize_row_q4_1_ref: 16 even steps from the block's
// minimum to its maximum.
func quantQ4_1(dst []byte, src []float32) { quantSmall(dst, src, q4_1Bytes, true, 4) }

// quantMin is the scale, minimum and levels of quantize_row_q4_1_ref
// (nmax 15) and quantize_row_q5_1_ref (nmax 31): nmax even steps d from
// the block's minimum to its maximum; d and the minimum go to the block's
// head b[0:4] (fp16 each), and element x gets level (x-min)/d in l,
// rounded from (x-min)/d + 0.5 by truncation and clamped to [0, nmax].
func quantMin(b []byte, x *[QK]float32, nmax int32, l *[QK]uint8) {
	min, max := minMax(x[:])
	d := (max - min) / float32(nmax)
	id := invScale(d)
	for j, v := range x {
		l[j] = truncClamp(float32((v-min)*id)+0.5, nmax)
	}
	put16(b[0:], FP32ToFP16(d))
	put16(b[2:], FP32ToFP16(min))
}

// minMax returns the smallest and largest element, starting from ±MaxFloat32
// as ggml does.
func minMax(x []float32) (min, max float32) {
	min, max = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < min {
			min = v
		}
		if v > max {
			max = v
		}
	}
	return min, max
}

// dotQ4_1 is ggml_vec_dot_q4_1_q8_1: Σ_blocks d_w·d_x·Σq_w·q_x + m_w·s_x,
// where s_x = d_x·Σq_x comes from the Q8_1 block.
func dotQ4_1(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q4_1Bytes]byte, [q8_1Bytes]byte](n/QK, w, x) {
		isum := nibbleDot((*[QK / 2]byte)(a[4:]), (*[QK]byte)(b[4:]), 0)
		sum += (f16At(a[0:])*f16At(b[0:]))*float32(isum) + f16At(a[2:])*f16At(b[2:])
	}
	return sum
}
