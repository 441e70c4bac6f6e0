//go:build !purego

package kv

import "github.com/lowmem/llm/internal/cpu"

// The arm64 Int4 kernels (kernels_int4_neon_arm64.s, generated), NEON,
// with the twins' order of operations as Go compiles them for arm64, so
// every result is the twin's bit for bit. archKernels (kernels_arm64.go)
// registers them, for rows of a multiple of 32 elements.

// scoresQ4At runs four rows at a time through the NEON kernel and the rows
// past the last multiple of 4 through the twin, whose result is the same
// bits.
func scoresQ4At(l cpu.Level, dst []float32, k []byte, q []float32) {
	d := len(q)
	n4 := len(dst) &^ 3
	if l < cpu.NEON || d == 0 || d%q4Block != 0 || d > MaxHeadDim || n4 == 0 {
		scoresQ4Rows(dst, k, q)
		return
	}
	rb := q4RowBytes(d)
	k = k[:len(dst)*rb]
	var qp [MaxHeadDim]float32
	permuteQ4Query(qp[:d], q)
	scoresQ4NEON(&dst[0], &k[0], &qp[0], n4, d)
	scoresQ4Rows(dst[n4:], k[n4*rb:], q)
}

// permuteQ4Query orders each 32 elements of q as the NEON scores kernel
// reads them: vector i (elements 4i..4i+3) holds q[2i], q[2i+16], q[2i+1],
// q[2i+17], the elements dotQ4F32Generic's running sums s0, s1, s2, s3
// multiply at its step i.
func permuteQ4Query(dst, q []float32) {
	for b := 0; b+q4Block <= len(q); b += q4Block {
		s := (*[q4Block]float32)(q[b:])
		d := (*[q4Block]float32)(dst[b:])
		for i := 0; i < q4Block/4; i++ {
			d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = s[2*i], s[2*i+16], s[2*i+1], s[2*i+17]
		}
	}
}

// valuesQ4At goes over the rows as valuesQ4Rows does, two at a time and
// skipping zero weights, with the NEON axpy kernels.
func valuesQ4At(l cpu.Level, o, w []float32, v []byte) {
	d := len(o)
	if l < cpu.NEON || d == 0 || d%q4Block != 0 {
		valuesQ4Rows(o, w, v)
		return
	}
	rb := q4RowBytes(d)
	v = v[:len(w)*rb]
	i := 0
	for ; i+2 <= len(w); i += 2 {
		a0, a1 := w[i], w[i+1]
		switch {
		case a0 != 0 && a1 != 0:
			axpy2Q4NEON(&o[0], a0, a1, &v[i*rb], &v[(i+1)*rb], d)
		case a0 != 0:
			axpyQ4NEON(&o[0], a0, &v[i*rb], d)
		case a1 != 0:
			axpyQ4NEON(&o[0], a1, &v[(i+1)*rb], d)
		}
	}
	if i < len(w) && w[i] != 0 {
		axpyQ4NEON(&o[0], w[i], &v[i*rb], d)
	}
}
