//go:build (!amd64 && !arm64) || purego

package kv

// The Int4 kernels attention calls, where there is no assembly for them
// (kernels_int4_amd64.go, kernels_int4_arm64.go): the pure-Go twins.

// scoresQ4 sets dst[i] to the dot product of q4_0 key row i of k with q.
func scoresQ4(dst []float32, k []byte, q []float32) { scoresQ4Rows(dst, k, q) }

// valuesQ4 adds Σ w[i]·row i of v to o for q4_0 value rows, skipping zero
// weights.
func valuesQ4(o, w []float32, v []byte) { valuesQ4Rows(o, w, v) }

// scoresQ4xN would take the leading query heads several at a time,
// reading each key row once for them, and report how many heads it did;
// without assembly it does none.
func scoresQ4xN([]float32, int, int, []byte, []float32, int) int { return 0 }

// valuesQ4xN is scoresQ4xN's counterpart for the values.
func valuesQ4xN([]float32, []float32, int, int, []byte, int) int { return 0 }
