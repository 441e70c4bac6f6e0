//go:build amd64 && !purego

package ssm

import (
	"unsafe"

	"github.com/lowmem/llm/internal/cpu"
)

// scanHeadAt runs level l's kernel (the best at or below it) on arguments
// ScanHead has checked; with stream, its non-temporal form where streams
// allows.
func scanHeadAt(l cpu.Level, stream bool, s, in, B, C, x, y []float32, dA, dt, d float32) {
	rows, n := len(x), len(B)
	switch {
	case n == 0 || l < cpu.AVX2:
		scanHeadGo(s, in, B, C, x, y, dA, dt, d)
	case l >= cpu.AVX512 && stream && streams(s, n, 64):
		scanHeadNTAVX512(&s[0], &in[0], &B[0], &C[0], &x[0], &y[0], rows, n, dA, dt, d)
	case l >= cpu.AVX512:
		scanHeadAVX512(&s[0], &in[0], &B[0], &C[0], &x[0], &y[0], rows, n, dA, dt, d)
	case stream && streams(s, n, 32):
		scanHeadNTAVX2(&s[0], &in[0], &B[0], &C[0], &x[0], &y[0], rows, n, dA, dt, d)
	default:
		scanHeadAVX2(&s[0], &in[0], &B[0], &C[0], &x[0], &y[0], rows, n, dA, dt, d)
	}
}

// streams reports whether the non-temporal kernel of a vector of align
// bytes can write s in rows of n floats: every vector store aligned.
func streams(s []float32, n, align int) bool {
	return n%16 == 0 && uintptr(unsafe.Pointer(&s[0]))%uintptr(align) == 0
}
