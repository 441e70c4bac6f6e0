package testutil

import "math"

// Argmax is the greedy token the tests follow: the first of the largest
// logits. Golden tests in several packages compare greedy runs, so they
// must break ties the same way.
func Argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

// RelDiff is the largest |a[i]-b[i]| over the largest |b[i]|: how far
// two runs' logits are apart, relative to their scale.
func RelDiff(a, b []float32) float64 {
	var d, m float64
	for i := range b {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
		m = max(m, math.Abs(float64(b[i])))
	}
	return d / m
}
