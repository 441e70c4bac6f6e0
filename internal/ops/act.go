package ops

import (
	"math"
	"sync"

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
// tab is geluTable(), looked up once per slice by the callers.
func gelu16(v float32, tab *[1 << 16]float32) float32 {
	switch {
	case v <= -10:
		return 0
	case v >= 10:
		return v
	}
	return tab[quant.FP32ToFP16(v)]
}

// geluTable holds, for every half h, gelu(h) rounded to a half: ggml's
// ggml_table_gelu_f16. A table lookup replaced a tanh per element, which
// made BERT's feed-forward activation cost as much as its matrix product.
// Built on first use, read-only after.
var geluTable = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		x := quant.FP16ToFP32(uint16(h))
		t[h] = quant.FP16ToFP32(quant.FP32ToFP16(geluF32(x)))
	}
	return &t
})

// GELUMul writes gelu(g)·u into g (Gemma's GeGLU), GELU as GELU computes
// it.
func GELUMul(g, u []float32) {
	u = u[:len(g)]
	tab := geluTable()
	for i, v := range g {
		g[i] = gelu16(v, tab) * u[i]
	}
}

// GELU replaces x with gelu(x) in place (BERT's feed-forward activation),
// rounded through F16 inside (-10, 10) as ggml's table does.
func GELU(x []float32) {
	tab := geluTable()
	for i, v := range x {
		x[i] = gelu16(v, tab)
	}
}
