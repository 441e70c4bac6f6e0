package enum

import (
	"errors"
	"testing"
)

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

func TestParse(t *testing.T) {
	errBad := errors.New("bad")
	names := []string{"zero", "", "two"}
	for _, tc := range []struct {
		s    string
		want mode
		err  string
	}{
		{"zero", 0, ""}, {"two", 2, ""},
		{"", 0, `mode "": want one of zero, two: bad`},
		{"one", 0, `mode "one": want one of zero, two: bad`},
		{"Zero", 0, `mode "Zero": want one of zero, two: bad`},
	} {
		got, err := Parse[mode](tc.s, names, "mode", errBad)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.s, got, err, tc.want)
		case tc.err != "" && (err == nil || err.Error() != tc.err || !errors.Is(err, errBad)):
			t.Errorf("Parse(%q) error %v; want %q wrapping the sentinel", tc.s, err, tc.err)
		}
	}
}
