//go:build amd64 && !purego

package ssm

import "github.com/lowmem/llm/internal/cpu"

// level is the kernel ScanHead runs, chosen once from the CPU (and
// LLM_CPU): AVX-512 or AVX2 assembly (kernels_amd64.s), else the twin.
var level = cpu.Max()

// scanHead runs the kernel of the level.
func scanHead(s, in, B, C, x, y []float32, dA, dt, d float32) {
	scanHeadAt(level, s, in, B, C, x, y, dA, dt, d)
}

// scanHeadAt runs level l's kernel (the best at or below it) on arguments
// ScanHead has checked.
func scanHeadAt(l cpu.Level, s, in, B, C, x, y []float32, dA, dt, d float32) {
	rows, n := len(x), len(B)
	switch {
	case l >= cpu.AVX512 && n > 0:
		scanHeadAVX512(&s[0], &in[0], &B[0], &C[0], &x[0], &y[0], rows, n, dA, dt, d)
	case l >= cpu.AVX2 && n > 0:
		scanHeadAVX2(&s[0], &in[0], &B[0], &C[0], &x[0], &y[0], rows, n, dA, dt, d)
	default:
		scanHeadGo(s, in, B, C, x, y, dA, dt, d)
	}
}
