package softmax

import "math"

// Exp replaces each x of s with exp(x·scale − m), m the largest x·scale,
// and returns the float32 reciprocal of their sum: the softmax is each
// element times it. Callers that round the products (kv rounds attention
// weights to F16) multiply themselves; the rest call InPlace.
func Exp(s []float32, scale float32) (inv float32) {
	mx := float32(math.Inf(-1))
	for i, x := range s {
		x *= scale
		s[i] = x
		mx = max(mx, x)
	}
	var sum float64
	for i, x := range s {
		e := Expf(x - mx)
		s[i] = e
		sum += float64(e)
	}
	return float32(1 / sum)
}

// InPlace replaces s with the softmax of s·scale.
func InPlace(s []float32, scale float32) {
	inv := Exp(s, scale)
	for i := range s {
		s[i] *= inv
	}
}
