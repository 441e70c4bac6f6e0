package quant

// Q8_1 block: fp16 scale d, fp16 s = d·Σq, then 32 int8 quants; x = d·q.
// It exists only as the activation side of Q4_1 and Q5_1 dot products,
// whose min term needs Σx per block.
const q8_1Bytes = 2 + 2 + QK

func dequantQ8_1(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [q8_1Bytes]byte](dst, src) {
		dequantInt8(y[:], b[4:], f16At(b[0:]))
	}
}

// quantQ8_1 matches llama.cpp's AVX2 quantize_row_q8_1 for the reasons given
// at quantQ8_0; s is the fp16 of d times the integer sum of the quants.
func quantQ8_1(dst []byte, src []float32) {
	for x, b := range blocks[[QK]float32, [q8_1Bytes]byte](src, dst) {
		d, sum := quantQ8Block(x, (*[QK]byte)(b[4:]))
		put16(b[0:], FP32ToFP16(d))
		put16(b[2:], FP32ToFP16(float32(d*float32(sum))))
	}
}
