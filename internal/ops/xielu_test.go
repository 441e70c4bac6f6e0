package ops

import (
	"math"
	"testing"
)

// XIELU against the formula in float64 (Apertus's activation as ggml's
// op computes it), with the softplus of NewXIELU, at points on both sides
// of 0 and of eps, and past softplus's cut at 20.
func TestXIELU(t *testing.T) {
	sp := func(x float64) float64 {
		if x > 20 {
			return x
		}
		return math.Log1p(math.Exp(x))
	}
	for _, tc := range []struct{ an, ap, beta, eps float64 }{
		{0.8, 0.8, 0.5, -1e-6}, {-2, 1.5, 0.5, 1e-3}, {25, -3, 0.25, -1e-6},
	} {
		a := NewXIELU(float32(tc.an), float32(tc.ap), float32(tc.beta), float32(tc.eps))
		an, ap := tc.beta+sp(tc.an), sp(tc.ap)
		xs := []float32{-30, -5, -1, -1e-3, -1e-6, 0, 1e-6, 1e-3, 0.5, 1, 3, 12}
		got := append([]float32(nil), xs...)
		a.Apply(got)
		for i, x := range xs {
			v := float64(x)
			want := ap*v*v + tc.beta*v
			if v <= 0 {
				want = (math.Expm1(math.Min(v, tc.eps))-v)*an + tc.beta*v
			}
			if d := math.Abs(float64(got[i]) - want); d > 1e-5*(1+math.Abs(want)) {
				t.Errorf("%+v: xIELU(%v) = %v, want %v", tc, x, got[i], want)
			}
		}
	}
}
