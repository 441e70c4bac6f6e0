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

// ReGLUMul writes relu(g)·u into g (ggml's reglu: the product where the
// gate is positive, 0 elsewhere, whatever u holds).
func ReGLUMul(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		if v > 0 {
			g[i] = v * u[i]
		} else {
			g[i] = 0
		}
	}
}

// ReLU2Mul writes relu(g)²·u into g: ggml's relu, sqr and mul one after
// another, as llama.cpp's LLM_FFN_RELU_SQR with a parallel gate runs them
// (bitnet's relu2), so a gate at or below 0 still multiplies u (0·∞ is
// NaN there, where ReGLUMul's fused op gives 0).
func ReLU2Mul(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		r := max(v, 0)
		g[i] = r * r * u[i]
	}
}

// geluF32 is the tanh approximation of GELU.
func geluF32(x float32) float32 {
	const c = 0.044715
	const sqrt2pi = 0.79788456080286535587989211986876
	return 0.5 * x * (1 + float32(math.Tanh(float64(sqrt2pi*x*(1+c*x*x)))))
}

// geluChunk is how many elements gelus converts to halves at a time.
const geluChunk = 256

// gelus writes to y (len(x) <= geluChunk floats) gelu of each x as ggml's
// CPU backend computes it with its lookup table — inside (-10, 10) the
// input rounded to a half, the result a half, because parity with
// llama.cpp depends on it; outside, 0 or the input — converting x to
// halves with the quant package's encoder (F16C on amd64: the Go
// conversion of one float cost more than the table lookup). GELU and
// GELUMul call it a chunk at a time, with their own loops after it rather
// than a function value per element, which cost them a call each.
func gelus(y, x []float32) {
	tab := geluTable()
	var h [geluChunk]uint16
	quant.FP32ToFP16Row(h[:len(x)], x)
	y = y[:len(x)]
	for j, v := range x {
		g := tab[h[j]]
		switch {
		case v <= -10:
			g = 0
		case v >= 10:
			g = v
		}
		y[j] = g
	}
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
	var y [geluChunk]float32
	for i0 := 0; i0 < len(g); i0 += geluChunk {
		gs := g[i0:min(len(g), i0+geluChunk)]
		us := u[i0 : i0+len(gs)]
		gelus(y[:len(gs)], gs)
		for j, v := range y[:len(gs)] {
			gs[j] = v * us[j]
		}
	}
}

// GELU replaces x with gelu(x) in place (BERT's feed-forward activation),
// rounded through F16 inside (-10, 10) as ggml's table does.
func GELU(x []float32) {
	var y [geluChunk]float32
	for i0 := 0; i0 < len(x); i0 += geluChunk {
		xs := x[i0:min(len(x), i0+geluChunk)]
		gelus(y[:len(xs)], xs)
		copy(xs, y[:len(xs)])
	}
}
