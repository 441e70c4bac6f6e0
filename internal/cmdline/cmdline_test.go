package cmdline

import "testing"

// TestCount: billions always with two decimals, millions and thousands
// with the digits asked for.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n      int64
		digits int
		want   string
	}{
		{8_030_000_000, 1, "8.03 B"},
		{8_030_000_000, 2, "8.03 B"},
		{135_230_000, 1, "135.2 M"},
		{1_440_000, 2, "1.44 M"},
		{999_999, 1, "1000.0 K"},
		{12_345, 2, "12.35 K"},
	} {
		if got := Count(tc.n, tc.digits); got != tc.want {
			t.Errorf("Count(%d, %d) = %q, want %q", tc.n, tc.digits, got, tc.want)
		}
	}
}
