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

// TestExpOrder pins the rounding order: float32 exponentials (Expf)
// summed in float64, and the float32 reciprocal returned.
func TestExpOrder(t *testing.T) {
	s := []float32{0.1, 0.7, -1.3}
	inv := Exp(s, 0.5)
	var sum float64
	for i, x := range []float32{0.05, 0.35, -0.65} {
		e := Expf(x - 0.35)
		if s[i] != e {
			t.Errorf("[%d] = %g, want %g", i, s[i], e)
		}
		sum += float64(e)
	}
	if want := float32(1 / sum); inv != want {
		t.Errorf("inv = %g, want %g", inv, want)
	}
}

// TestExpfAccuracy sweeps every 97th float32 from 0 down to ExpfFloor and
// checks Expf within 2 ulps of the float64 exponential.
func TestExpfAccuracy(t *testing.T) {
	worst := 0.0
	check := func(x float32) {
		got := Expf(x)
		want := math.Exp(float64(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want))
		if d := math.Abs(float64(got)-want) / ulp; d > worst {
			worst = d
			if d > 2 {
				t.Fatalf("Expf(%v) = %v, exp = %v: %.2f ulps", x, got, want, d)
			}
		}
	}
	for b := uint32(1 << 31); ; b += 97 { // -0, then ever more negative
		x := math.Float32frombits(b)
		if x < ExpfFloor {
			break
		}
		check(x)
	}
	for _, x := range []float32{0, -1e-30, -0.5, -float32(math.Ln2) / 2, -float32(math.Ln2), -1, -10, -87, ExpfFloor} {
		check(x)
	}
	t.Logf("worst error %.3f ulps", worst)
	for _, tc := range []struct{ x, want float32 }{
		{float32(math.Inf(-1)), 0}, {ExpfFloor - 1, 0}, {-200, 0}, {0, 1},
	} {
		if got := Expf(tc.x); got != tc.want {
			t.Errorf("Expf(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if got := Expf(float32(math.NaN())); got == got {
		t.Errorf("Expf(NaN) = %v", got)
	}
}
