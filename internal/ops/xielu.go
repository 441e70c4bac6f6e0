package ops

import "math"

// XIELU is one layer's xIELU activation (Apertus) with its parameters as
// ggml_xielu stores them: AlphaN is beta + softplus(alpha_n) and AlphaP
// softplus(alpha_p) of the file's raw values (NewXIELU), Beta and Eps as
// they are.
type XIELU struct {
	AlphaN, AlphaP, Beta, Eps float32
}

// NewXIELU makes the activation of the raw per-layer values a file holds
// (xielu.alpha_n, alpha_p, beta, eps), softplus taken as ggml computes it.
func NewXIELU(alphaN, alphaP, beta, eps float32) XIELU {
	return XIELU{AlphaN: beta + softplus(alphaN), AlphaP: softplus(alphaP), Beta: beta, Eps: eps}
}

// softplus is ggml's ggml_compute_softplus_f32: the input itself above
// 20, where log(1 + e^x) rounds to it.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + float32(math.Exp(float64(x))))))
}

// Apply replaces each element of x by xIELU(x), as ggml's CPU op: a
// positive x gives AlphaP·x² + Beta·x, any other (expm1(min(x, Eps)) −
// x)·AlphaN + Beta·x.
func (a XIELU) Apply(x []float32) {
	for i, v := range x {
		if v > 0 {
			x[i] = a.AlphaP*v*v + a.Beta*v
			continue
		}
		m := min(v, a.Eps)
		x[i] = (float32(math.Expm1(float64(m)))-v)*a.AlphaN + a.Beta*v
	}
}
