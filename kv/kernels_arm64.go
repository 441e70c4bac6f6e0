//go:build !purego

package kv

// The NEON kernels (kernels_neon_arm64.s, generated) keep the Go twins'
// order of operations, so every result is the twin's, bit for bit. Every
// arm64 CPU has NEON. The wrappers reslice their arguments before passing
// pointers, so a short slice panics in Go as the twin would instead of
// being read past.

// archKernels adds no variants yet: the NEON kernels replace the twins in
// the dispatch functions below.
func archKernels(*kernelFamilies) {}

func dotF16F32(k []uint16, q []float32) float32 {
	if len(k) == 0 {
		return 0
	}
	q = q[:len(k)]
	return dotF16F32NEON(&k[0], &q[0], len(k))
}

func dotI8F32(k []int8, q []float32) float32 {
	if len(k) == 0 {
		return 0
	}
	q = q[:len(k)]
	return dotI8F32NEON(&k[0], &q[0], len(k))
}

func axpyF16(dst []float32, a float32, v []uint16) {
	if len(v) == 0 {
		return
	}
	dst = dst[:len(v)]
	axpyF16NEON(&dst[0], a, &v[0], len(v))
}

func axpyI8(dst []float32, a float32, v []int8) {
	if len(v) == 0 {
		return
	}
	dst = dst[:len(v)]
	axpyI8NEON(&dst[0], a, &v[0], len(v))
}

func axpy2F16(dst []float32, a0, a1 float32, v0, v1 []uint16) {
	if len(v0) == 0 {
		return
	}
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	axpy2F16NEON(&dst[0], a0, a1, &v0[0], &v1[0], len(v0))
}

func axpy2I8(dst []float32, a0, a1 float32, v0, v1 []int8) {
	if len(v0) == 0 {
		return
	}
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	axpy2I8NEON(&dst[0], a0, a1, &v0[0], &v1[0], len(v0))
}

// scoresF16 sets dst[i] to the dot product of key row i of k with q; the
// rows are len(q) long. Four rows go at a time when the row length is a
// multiple of 4, the rest one by one.
func scoresF16(dst []float32, k []uint16, q []float32) {
	d := len(q)
	n4 := len(dst) &^ 3
	if d == 0 || d%4 != 0 || n4 == 0 {
		scoresF16Rows(dst, k, q)
		return
	}
	k = k[:len(dst)*d]
	scoresF16NEON(&dst[0], &k[0], &q[0], n4, d)
	scoresF16Rows(dst[n4:], k[n4*d:], q)
}

// scoresI8 is scoresF16 for int8 rows: dst[i] is row i's dot product with
// q times scales[i].
func scoresI8(dst []float32, k []int8, scales, q []float32) {
	d := len(q)
	n4 := len(dst) &^ 3
	if d == 0 || d%4 != 0 || n4 == 0 {
		scoresI8Rows(dst, k, scales, q)
		return
	}
	k = k[:len(dst)*d]
	scales = scales[:len(dst)]
	scoresI8NEON(&dst[0], &k[0], &scales[0], &q[0], n4, d)
	scoresI8Rows(dst[n4:], k[n4*d:], scales[n4:], q)
}

// The value sums go row pair by row pair through the axpy kernels above.

func valuesF16(o, w []float32, v []uint16) { valuesF16Rows(o, w, v) }

func valuesI8(o, w []float32, v []int8, scales []float32) { valuesI8Rows(o, w, v, scales) }

func softmaxF32(s []float32, scale float32, round16 bool) { softmaxGeneric(s, scale, round16) }

// No head goes four at a time: the ...Heads functions call the kernels
// above once per head.

func scoresF16x4([]float32, int, int, []uint16, []float32, int) int { return 0 }

func scoresI8x4([]float32, int, int, []int8, []float32, []float32, int) int { return 0 }

func valuesF16x4([]float32, []float32, int, int, []uint16, int) int { return 0 }

func valuesI8x4([]float32, []float32, int, int, []int8, []float32, int) int { return 0 }
