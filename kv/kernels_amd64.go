//go:build amd64 && !purego

package kv

import (
	"math"

	"golang.org/x/sys/cpu"
)

// The CPU features, read once. The assembly kernels need AVX2, FMA and F16C;
// golang.org/x/sys/cpu reports AVX2 and AVX-512 only when the OS saves the
// YMM and ZMM state. Without AVX2 every kernel runs its Go twin. The 512-bit
// kernels use AVX-512F, and VL for the 256-bit forms of registers 16 to 31.
var (
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
)

// Which kernels take rows of d elements: the 512-bit ones when d is a
// multiple of 16, the 256-bit ones when it is a multiple of 8. The choice
// depends on d alone, so one head's scores come from the same kernel
// (same accumulators, same reduction) whether it goes alone or with three
// others.
const (
	isaGo = iota
	isaAVX2
	isaAVX512
)

func isa(d int) int {
	switch {
	case d <= 0:
		return isaGo
	case useAVX512 && d%16 == 0:
		return isaAVX512
	case useAVX2 && d%8 == 0:
		return isaAVX2
	}
	return isaGo
}

//go:noescape
func dotF16F32AVX2(k *uint16, q *float32, n int) float32

//go:noescape
func dotI8F32AVX2(k *int8, q *float32, n int) float32

//go:noescape
func axpyF16AVX2(dst *float32, a float32, v *uint16, n int)

//go:noescape
func axpyI8AVX2(dst *float32, a float32, v *int8, n int)

//go:noescape
func axpy2F16AVX2(dst *float32, a0, a1 float32, v0, v1 *uint16, n int)

//go:noescape
func axpy2I8AVX2(dst *float32, a0, a1 float32, v0, v1 *int8, n int)

//go:noescape
func scoresF16AVX2(dst *float32, k *uint16, q *float32, rows, d int)

//go:noescape
func scoresI8AVX2(dst *float32, k *int8, scales, q *float32, rows, d int)

//go:noescape
func valuesF16AVX2(o, w *float32, v *uint16, rows, d int)

//go:noescape
func valuesI8AVX2(o, w *float32, v *int8, scales *float32, rows, d int)

//go:noescape
func scoresF16x4AVX2(dst *float32, stride int, k *uint16, q *float32, rows, d int)

//go:noescape
func scoresI8x4AVX2(dst *float32, stride int, k *int8, scales, q *float32, rows, d int)

//go:noescape
func valuesF16x4AVX2(o, w *float32, stride int, v *uint16, rows, d int)

//go:noescape
func valuesI8x4AVX2(o, w *float32, stride int, v *int8, scales *float32, rows, d int)

//go:noescape
func softmaxAVX2(s *float32, n int, scale float32, round16 bool)

//go:noescape
func scoresF16AVX512(dst *float32, k *uint16, q *float32, rows, d int)

//go:noescape
func scoresI8AVX512(dst *float32, k *int8, scales, q *float32, rows, d int)

//go:noescape
func valuesF16AVX512(o, w *float32, v *uint16, rows, d int)

//go:noescape
func valuesI8AVX512(o, w *float32, v *int8, scales *float32, rows, d int)

//go:noescape
func scoresF16x4AVX512(dst *float32, stride int, k *uint16, q *float32, rows, d int)

//go:noescape
func scoresI8x4AVX512(dst *float32, stride int, k *int8, scales, q *float32, rows, d int)

//go:noescape
func valuesF16x4AVX512(o, w *float32, stride int, v *uint16, rows, d int)

//go:noescape
func valuesI8x4AVX512(o, w *float32, stride int, v *int8, scales *float32, rows, d int)

//go:noescape
func softmaxAVX512(s *float32, n int, scale float32, round16 bool)

// The wrappers below reslice their arguments before passing pointers, so a
// short slice panics in Go as the twin would instead of being read past.

func dotF16F32(k []uint16, q []float32) float32 {
	if !useAVX2 || len(k) == 0 {
		return dotF16F32Generic(k, q)
	}
	q = q[:len(k)]
	return dotF16F32AVX2(&k[0], &q[0], len(k))
}

func dotI8F32(k []int8, q []float32) float32 {
	if !useAVX2 || len(k) == 0 {
		return dotI8F32Generic(k, q)
	}
	q = q[:len(k)]
	return dotI8F32AVX2(&k[0], &q[0], len(k))
}

func axpyF16(dst []float32, a float32, v []uint16) {
	if !useAVX2 || len(v) == 0 {
		axpyF16Generic(dst, a, v)
		return
	}
	dst = dst[:len(v)]
	axpyF16AVX2(&dst[0], a, &v[0], len(v))
}

func axpyI8(dst []float32, a float32, v []int8) {
	if !useAVX2 || len(v) == 0 {
		axpyI8Generic(dst, a, v)
		return
	}
	dst = dst[:len(v)]
	axpyI8AVX2(&dst[0], a, &v[0], len(v))
}

func axpy2F16(dst []float32, a0, a1 float32, v0, v1 []uint16) {
	if !useAVX2 || len(v0) == 0 {
		axpy2F16Generic(dst, a0, a1, v0, v1)
		return
	}
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	axpy2F16AVX2(&dst[0], a0, a1, &v0[0], &v1[0], len(v0))
}

func axpy2I8(dst []float32, a0, a1 float32, v0, v1 []int8) {
	if !useAVX2 || len(v0) == 0 {
		axpy2I8Generic(dst, a0, a1, v0, v1)
		return
	}
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	axpy2I8AVX2(&dst[0], a0, a1, &v0[0], &v1[0], len(v0))
}

// scoresF16 sets dst[i] to the dot product of key row i of k with q; the
// rows are len(q) long.
func scoresF16(dst []float32, k []uint16, q []float32) {
	d := len(q)
	x := isa(d)
	if x == isaGo || len(dst) == 0 {
		scoresF16Rows(dst, k, q)
		return
	}
	k = k[:len(dst)*d]
	if x == isaAVX512 {
		scoresF16AVX512(&dst[0], &k[0], &q[0], len(dst), d)
	} else {
		scoresF16AVX2(&dst[0], &k[0], &q[0], len(dst), d)
	}
}

// scoresI8 is scoresF16 for int8 rows: dst[i] is row i's dot product with
// q times scales[i].
func scoresI8(dst []float32, k []int8, scales, q []float32) {
	d := len(q)
	x := isa(d)
	if x == isaGo || len(dst) == 0 {
		scoresI8Rows(dst, k, scales, q)
		return
	}
	k = k[:len(dst)*d]
	scales = scales[:len(dst)]
	if x == isaAVX512 {
		scoresI8AVX512(&dst[0], &k[0], &scales[0], &q[0], len(dst), d)
	} else {
		scoresI8AVX2(&dst[0], &k[0], &scales[0], &q[0], len(dst), d)
	}
}

// valuesF16 adds Σ w[i]·row i of v to o, skipping zero weights; the rows are
// len(o) long.
func valuesF16(o, w []float32, v []uint16) {
	d := len(o)
	x := isa(d)
	if x == isaGo || len(w) == 0 {
		valuesF16Rows(o, w, v)
		return
	}
	v = v[:len(w)*d]
	for r, b := 0, valueRows(x, d, 1); r < len(w); r += b {
		if x == isaAVX512 {
			valuesF16AVX512(&o[0], &w[r], &v[r*d], min(b, len(w)-r), d)
		} else {
			valuesF16AVX2(&o[0], &w[r], &v[r*d], min(b, len(w)-r), d)
		}
	}
}

// valuesI8 is valuesF16 for int8 rows: row i has weight w[i]·scales[i].
func valuesI8(o, w []float32, v []int8, scales []float32) {
	d := len(o)
	x := isa(d)
	if x == isaGo || len(w) == 0 {
		valuesI8Rows(o, w, v, scales)
		return
	}
	v = v[:len(w)*d]
	scales = scales[:len(w)]
	for r, b := 0, valueRows(x, d, 1); r < len(w); r += b {
		if x == isaAVX512 {
			valuesI8AVX512(&o[0], &w[r], &v[r*d], &scales[r], min(b, len(w)-r), d)
		} else {
			valuesI8AVX2(&o[0], &w[r], &v[r*d], &scales[r], min(b, len(w)-r), d)
		}
	}
}

// softmaxF32 is softmaxGeneric.
func softmaxF32(s []float32, scale float32, round16 bool) {
	switch {
	case len(s) == 0 || !useAVX2:
		softmaxGeneric(s, scale, round16)
	case useAVX512:
		softmaxAVX512(&s[0], len(s), scale, round16)
	default:
		softmaxAVX2(&s[0], len(s), scale, round16)
	}
}

// heads4 is how many of the heads in q (or o), d floats each, the x4
// kernels take: whole groups of four, none when isa(d) is isaGo. It checks
// that the strided slice sw holds them, so that the assembly never reads or
// writes past its end.
func heads4(qo, sw []float32, stride, rows, d int) int {
	if isa(d) == isaGo || rows == 0 {
		return 0
	}
	n := len(qo) / d / 4 * 4
	if n > 0 {
		_ = qo[n*d-1]
		_ = sw[(n-1)*stride+rows-1]
	}
	return n
}

func scoresF16x4(dst []float32, stride, rows int, k []uint16, q []float32, d int) int {
	n := heads4(q, dst, stride, rows, d)
	if n == 0 {
		return 0
	}
	k = k[:rows*d]
	for h := 0; h < n; h += 4 {
		if isa(d) == isaAVX512 {
			scoresF16x4AVX512(&dst[h*stride], stride, &k[0], &q[h*d], rows, d)
		} else {
			scoresF16x4AVX2(&dst[h*stride], stride, &k[0], &q[h*d], rows, d)
		}
	}
	return n
}

func scoresI8x4(dst []float32, stride, rows int, k []int8, scales, q []float32, d int) int {
	n := heads4(q, dst, stride, rows, d)
	if n == 0 {
		return 0
	}
	k, scales = k[:rows*d], scales[:rows]
	for h := 0; h < n; h += 4 {
		if isa(d) == isaAVX512 {
			scoresI8x4AVX512(&dst[h*stride], stride, &k[0], &scales[0], &q[h*d], rows, d)
		} else {
			scoresI8x4AVX2(&dst[h*stride], stride, &k[0], &scales[0], &q[h*d], rows, d)
		}
	}
	return n
}

// valueRows is how many rows one call of a value kernel of width x takes
// for heads heads of d columns. The kernels keep as many columns of their
// outputs in registers as fit (128 or 64 of one head, 64 of each of four
// with AVX-512) and pass over the rows once per such block of columns; given
// 64 rows at a time, the later passes find them still in L1. The AVX2 x4
// kernels accumulate in memory and pass once.
func valueRows(x, d, heads int) int {
	cols := 64
	switch {
	case x == isaAVX2 && heads == 4:
		return math.MaxInt
	case x == isaAVX512 && heads == 1:
		cols = 128
	}
	if d <= cols {
		return math.MaxInt
	}
	return 64
}

func valuesF16x4(o, w []float32, stride, rows int, v []uint16, d int) int {
	n := heads4(o, w, stride, rows, d)
	if n == 0 {
		return 0
	}
	v = v[:rows*d]
	x := isa(d)
	b := valueRows(x, d, 4)
	for h := 0; h < n; h += 4 {
		for r := 0; r < rows; r += b {
			if x == isaAVX512 {
				valuesF16x4AVX512(&o[h*d], &w[h*stride+r], stride, &v[r*d], min(b, rows-r), d)
			} else {
				valuesF16x4AVX2(&o[h*d], &w[h*stride+r], stride, &v[r*d], min(b, rows-r), d)
			}
		}
	}
	return n
}

func valuesI8x4(o, w []float32, stride, rows int, v []int8, scales []float32, d int) int {
	n := heads4(o, w, stride, rows, d)
	if n == 0 {
		return 0
	}
	v, scales = v[:rows*d], scales[:rows]
	x := isa(d)
	b := valueRows(x, d, 4)
	for h := 0; h < n; h += 4 {
		for r := 0; r < rows; r += b {
			if x == isaAVX512 {
				valuesI8x4AVX512(&o[h*d], &w[h*stride+r], stride, &v[r*d], &scales[r], min(b, rows-r), d)
			} else {
				valuesI8x4AVX2(&o[h*d], &w[h*stride+r], stride, &v[r*d], &scales[r], min(b, rows-r), d)
			}
		}
	}
	return n
}
