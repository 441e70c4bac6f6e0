package testutil

// FirstDiff is the first position where a and b differ (the shorter
// one's length when one is a prefix of the other), or -1 when they are
// equal: what a golden comparison reports.
func FirstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
