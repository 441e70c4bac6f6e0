//go:build !purego

package ssm

import (
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// levels are the kernels this CPU can run, for the tests: NEON, unless
// LLM_CPU caps it.
func levels() []cpu.Level {
	if cpu.Has(cpu.NEON) {
		return []cpu.Level{cpu.NEON}
	}
	return nil
}

// Below NEON (LLM_CPU=generic) every entry point runs the twin.
func TestGenericLevelRunsTwin(t *testing.T) {
	s, y := make([]float32, 16), make([]float32, 1)
	B, C := make([]float32, 16), make([]float32, 16)
	for i := range B {
		B[i], C[i] = float32(i), 1
	}
	scanHeadAt(cpu.Generic, false, s, s, B, C, []float32{1}, y, 1, 1, 0)
	if y[0] != 120 {
		t.Errorf("generic scan: y = %v, want 120", y[0])
	}
}
