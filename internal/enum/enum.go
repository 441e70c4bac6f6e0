package enum

import "strconv"

// Name returns names[v], or typ(v) (e.g. "Type(7)") when v is negative,
// past the end of names or has an empty name, so a String method never
// panics on a value converted from an arbitrary integer.
func Name[T ~int | ~int32 | ~uint8](v T, names []string, typ string) string {
	if v >= 0 && int64(v) < int64(len(names)) && names[v] != "" {
		return names[v]
	}
	return typ + "(" + strconv.FormatInt(int64(v), 10) + ")"
}
