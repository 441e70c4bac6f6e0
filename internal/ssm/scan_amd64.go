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

// selectiveAt runs level l's SelectiveScan kernel (the best at or below
// it) on arguments SelectiveScan has checked.
func selectiveAt(l cpu.Level, s, in, A, B, C, x, dt, D, y []float32) {
	rows, n := len(x), len(B)
	switch {
	case n == 0 || l < cpu.AVX2:
		selectiveGo(s, in, A, B, C, x, dt, D, y)
	case l >= cpu.AVX512:
		selectiveAVX512(&s[0], &in[0], &A[0], &B[0], &C[0], &x[0], &dt[0], &D[0], &y[0], rows, n)
	default:
		selectiveAVX2(&s[0], &in[0], &A[0], &B[0], &C[0], &x[0], &dt[0], &D[0], &y[0], rows, n)
	}
}

// softplusAt runs Softplus's AVX2 kernel (at AVX-512 too: the time steps
// are a sixteenth of the scan's work) or, below AVX2, the twin.
func softplusAt(l cpu.Level, dst, x, bias []float32) {
	if l < cpu.AVX2 {
		softplusGo(dst, x, bias)
		return
	}
	softplusAVX2(&dst[0], &x[0], &bias[0], len(dst))
}

// wkv6At runs WKV6Head's kernel at headKernel's width, or the twin, on
// arguments WKV6Head has checked.
func wkv6At(l cpu.Level, st, in, r, w, k, v, u, y []float32) {
	switch n := len(r); headKernel(l, n) {
	case cpu.AVX512:
		wkv6HeadAVX512(&st[0], &in[0], &r[0], &w[0], &k[0], &v[0], &u[0], &y[0], n)
	case cpu.AVX2:
		wkv6HeadAVX2(&st[0], &in[0], &r[0], &w[0], &k[0], &v[0], &u[0], &y[0], n)
	default:
		wkv6HeadGo(st, in, r, w, k, v, u, y)
	}
}

// glaAt runs GLAHead's kernel at headKernel's width, or the twin, on
// arguments GLAHead has checked.
func glaAt(l cpu.Level, st, in, r, w, k, v []float32, scale float32, y []float32) {
	switch n := len(r); headKernel(l, n) {
	case cpu.AVX512:
		glaHeadAVX512(&st[0], &in[0], &r[0], &w[0], &k[0], &v[0], &y[0], n, scale)
	case cpu.AVX2:
		glaHeadAVX2(&st[0], &in[0], &r[0], &w[0], &k[0], &v[0], &y[0], n, scale)
	default:
		glaHeadGo(st, in, r, w, k, v, scale, y)
	}
}

// headKernel reports which width of RWKV head kernel level l runs for a
// head of size n: AVX-512's where its lanes divide n, else AVX2's where
// 8 does, else none (the twin).
func headKernel(l cpu.Level, n int) cpu.Level {
	switch {
	case l >= cpu.AVX512 && n%16 == 0:
		return cpu.AVX512
	case l >= cpu.AVX2 && n%8 == 0:
		return cpu.AVX2
	}
	return cpu.Generic
}
