package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRopeRotateComposes checks that rotating a vector for position p by
// delta gives the vector rotated for p+delta, for both pair layouts, a
// partial rotation and frequency factors.
func TestRopeRotateComposes(t *testing.T) {
	const headDim, heads = 16, 3
	for _, r := range []Rope{
		{Dim: 16, Base: 10000},
		{Dim: 16, Neox: true, Base: 1e6},
		{Dim: 8, Base: 10000, FreqScale: 0.25},
		{Dim: 16, Neox: true, Base: 500000, Factors: []float32{1, 1, 2, 4, 8, 8, 8, 8}},
		// YaRN, with a magnitude that a shift must not apply twice.
		{Dim: 16, Neox: true, Base: 1e6, FreqScale: 0.25, MScale: 1.1, Ext: 1, Corr: YarnCorrDims(16, 4096, 1e6, 32, 1)},
		// Multimodal RoPE: the extra section's pairs stay unturned.
		{Dim: 16, Neox: true, Base: 100, Sections: [4]int{4, 2, 2, 0}, Interleaved: true},
		{Dim: 16, Neox: true, Base: 100, Sections: [4]int{2, 3, 2, 1}},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float32, heads*headDim)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for _, tc := range []struct{ p, delta int }{{100, -37}, {37, 63}, {5000, -4000}, {9, -9}} {
			cs := make([]float32, r.Dim)
			got := append([]float32(nil), x...)
			r.Angles(tc.p, cs)
			r.Apply(got, heads, headDim, cs)
			r.Rotate(got, headDim, tc.delta)
			want := append([]float32(nil), x...)
			r.Angles(tc.p+tc.delta, cs)
			r.Apply(want, heads, headDim, cs)
			// Angles are float32 products: a rotation for position p is off by
			// about p·2⁻²⁴ radians.
			tol := 1e-5 + 4*float64(tc.p+abs(tc.delta))*0x1p-24*3
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > tol {
					t.Fatalf("%+v p %d delta %d: element %d is %v, want %v (|Δ| %.2g > %.2g)", r, tc.p, tc.delta, i, got[i], want[i], d, tol)
				}
			}
			// Dimensions past Dim are untouched.
			for h := range heads {
				for i := r.Dim; i < headDim; i++ {
					if got[h*headDim+i] != x[h*headDim+i] {
						t.Fatalf("%+v: element %d of head %d changed", r, i, h)
					}
				}
			}
		}
	}
}

func abs(n int) int { return max(n, -n) }

// YaRN's angles against its definition in float64 (ggml's rope_yarn and
// ggml_rope_yarn_corr_dims, after the YaRN paper): each pair's angle
// mixes the interpolated (scaled) and the extrapolated one by a ramp over
// the correction dims, and the cosines and sines carry MScale times
// 1 + 0.1·ln(1/FreqScale); without YaRN (Ext 0) the angles are the plain
// scaled ones.
func TestRopeYarn(t *testing.T) {
	const dim, orig = 64, 32768
	const base, fs = 1e6, 0.25
	corr := YarnCorrDims(dim, orig, base, 32, 1)
	c64 := func(beta float64) float64 {
		return dim * math.Log(orig/(beta*2*math.Pi)) / (2 * math.Log(base))
	}
	if lo, hi := math.Max(0, math.Floor(c64(32))), math.Min(dim-1, math.Ceil(c64(1))); float64(corr[0]) != lo || float64(corr[1]) != hi {
		t.Fatalf("corr dims %v, want [%v %v]", corr, lo, hi)
	}
	r := Rope{Dim: dim, Neox: true, Base: base, FreqScale: fs, MScale: 0.9, Ext: 1, Corr: corr}
	plain := r
	plain.Ext = 0
	cs, ps := make([]float32, dim), make([]float32, dim)
	for _, pos := range []int{0, 1, 17, 4000, 100000} {
		r.Angles(pos, cs)
		plain.Angles(pos, ps)
		mscale := 0.9 * (1 + 0.1*math.Log(1/fs))
		for i := 0; i < dim; i += 2 {
			extrap := float64(pos) * math.Pow(base, -float64(i)/dim)
			y := (float64(i/2) - float64(corr[0])) / math.Max(0.001, float64(corr[1]-corr[0]))
			mix := 1 - math.Min(1, math.Max(0, y))
			theta := fs*extrap*(1-mix) + extrap*mix
			// float32 angles are off by about θ·2⁻²³ radians.
			tol := 1e-5 + math.Abs(theta)*0x1p-21
			if d := math.Abs(float64(cs[i]) - math.Cos(theta)*mscale); d > tol {
				t.Fatalf("pos %d pair %d: cos %v, want %v", pos, i/2, cs[i], math.Cos(theta)*mscale)
			}
			if d := math.Abs(float64(cs[i+1]) - math.Sin(theta)*mscale); d > tol {
				t.Fatalf("pos %d pair %d: sin %v, want %v", pos, i/2, cs[i+1], math.Sin(theta)*mscale)
			}
			interp := fs * extrap
			if d := math.Abs(float64(ps[i]) - math.Cos(interp)*0.9); d > tol {
				t.Fatalf("pos %d pair %d without YaRN: cos %v, want %v", pos, i/2, ps[i], math.Cos(interp)*0.9)
			}
		}
	}
}
