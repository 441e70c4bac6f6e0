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

// GELUMul writes gelu(g)·u into g (Gemma's GeGLU). Inside (-10, 10) the
// input is rounded to F16 and the result to F16, as ggml's CPU backend does
// with its lookup table, because parity with llama.cpp depends on it.
func GELUMul(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		var y float32
		switch {
		case v <= -10:
			y = 0
		case v >= 10:
			y = v
		default:
			h := quant.FP16ToFP32(quant.FP32ToFP16(v))
			y = quant.FP16ToFP32(quant.FP32ToFP16(geluF32(h)))
		}
		g[i] = y * u[i]
	}
}
