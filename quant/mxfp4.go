package quant

import "math"

// mxfp4Values is ggml's kvalues_mxfp4: the sixteen E2M1 values of the OCP
// microscaling format, doubled so that they are integers (0, ±0.5, ±1,
// ±1.5, ±2, ±3, ±4, ±6 become 0 … ±12). Code 8 is E2M1's −0, a second
// zero. The doubling is undone by the scale, which is half the E8M0
// exponent's power of two (e8m0Half).
var mxfp4Values = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// mxfp4Values32 is mxfp4Values widened once, for the dot product.
var mxfp4Values32 = func() (t [16]int32) {
	for i, v := range mxfp4Values {
		t[i] = int32(v)
	}
	return t
}()

// MXFP4 block of 32 elements, 17 bytes: the E8M0 exponent e, then 16 bytes
// of 4-bit codes in the Q4_0 order (byte j: element j in the low nibble,
// element j+16 in the high one). Element i is e8m0Half(e)·mxfp4Values[code_i].
const mxfp4Bytes = 1 + QK/2

// e8m0Half is ggml's ggml_e8m0_to_fp32_half: 2^(e−128), half the E8M0
// value 2^(e−127), made from its bits. Every byte has a finite value: e = 0
// and 1 are the subnormals 2^−128 and 2^−127, and e = 0xFF, which the OCP
// format calls NaN, is 2^127, as in ggml, which leaves NaN unhandled here
// (its optional row validation rejects 0xFF; its kernels compute with it).
func e8m0Half(e byte) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

func dequantMXFP4(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [mxfp4Bytes]byte](dst, src) {
		dequantLUT(y, (*[QK / 2]byte)(b[1:]), e8m0Half(b[0]), &mxfp4Values)
	}
}

// quantMXFP4 is ggml's quantize_row_mxfp4_ref, which llama-quantize runs
// for MXFP4 (it takes no importance matrix): per block the exponent
// e = ⌊log2 amax⌋ − 2 + 127, which puts amax/d in [8, 16) for
// d = e8m0Half(e) (the largest level is 12, so the top of the range
// clips), and each element's nearest level at d, the first on a tie.
func quantMXFP4(dst []byte, src []float32) {
	for x, b := range blocks[[QK]float32, [mxfp4Bytes]byte](src, dst) {
		var amax float32
		for _, v := range x {
			if a := float32(math.Abs(float64(v))); amax < a {
				amax = a
			}
		}
		e := mxfp4Exponent(amax)
		d := e8m0Half(e)
		b[0] = e
		for j := range QK / 2 {
			b[1+j] = bestIndexMXFP4(x[j], d) | bestIndexMXFP4(x[j+QK/2], d)<<4
		}
	}
}

// mxfp4Exponent is ggml's (uint8_t)(floorf(log2f(amax)) - 2 + 127), 0 for
// amax = 0. log2f is correctly rounded to float32 (as glibc's is), so an
// amax within an ulp or so below a power of two 2^k takes k's exponent
// when k ≥ 3 or k ≤ −2 (the float32 next to k is coarser than the
// logarithm's distance from it), as in ggml. The conversion to a byte is what x86-64 does with C's out-of-range
// float-to-uint8 conversion (a 32-bit truncation, then the low byte): an
// amax below 2^−125 wraps to a large exponent, an infinite one gives 0.
func mxfp4Exponent(amax float32) uint8 {
	if !(amax > 0) || math.IsInf(float64(amax), 1) {
		return 0
	}
	l := float32(math.Floor(float64(float32(math.Log2(float64(amax))))))
	return uint8(int32(float32(float32(l-2) + 127)))
}

// bestIndexMXFP4 is ggml's best_index_mxfp4: the code whose level times d
// is nearest to x, in float32 arithmetic, the lowest code on a tie (so 0,
// never the −0 of code 8, for a zero, and a NaN gives 0).
func bestIndexMXFP4(x, d float32) uint8 {
	best := 0
	bestErr := float32(math.Abs(float64(float32(float32(mxfp4Values[0])*d) - x)))
	for i := 1; i < 16; i++ {
		err := float32(math.Abs(float64(float32(float32(mxfp4Values[i])*d) - x)))
		if err < bestErr {
			best, bestErr = i, err
		}
	}
	return uint8(best)
}

// dotMXFP4 is ggml_vec_dot_mxfp4_q8_0: per block
// (d_x·e8m0Half(e))·Σ mxfp4Values[code_i]·y_i, the sum exact in int32 —
// IQ4_NL's loop (see dotIQ4_NL) with the E2M1 table and the E8M0 scale.
func dotMXFP4(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[mxfp4Bytes]byte, [q8_0Bytes]byte](n/QK, w, x) {
		isum := lutSum(&mxfp4Values32, (*[16]byte)(a[1:]), (*[QK]byte)(b[2:]))
		sum += f16At(b[0:]) * e8m0Half(a[0]) * float32(isum)
	}
	return sum
}
