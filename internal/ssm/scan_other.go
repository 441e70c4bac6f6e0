//go:build !amd64 || purego

package ssm

import "github.com/lowmem/llm/internal/cpu"

// No assembly on this platform or with -tags purego: ScanHead is the twin.
func scanHead(s, in, B, C, x, y []float32, dA, dt, d float32) {
	scanHeadGo(s, in, B, C, x, y, dA, dt, d)
}

// scanHeadAt is the twin at every level.
func scanHeadAt(_ cpu.Level, s, in, B, C, x, y []float32, dA, dt, d float32) {
	scanHeadGo(s, in, B, C, x, y, dA, dt, d)
}
