//go:build !race

package model

const raceEnabled = false

// perturbationsSkipped: see race_test.go.
const perturbationsSkipped = false
