//go:build !(amd64 || arm64) || purego

package kv

// No assembly on this platform or with -tags purego: every family is its
// pure-Go twin.

func archKernels(*kernelFamilies) {}

func dotF16F32(k []uint16, q []float32) float32 { return dotGeneric(k, q) }

func axpyF16(dst []float32, a float32, v []uint16) { axpyGeneric(dst, a, v) }

func axpy2F16(dst []float32, a0, a1 float32, v0, v1 []uint16) {
	axpy2Generic(dst, a0, a1, v0, v1)
}

func dotI8F32(k []int8, q []float32) float32 { return dotGeneric(k, q) }

func axpyI8(dst []float32, a float32, v []int8) { axpyGeneric(dst, a, v) }

func axpy2I8(dst []float32, a0, a1 float32, v0, v1 []int8) { axpy2Generic(dst, a0, a1, v0, v1) }

func scoresF16(dst []float32, k []uint16, q []float32) { scoresF16Rows(dst, k, q) }

func scoresI8(dst []float32, k []int8, scales, q []float32) { scoresI8Rows(dst, k, scales, q) }

func valuesF16(o, w []float32, v []uint16) { valuesF16Rows(o, w, v) }

func valuesI8(o, w []float32, v []int8, scales []float32) { valuesI8Rows(o, w, v, scales) }

func softmaxF32(s []float32, scale float32, round16 bool) { softmaxGeneric(s, scale, round16) }

// No heads go several at a time: the ...Heads functions call the kernels above
// once per head.

func scoresF16xN([]float32, int, int, []uint16, []float32, int) int { return 0 }

func scoresI8xN([]float32, int, int, []int8, []float32, []float32, int) int { return 0 }

func valuesF16xN([]float32, []float32, int, int, []uint16, int) int { return 0 }

func valuesI8xN([]float32, []float32, int, int, []int8, []float32, int) int { return 0 }
