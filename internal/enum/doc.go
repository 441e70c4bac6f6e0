// Package enum gives the library's small integer enums (KV cache types,
// weights modes, CPU levels, …) one way to name a value and to read a name
// back: each type keeps its names in one table indexed by value; a value
// outside the table prints as the type's name and number instead of
// panicking or printing an empty string, and a name not in it is an error
// that lists the names.
//
//	var modeNames = [...]string{Auto: "auto", Resident: "resident"}
//
//	func (m Mode) String() string { return enum.Name(m, modeNames[:], "Mode") }
//
//	func ParseMode(s string) (Mode, error) {
//		return enum.Parse[Mode](s, modeNames[:], "mode", ErrInvalid)
//	}
package enum
