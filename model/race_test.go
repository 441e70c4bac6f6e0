//go:build race

package model

const raceEnabled = true

// perturbationsSkipped: under the race detector the reference tests
// compare the engine with the float64 pass but leave out the passes of
// perturbed references (mustMove, mustMoveAll): those check the float64
// pass itself, which runs no goroutines, and were most of the package's
// time under -race; every other run of the tests makes them.
const perturbationsSkipped = true
