package ops

import "math"

// RMSNorm writes x / sqrt(mean(x²) + eps) · w to out. The sum of squares is
// accumulated in float64 and the scale rounded to float32, the order ggml
// uses, so that results agree with llama.cpp to the last bit where possible.
func RMSNorm(out, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := sum / float64(len(x))
	scale := 1 / float32(math.Sqrt(float64(float32(mean+float64(eps)))))
	w = w[:len(x)]
	out = out[:len(x)]
	for i, v := range x {
		out[i] = (v * scale) * w[i]
	}
}

// Add adds b to a element-wise.
func Add(a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		a[i] += b[i]
	}
}

// Scale multiplies x by s in place.
func Scale(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// Softcap replaces x with c·tanh(x/c), Gemma-2's soft capping of logits.
func Softcap(x []float32, c float32) {
	for i, v := range x {
		x[i] = c * float32(math.Tanh(float64(v/c)))
	}
}
