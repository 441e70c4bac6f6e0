package enum

import "testing"

type mode uint8

func TestName(t *testing.T) {
	names := []string{"zero", "", "two"}
	for _, tc := range []struct {
		v    int
		want string
	}{
		{0, "zero"}, {2, "two"}, {1, "T(1)"}, {3, "T(3)"}, {-1, "T(-1)"},
	} {
		if got := Name(tc.v, names, "T"); got != tc.want {
			t.Errorf("Name(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := Name(mode(200), names, "mode"); got != "mode(200)" {
		t.Errorf("Name(mode(200)) = %q", got)
	}
}
