package softmax

import (
	"math"
	"testing"
)

func TestInPlace(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name  string
		in    []float32
		scale float32
		want  []float32
	}{
		{"equal", []float32{3, 3, 3, 3}, 1, []float32{0.25, 0.25, 0.25, 0.25}},
		{"scaled", []float32{0, float32(math.Ln2)}, 2, []float32{0.2, 0.8}},
		{"minus infinity is zero", []float32{float32(math.Inf(-1)), 5}, 1, []float32{0, 1}},
		{"NaN spreads", []float32{nan, 1}, 1, []float32{nan, nan}},
		{"infinity spreads NaN", []float32{inf, 1}, 1, []float32{nan, nan}},
	} {
		s := append([]float32(nil), tc.in...)
		InPlace(s, tc.scale)
		for i, w := range tc.want {
			g := s[i]
			if math.IsNaN(float64(w)) != math.IsNaN(float64(g)) || !math.IsNaN(float64(w)) && math.Abs(float64(g-w)) > 1e-7 {
				t.Errorf("%s: [%d] = %g, want %g (all %v)", tc.name, i, g, w, s)
			}
		}
	}
}

// TestExpOrder pins the rounding order: exponentials rounded to float32
// before the float64 sum, and the float32 reciprocal returned.
func TestExpOrder(t *testing.T) {
	s := []float32{0.1, 0.7, -1.3}
	inv := Exp(s, 0.5)
	var sum float64
	for i, x := range []float32{0.05, 0.35, -0.65} {
		e := float32(math.Exp(float64(x - 0.35)))
		if s[i] != e {
			t.Errorf("[%d] = %g, want %g", i, s[i], e)
		}
		sum += float64(e)
	}
	if want := float32(1 / sum); inv != want {
		t.Errorf("inv = %g, want %g", inv, want)
	}
}
