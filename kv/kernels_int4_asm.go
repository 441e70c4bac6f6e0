//go:build (amd64 || arm64) && !purego

package kv

// The Int4 kernels attention calls where there is assembly for them
// (kernels_int4_amd64.go, kernels_int4_arm64.go): each picks the level once
// per call from the registry.

// scoresQ4 sets dst[i] to the dot product of q4_0 key row i of k with q.
func scoresQ4(dst []float32, k []byte, q []float32) {
	scoresQ4At(kern.scoresQ4.levelFor(len(q)), dst, k, q)
}

// valuesQ4 adds Σ w[i]·row i of v to o for q4_0 value rows, skipping zero
// weights.
func valuesQ4(o, w []float32, v []byte) { valuesQ4At(kern.valuesQ4.levelFor(len(o)), o, w, v) }

// scoresQ4xN takes the leading query heads four (or, with AVX-512, a last
// two) at a time, reading each key row once for them, and reports how many
// it did.
func scoresQ4xN(dst []float32, stride, rows int, k []byte, q []float32, d int) int {
	return scoresQ4xNAt(kern.scoresQ4xN.levelFor(d), dst, stride, rows, k, q, d)
}

// valuesQ4xN is scoresQ4xN's counterpart for the values.
func valuesQ4xN(o, w []float32, stride, rows int, v []byte, d int) int {
	return valuesQ4xNAt(kern.valuesQ4xN.levelFor(d), o, w, stride, rows, v, d)
}
