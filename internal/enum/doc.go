// Package enum gives the String methods of the library's small integer
// enums (KV cache types, weights modes, CPU levels, …) one way to name a
// value: each type keeps its names in one table indexed by value, and a
// value outside the table prints as the type's name and number instead of
// panicking or printing an empty string.
//
//	var modeNames = [...]string{Auto: "auto", Resident: "resident"}
//
//	func (m Mode) String() string { return enum.Name(m, modeNames[:], "Mode") }
package enum
