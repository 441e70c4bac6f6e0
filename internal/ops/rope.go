package ops

import (
	"math"
)

// Rope rotates query and key vectors by their position (rotary position
// embedding). The angles follow ggml: θ starts at the position and is
// multiplied by base^(-2/Dim) for each successive pair, in float32, then
// divided by the pair's frequency factor (Llama 3.1) and scaled by FreqScale.
type Rope struct {
	Dim       int       // rotated dimensions per head (rope.dimension_count)
	Neox      bool      // rotate (i, i+Dim/2) instead of (2i, 2i+1)
	Base      float32   // rope.freq_base
	FreqScale float32   // 1 / linear scaling factor; 0 means 1
	Factors   []float32 // per pair divisors (rope_freqs.weight), or nil
}

// Angles fills cs (Dim floats) with cos and sin pairs for position pos.
func (r *Rope) Angles(pos int, cs []float32) {
	// powf(base, -2.0f/dim) in ggml: the exponent is a float32 quotient.
	thetaScale := float32(math.Pow(float64(r.Base), float64(float32(-2)/float32(r.Dim))))
	fs := r.FreqScale
	if fs == 0 {
		fs = 1
	}
	theta := float32(pos)
	cs = cs[:r.Dim]
	for i := 0; i < r.Dim; i += 2 {
		t := theta
		if r.Factors != nil {
			t /= r.Factors[i/2]
		}
		t *= fs
		cs[i] = float32(math.Cos(float64(t)))
		cs[i+1] = float32(math.Sin(float64(t)))
		theta *= thetaScale
	}
}

// Apply rotates heads consecutive vectors of headDim floats in x with the
// angles from Angles. Dimensions past Dim are left as they are.
func (r *Rope) Apply(x []float32, heads, headDim int, cs []float32) {
	half := r.Dim / 2
	for h := 0; h < heads; h++ {
		v := x[h*headDim : h*headDim+r.Dim]
		if r.Neox {
			for i := 0; i < half; i++ {
				c, s := cs[2*i], cs[2*i+1]
				x0, x1 := v[i], v[i+half]
				v[i] = x0*c - x1*s
				v[i+half] = x0*s + x1*c
			}
			continue
		}
		for i := 0; i < r.Dim; i += 2 {
			c, s := cs[i], cs[i+1]
			x0, x1 := v[i], v[i+1]
			v[i] = x0*c - x1*s
			v[i+1] = x0*s + x1*c
		}
	}
}
