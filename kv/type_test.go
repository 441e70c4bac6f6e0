package kv

import (
	"errors"
	"testing"
)

// ParseType reads back every name String gives, and refuses any other
// with ErrInvalid, naming the choices.
func TestParseType(t *testing.T) {
	for _, typ := range []Type{F16, Int8, Int4} {
		if got, err := ParseType(typ.String()); got != typ || err != nil {
			t.Errorf("ParseType(%q) = %v, %v", typ.String(), got, err)
		}
	}
	for _, s := range []string{"", "q4_0", "F16", "Type(3)"} {
		_, err := ParseType(s)
		if !errors.Is(err, ErrInvalid) || err.Error() != `kv type "`+s+`": want one of f16, int8, int4: kv: invalid argument` {
			t.Errorf("ParseType(%q): %v", s, err)
		}
	}
}
