package kv

// The Int4 kernels attention calls. Every platform runs the pure-Go twins
// for now; assembly variants (AVX2/AVX-512 for the row kernels and the
// four-heads-at-once ones) belong to the kernel generator, which replaces
// these four functions with its dispatch, as it does for the F16 and Int8
// families.

// scoresQ4 sets dst[i] to the dot product of q4_0 key row i of k with q.
func scoresQ4(dst []float32, k []byte, q []float32) { scoresQ4Rows(dst, k, q) }

// valuesQ4 adds Σ w[i]·row i of v to o for q4_0 value rows, skipping zero
// weights.
func valuesQ4(o, w []float32, v []byte) { valuesQ4Rows(o, w, v) }

// scoresQ4x4 would take the leading query heads four at a time, reading
// each key row once for the four, and report how many heads it did; without
// assembly it does none.
func scoresQ4x4([]float32, int, int, []byte, []float32, int) int { return 0 }

// valuesQ4x4 is scoresQ4x4's counterpart for the values.
func valuesQ4x4([]float32, []float32, int, int, []byte, int) int { return 0 }
