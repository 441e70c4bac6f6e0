package floatbits

import "math"

// Same reports whether a and b are the same float32: the same bits, or
// both NaN.
func Same(a, b float32) bool {
	if math.IsNaN(float64(a)) {
		return math.IsNaN(float64(b))
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// FirstDiff returns the index of the first element of want that got does
// not hold the Same value at, or -1 when there is none. got must be at
// least as long as want.
func FirstDiff(got, want []float32) int {
	for i := range want {
		if !Same(got[i], want[i]) {
			return i
		}
	}
	return -1
}
