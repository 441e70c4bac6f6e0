package ops

import (
	"math"
)

// Rope rotates query and key vectors by their position (rotary position
// embedding). The angles follow ggml: θ starts at the position and is
// multiplied by base^(-2/Dim) for each successive pair, in float32, then
// divided by the pair's frequency factor (Llama 3.1) and scaled by
// FreqScale; with YaRN (Ext not 0) each pair's angle mixes that scaled
// angle with the unscaled one by ggml's ramp over the correction dims.
// The cosines and sines are multiplied by MScale (and with YaRN by
// 1 + 0.1·ln(1/FreqScale)), ggml's magnitude scaling.
type Rope struct {
	Dim       int       // rotated dimensions per head (rope.dimension_count)
	Neox      bool      // rotate (i, i+Dim/2) instead of (2i, 2i+1)
	Base      float32   // rope.freq_base
	FreqScale float32   // 1 / linear scaling factor; 0 means 1
	Factors   []float32 // per pair divisors (rope_freqs.weight), or nil
	// MScale multiplies every cosine and sine (LongRoPE's attention factor,
	// YaRN's attention factor); 0 means 1.
	MScale float32
	// Ext is YaRN's extrapolation mix (ggml's ext_factor): 0 for none.
	Ext float32
	// Corr are YaRN's correction dims (YarnCorrDims), read when Ext is
	// not 0.
	Corr [2]float32
	// Sections, when not all 0, make this ggml's multimodal RoPE
	// (sections.go): the pairs' counts for the temporal, height, width and
	// extra position of a token, Interleaved choosing Qwen3-VL's
	// interleaved layout over Qwen2-VL's contiguous one. A text token is
	// at its position in the first three and at 0 in the extra one, so
	// the pairs that fall to the extra section are not turned.
	Sections    [4]int
	Interleaved bool
}

// YarnCorrDims is ggml_rope_yarn_corr_dims: the first and last rotated
// dimension between which YaRN ramps from extrapolation to interpolation,
// for dim rotated dimensions trained at origCtx positions.
func YarnCorrDims(dim, origCtx int, base, betaFast, betaSlow float32) [2]float32 {
	corr := func(nRot float32) float32 {
		// n_dims · ln(n_ctx_orig / (n_rot·2π)) / (2·ln base), in float32.
		num := float32(math.Log(float64(float32(origCtx) / (nRot * 2 * float32(math.Pi)))))
		return float32(dim) * num / (2 * float32(math.Log(float64(base))))
	}
	start := float32(math.Floor(float64(corr(betaFast))))
	end := float32(math.Ceil(float64(corr(betaSlow))))
	return [2]float32{max(0, start), min(float32(dim-1), end)}
}

// Angles fills cs (Dim floats) with cos and sin pairs for position pos.
func (r *Rope) Angles(pos int, cs []float32) { r.angles(pos, cs, true) }

// angles is Angles; without magnitude the cosines and sines are those of
// a pure rotation (a shift of cached keys, already scaled once).
func (r *Rope) angles(pos int, cs []float32, magnitude bool) {
	// powf(base, -2.0f/dim) in ggml: the exponent is a float32 quotient.
	thetaScale := float32(math.Pow(float64(r.Base), float64(float32(-2)/float32(r.Dim))))
	fs := r.FreqScale
	if fs == 0 {
		fs = 1
	}
	mscale := float32(1)
	if magnitude {
		if r.MScale != 0 {
			mscale = r.MScale
		}
		if r.Ext != 0 {
			mscale *= 1 + 0.1*float32(math.Log(float64(1/fs)))
		}
	}
	theta := float32(pos)
	cs = cs[:r.Dim]
	sectioned := r.Sections != [4]int{}
	for i := 0; i < r.Dim; i += 2 {
		extrap := theta
		if sectioned && r.extraPair(i/2) {
			extrap = 0 // the extra position, 0 for text, times any frequency
		}
		if r.Factors != nil {
			extrap /= r.Factors[i/2]
		}
		t := fs * extrap
		if r.Ext != 0 {
			// ggml's rope_yarn_ramp at pair i/2, times ext_factor.
			y := (float32(i/2) - r.Corr[0]) / max(0.001, r.Corr[1]-r.Corr[0])
			mix := (1 - min(1, max(0, y))) * r.Ext
			t = t*(1-mix) + extrap*mix
		}
		c, s := float32(math.Cos(float64(t))), float32(math.Sin(float64(t)))
		if mscale != 1 {
			c, s = c*mscale, s*mscale
		}
		cs[i], cs[i+1] = c, s
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
