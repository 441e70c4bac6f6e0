//go:build race

package llm_test

const raceEnabled = true
