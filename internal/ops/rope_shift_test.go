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
