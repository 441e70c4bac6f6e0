package enum

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Name returns names[v], or typ(v) (e.g. "Type(7)") when v is negative,
// past the end of names or has an empty name, so a String method never
// panics on a value converted from an arbitrary integer.
func Name[T ~int | ~int32 | ~uint8](v T, names []string, typ string) string {
	if v >= 0 && int64(v) < int64(len(names)) && names[v] != "" {
		return names[v]
	}
	return typ + "(" + strconv.FormatInt(int64(v), 10) + ")"
}

// Parse is Name's inverse, for flags and configuration files: the value
// names gives s, or an error saying what (e.g. "kv type") s was meant to
// be and which names there are, wrapping sentinel.
func Parse[T ~int | ~int32 | ~uint8](s string, names []string, what string, sentinel error) (T, error) {
	if i := slices.Index(names, s); i >= 0 && s != "" {
		return T(i), nil
	}
	list := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "" })
	return 0, fmt.Errorf("%s %q: want one of %s: %w", what, s, strings.Join(list, ", "), sentinel)
}
