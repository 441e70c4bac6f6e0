package floatbits

import (
	"math"
	"testing"
)

func TestSame(t *testing.T) {
	nan := float32(math.NaN())
	otherNaN := math.Float32frombits(0x7fc00001)
	negZero := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		a, b float32
		want bool
	}{
		{1, 1, true},
		{1, math.Nextafter32(1, 2), false},
		{0, negZero, false},
		{nan, otherNaN, true},
		{nan, inf, false},
		{inf, nan, false},
		{inf, inf, true},
	} {
		if got := Same(tc.a, tc.b); got != tc.want {
			t.Errorf("Same(%g [%#08x], %g [%#08x]) = %v, want %v",
				tc.a, math.Float32bits(tc.a), tc.b, math.Float32bits(tc.b), got, tc.want)
		}
	}
}

func TestFirstDiff(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		got, want []float32
		i         int
	}{
		{nil, nil, -1},
		{[]float32{1, nan, 3}, []float32{1, nan, 3}, -1},
		{[]float32{1, 2, 3, 4}, []float32{1, 2, 3}, -1},
		{[]float32{1, 2, 4}, []float32{1, 2, 3}, 2},
		{[]float32{0, 2}, []float32{float32(math.Copysign(0, -1)), 2}, 0},
	} {
		if i := FirstDiff(tc.got, tc.want); i != tc.i {
			t.Errorf("FirstDiff(%v, %v) = %d, want %d", tc.got, tc.want, i, tc.i)
		}
	}
}
