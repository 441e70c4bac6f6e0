package testutil

import (
	"errors"
	"fmt"
	"testing"
)

// CheckParse checks an enum's Parse function (kv.ParseType, …): it reads
// back every value's String, and refuses each of bad with an error that
// wraps sentinel and reads fmt.Sprintf(wantErr, bad[i]), naming the
// choices.
func CheckParse[T interface {
	comparable
	fmt.Stringer
}](t testing.TB, parse func(string) (T, error), values []T, sentinel error, wantErr string, bad ...string) {
	t.Helper()
	for _, v := range values {
		if got, err := parse(v.String()); got != v || err != nil {
			t.Errorf("parse(%q) = %v, %v", v.String(), got, err)
		}
	}
	for _, s := range bad {
		_, err := parse(s)
		if want := fmt.Sprintf(wantErr, s); !errors.Is(err, sentinel) || err.Error() != want {
			t.Errorf("parse(%q): %v, want %q", s, err, want)
		}
	}
}
