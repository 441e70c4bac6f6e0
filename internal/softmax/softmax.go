package softmax

import "math"

// Exp replaces each x of s with exp(x·scale − m), m the largest x·scale,
// and returns the float32 reciprocal of their sum: the softmax is each
// element times it. Callers that round the products (kv rounds attention
// weights to F16) multiply themselves; the rest call InPlace.
func Exp(s []float32, scale float32) (inv float32) {
	sum, _ := expSum(s, scale, float32(math.Inf(-1)))
	return float32(1 / sum)
}

// ExpSink is Exp with an attention sink (gpt-oss): a logit that takes part
// in the maximum and, after the elements, in the sum, as ggml_soft_max
// adds a sink, without an element of its own; it is not scaled.
func ExpSink(s []float32, scale, sink float32) (inv float32) {
	sum, mx := expSum(s, scale, sink)
	sum += float64(Expf(sink - mx))
	return float32(1 / sum)
}

// expSum replaces each x of s with exp(x·scale − m), m the largest of the
// x·scale and floor, and returns the float64 sum of the exponentials and m.
func expSum(s []float32, scale, floor float32) (sum float64, m float32) {
	m = floor
	for i, x := range s {
		x *= scale
		s[i] = x
		m = max(m, x)
	}
	for i, x := range s {
		e := Expf(x - m)
		s[i] = e
		sum += float64(e)
	}
	return sum, m
}

// InPlace replaces s with the softmax of s·scale.
func InPlace(s []float32, scale float32) {
	inv := Exp(s, scale)
	for i := range s {
		s[i] *= inv
	}
}
