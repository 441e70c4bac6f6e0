package quant

import "math"

// Q8_0 block: fp16 scale d, then 32 int8 quants; x = d·q.
const q8_0Bytes = 2 + QK

func dequantQ8_0(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [q8_0Bytes]byte](dst, src) {
		dequantInt8(y[:], b[2:], f16At(b[0:]))
	}
}

// dequantInt8 expands the int8 quants q with scale d into y: the quants of
// Q8_0, Q8_1 and Q8_K.
func dequantInt8(y []float32, q []byte, d float32) {
	q = q[:len(y)]
	for j, v := range q {
		y[j] = float32(int8(v)) * d
	}
}

// quantQ8_0 matches llama.cpp's AVX/AVX2 quantize_row_q8_0, which is what
// runs on the x86 CPUs we compare against, not quantize_row_q8_0_ref: the
// SIMD path multiplies by 127/amax (not 1/d) and rounds ties to even
// (_mm256_round_ps), where the reference uses roundf, which rounds ties away
// from zero. The two differ for inputs whose scaled value lands on .5.
func quantQ8_0(dst []byte, src []float32) {
	for x, b := range blocks[[QK]float32, [q8_0Bytes]byte](src, dst) {
		d, _ := quantQ8Block(x, (*[QK]byte)(b[2:]))
		put16(b[0:], FP32ToFP16(d))
	}
}

// quantQ8Block quantizes one block of x to int8 quants q as llama.cpp's
// AVX2 quantize_row_q8_0 and quantize_row_q8_1 do: d = amax/127, and each
// element times 127/amax converted the way the sequence round (ties to
// even), cvtps2dq, packssdw, packsswb does (roundInt32, then sat8):
// in-range values round to nearest even, larger ones saturate, and NaN or
// values beyond int32 end up as -128. It returns d and the sum of the
// int32 values before they are packed to bytes, unsaturated (Q8_1's s).
func quantQ8Block(x *[QK]float32, q *[QK]byte) (d float32, sum int32) {
	amax := absMax(x[:])
	d = amax / 127
	var id float32
	if amax != 0 {
		id = 127 / amax
	}
	for j, v := range x {
		r := roundInt32(float32(v * id))
		sum += r
		q[j] = byte(sat8(r))
	}
	return d, sum
}

// absMax returns the largest |x|; NaNs are skipped.
func absMax(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > m {
			m = a
		}
	}
	return m
}

// roundInt32 is cvtps2dq after a round to nearest even: NaN and values
// outside int32 become the "integer indefinite" value -2^31.
func roundInt32(f float32) int32 {
	if !(f >= -2147483648 && f < 2147483648) {
		return -1 << 31
	}
	return int32(math.RoundToEven(float64(f)))
}

// sat8 is the signed saturation of packssdw followed by packsswb.
func sat8(v int32) int8 {
	switch {
	case v > 127:
		return 127
	case v < -128:
		return -128
	}
	return int8(v)
}

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0: per block the integer sum of products,
// scaled by d_w·d_x.
func dotQ8_0(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q8_0Bytes]byte, [q8_0Bytes]byte](n/QK, w, x) {
		var s0, s1 int32
		for j := 2; j < q8_0Bytes; j += 2 {
			s0 += int32(int8(a[j])) * int32(int8(b[j]))
			s1 += int32(int8(a[j+1])) * int32(int8(b[j+1]))
		}
		sum += float32(s0+s1) * (f16At(a[0:]) * f16At(b[0:]))
	}
	return sum
}
