package quant

import (
	"encoding/binary"
	"math"
)

func dequantF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = f32At(src[4*i:])
	}
}

func quantF32(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// dotF32 multiplies two float32 rows, accumulating in float32 like
// ggml_vec_dot_f32 (four accumulators for its SIMD lanes).
func dotF32(n int, w, x []byte) float32 {
	w = w[:4*n]
	x = x[:4*n]
	var s0, s1, s2, s3 float32
	for len(w) >= 16 && len(x) >= 16 {
		a := (*[16]byte)(w)
		b := (*[16]byte)(x)
		s0 += f32At(a[0:]) * f32At(b[0:])
		s1 += f32At(a[4:]) * f32At(b[4:])
		s2 += f32At(a[8:]) * f32At(b[8:])
		s3 += f32At(a[12:]) * f32At(b[12:])
		w = w[16:]
		x = x[16:]
	}
	for len(w) >= 4 && len(x) >= 4 {
		s0 += f32At(w) * f32At(x)
		w = w[4:]
		x = x[4:]
	}
	return (s0 + s1) + (s2 + s3)
}
