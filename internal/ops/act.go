package ops

import (
	"math"

	"github.com/lowmem/llm/quant"
)

// SiLUMul writes silu(g)·u into g: the SwiGLU feed-forward gate.
func SiLUMul(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		s := v / (1 + float32(math.Exp(float64(-v))))
		g[i] = s * u[i]
	}
}

// geluF32 is the tanh approximation of GELU.
func geluF32(x float32) float32 {
	const c = 0.044715
	const sqrt2pi = 0.79788456080286535587989211986876
	return 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2pi*x*(1+c*x*x)))))
}

// gelu16 is GELU as ggml's CPU backend computes it with its lookup table:
// inside (-10, 10) the input is rounded to F16 and the result to F16,
// because parity with llama.cpp depends on it; outside, 0 or the input.
func gelu16(v float32) float32 {
	switch {
	case v <= -10:
		return 0
	case v >= 10:
		return v
	}
	h := quant.FP16ToFP32(quant.FP32ToFP16(v))
	return quant.FP16ToFP32(quant.FP32ToFP16(geluF32(h)))
}

// GELUMul writes gelu(g)·u into g (Gemma's GeGLU), GELU as GELU computes
// it.
func GELUMul(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		g[i] = gelu16(v) * u[i]
	}
}

// GELU replaces x with gelu(x) in place (BERT's feed-forward activation),
// rounded through F16 inside (-10, 10) as ggml's table does.
func GELU(x []float32) {
	for i, v := range x {
		x[i] = gelu16(v)
	}
}
