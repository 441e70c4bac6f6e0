package ops

import "math"

// RMSNorm writes x / sqrt(mean(x²) + eps) · w (w nil: 1) to out. The sum of squares is
// accumulated in float64 and the scale rounded to float32, the order ggml
// uses, so that results agree with llama.cpp to the last bit where possible.
func RMSNorm(out, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := sum / float64(len(x))
	scale := 1 / float32(math.Sqrt(float64(float32(mean+float64(eps)))))
	out = out[:len(x)]
	if w == nil {
		// ggml_rms_norm alone (Gemma 3n's values).
		for i, v := range x {
			out[i] = v * scale
		}
		return
	}
	w = w[:len(x)]
	for i, v := range x {
		out[i] = (v * scale) * w[i]
	}
}

// LayerNorm writes (x − mean(x)) / sqrt(var(x) + eps) · w + b to out (which
// may be x; b nil: no bias): BERT's normalisation, where RMSNorm has no
// mean and no bias.
// The order is ggml_norm's, then build_norm's multiply and add: the mean
// is a float64 sum rounded to float32 before the division, the variance a
// float64 sum of float32 squares of the centred values, and the scale
// 1/sqrtf(var + eps) multiplies each centred value before w and b.
func LayerNorm(out, x, w, b []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := float32(sum) / float32(len(x))
	var sq float64
	for _, v := range x {
		d := v - mean
		sq += float64(d * d)
	}
	variance := float32(sq / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(variance+eps)))
	w = w[:len(x)]
	out = out[:len(x)]
	if b == nil {
		// Cohere's LayerNorm has a weight and no bias.
		for i, v := range x {
			out[i] = (v - mean) * scale * w[i]
		}
		return
	}
	b = b[:len(x)]
	for i, v := range x {
		out[i] = (v-mean)*scale*w[i] + b[i]
	}
}

// Add adds b to a element-wise.
func Add(a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		a[i] += b[i]
	}
}

// Clamp limits each of x to [-c, c] in place, as ggml_clamp: a NaN stays
// NaN.
func Clamp(x []float32, c float32) {
	for i, v := range x {
		if v > c {
			x[i] = c
		} else if v < -c {
			x[i] = -c
		}
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
