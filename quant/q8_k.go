package quant

import (
	"encoding/binary"
	"math"
)

// Q8_K super-block of 256 elements, the activation side of every K-quant
// dot product: float32 d, 256 int8 quants, then 16 int16 sums of 16 quants
// each (bsums), which the K-quant kernels use for their min terms. x = d·q.
const q8_KBytes = 4 + QKK + 2*QKK/16

func dequantQ8_K(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [q8_KBytes]byte](dst, src) {
		dequantInt8(y[:], b[4:], f32At(b[0:]))
	}
}

// quantQ8_K is quantize_row_q8_K_ref, which is also what llama.cpp runs on
// x86 (there is no SIMD version): the element of largest magnitude, with
// its sign, maps to -127 through iscale = -127/max, every element is rounded
// with nearest_int (ties to even) and capped at 127, and d = 1/iscale, so d
// is negative when that element is positive. An all-zero block gets d = 0
// and zero quants and sums.
func quantQ8_K(dst []byte, src []float32) {
	for x, b := range blocks[[QKK]float32, [q8_KBytes]byte](src, dst) {
		max, amax := signedAbsMax(x[:])
		if amax == 0 {
			*b = [q8_KBytes]byte{}
			continue
		}
		iscale := -127 / max
		q := (*[QKK]byte)(b[4:])
		for j, v := range x {
			q[j] = byte(int8(min(127, nearestInt(float32(iscale*v)))))
		}
		for g := 0; g < QKK/16; g++ {
			var s int32
			for _, v := range q[16*g : 16*g+16] {
				s += int32(int8(v))
			}
			binary.LittleEndian.PutUint16(b[4+QKK+2*g:], uint16(int16(s)))
		}
		binary.LittleEndian.PutUint32(b[0:], math.Float32bits(1/iscale))
	}
}
