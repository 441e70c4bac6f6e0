package testutil

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
