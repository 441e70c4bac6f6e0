package kv

// The Int4 kernels attention calls: the best level in the registry
// (kern.scoresQ4, kern.valuesQ4) for the row length, whose kernel the
// platform's …At function calls directly (kernels_int4_arm64.go; every
// other platform runs the pure-Go twins, kernels_int4_other.go).

// scoresQ4 sets dst[i] to the dot product of q4_0 key row i of k with q.
func scoresQ4(dst []float32, k []byte, q []float32) {
	scoresQ4At(kern.scoresQ4.levelFor(len(q)), dst, k, q)
}

// valuesQ4 adds Σ w[i]·row i of v to o for q4_0 value rows, skipping zero
// weights.
func valuesQ4(o, w []float32, v []byte) { valuesQ4At(kern.valuesQ4.levelFor(len(o)), o, w, v) }

// scoresQ4x4 would take the leading query heads four at a time, reading
// each key row once for the four, and report how many heads it did; without
// assembly it does none.
func scoresQ4x4([]float32, int, int, []byte, []float32, int) int { return 0 }

// valuesQ4x4 is scoresQ4x4's counterpart for the values.
func valuesQ4x4([]float32, []float32, int, int, []byte, int) int { return 0 }
