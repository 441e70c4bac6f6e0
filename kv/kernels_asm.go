//go:build (amd64 || arm64) && !purego

package kv

import "github.com/lowmem/llm/internal/cpu"

// What the amd64 and arm64 kernels (kernels_amd64.go, kernels_arm64.go)
// share: the registration of the variants every level with assembly has,
// the functions attention calls, which pick a level from the registry and
// call that level's …At function, the …At functions of the one-row
// families, and headsN.

// addRowVariants adds the one-row kernels of level lv (they take rows of
// any length) to the registry under name.
func addRowVariants(k *kernelFamilies, name string, lv cpu.Level) {
	k.dotF16.add(variant[dotF16Func]{name, lv, 1, func(kk []uint16, q []float32) float32 { return dotF16F32At(lv, kk, q) }})
	k.dotI8.add(variant[dotI8Func]{name, lv, 1, func(kk []int8, q []float32) float32 { return dotI8F32At(lv, kk, q) }})
	k.axpyF16.add(variant[axpyF16Func]{name, lv, 1, func(dst []float32, a float32, v []uint16) { axpyF16At(lv, dst, a, v) }})
	k.axpyI8.add(variant[axpyI8Func]{name, lv, 1, func(dst []float32, a float32, v []int8) { axpyI8At(lv, dst, a, v) }})
	k.axpy2F16.add(variant[axpy2F16Func]{name, lv, 1, func(dst []float32, a0, a1 float32, v0, v1 []uint16) {
		axpy2F16At(lv, dst, a0, a1, v0, v1)
	}})
	k.axpy2I8.add(variant[axpy2I8Func]{name, lv, 1, func(dst []float32, a0, a1 float32, v0, v1 []int8) {
		axpy2I8At(lv, dst, a0, a1, v0, v1)
	}})
}

// addMultiRowVariants adds the multi-row kernels of level lv, which take
// rows of a multiple of mult elements, to the registry under name.
func addMultiRowVariants(k *kernelFamilies, name string, lv cpu.Level, mult int) {
	k.scoresF16.add(variant[scoresF16Func]{name, lv, mult, func(dst []float32, kk []uint16, q []float32) {
		scoresF16At(lv, dst, kk, q)
	}})
	k.scoresI8.add(variant[scoresI8Func]{name, lv, mult, func(dst []float32, kk []int8, scales, q []float32) {
		scoresI8At(lv, dst, kk, scales, q)
	}})
	k.valuesF16.add(variant[valuesF16Func]{name, lv, mult, func(o, w []float32, v []uint16) { valuesF16At(lv, o, w, v) }})
	k.valuesI8.add(variant[valuesI8Func]{name, lv, mult, func(o, w []float32, v []int8, scales []float32) {
		valuesI8At(lv, o, w, v, scales)
	}})
	k.scoresF16xN.add(variant[scoresF16xNFunc]{name, lv, mult, func(dst []float32, stride, rows int, kk []uint16, q []float32, d int) int {
		return scoresF16xNAt(lv, dst, stride, rows, kk, q, d)
	}})
	k.scoresI8xN.add(variant[scoresI8xNFunc]{name, lv, mult, func(dst []float32, stride, rows int, kk []int8, scales, q []float32, d int) int {
		return scoresI8xNAt(lv, dst, stride, rows, kk, scales, q, d)
	}})
	k.valuesF16xN.add(variant[valuesF16xNFunc]{name, lv, mult, func(o, w []float32, stride, rows int, v []uint16, d int) int {
		return valuesF16xNAt(lv, o, w, stride, rows, v, d)
	}})
	k.valuesI8xN.add(variant[valuesI8xNFunc]{name, lv, mult, func(o, w []float32, stride, rows int, v []int8, scales []float32, d int) int {
		return valuesI8xNAt(lv, o, w, stride, rows, v, scales, d)
	}})
}

// What attention calls: the best level for the row length.

func dotF16F32(k []uint16, q []float32) float32 { return dotF16F32At(kern.dotF16.levelFor(1), k, q) }

func dotI8F32(k []int8, q []float32) float32 { return dotI8F32At(kern.dotI8.levelFor(1), k, q) }

func axpyF16(dst []float32, a float32, v []uint16) { axpyF16At(kern.axpyF16.levelFor(1), dst, a, v) }

func axpyI8(dst []float32, a float32, v []int8) { axpyI8At(kern.axpyI8.levelFor(1), dst, a, v) }

func axpy2F16(dst []float32, a0, a1 float32, v0, v1 []uint16) {
	axpy2F16At(kern.axpy2F16.levelFor(1), dst, a0, a1, v0, v1)
}

func axpy2I8(dst []float32, a0, a1 float32, v0, v1 []int8) {
	axpy2I8At(kern.axpy2I8.levelFor(1), dst, a0, a1, v0, v1)
}

// scoresF16 sets dst[i] to the dot product of key row i of k with q; the
// rows are len(q) long.
func scoresF16(dst []float32, k []uint16, q []float32) {
	scoresF16At(kern.scoresF16.levelFor(len(q)), dst, k, q)
}

// scoresI8 is scoresF16 for int8 rows: dst[i] is row i's dot product with
// q times scales[i].
func scoresI8(dst []float32, k []int8, scales, q []float32) {
	scoresI8At(kern.scoresI8.levelFor(len(q)), dst, k, scales, q)
}

// valuesF16 adds Σ w[i]·row i of v to o, skipping zero weights; the rows
// are len(o) long.
func valuesF16(o, w []float32, v []uint16) { valuesF16At(kern.valuesF16.levelFor(len(o)), o, w, v) }

// valuesI8 is valuesF16 for int8 rows: row i has weight w[i]·scales[i].
func valuesI8(o, w []float32, v []int8, scales []float32) {
	valuesI8At(kern.valuesI8.levelFor(len(o)), o, w, v, scales)
}

func scoresF16xN(dst []float32, stride, rows int, k []uint16, q []float32, d int) int {
	return scoresF16xNAt(kern.scoresF16xN.levelFor(d), dst, stride, rows, k, q, d)
}

func scoresI8xN(dst []float32, stride, rows int, k []int8, scales, q []float32, d int) int {
	return scoresI8xNAt(kern.scoresI8xN.levelFor(d), dst, stride, rows, k, scales, q, d)
}

func valuesF16xN(o, w []float32, stride, rows int, v []uint16, d int) int {
	return valuesF16xNAt(kern.valuesF16xN.levelFor(d), o, w, stride, rows, v, d)
}

func valuesI8xN(o, w []float32, stride, rows int, v []int8, scales []float32, d int) int {
	return valuesI8xNAt(kern.valuesI8xN.levelFor(d), o, w, stride, rows, v, scales, d)
}

// softmaxF32 is softmaxGeneric.
func softmaxF32(s []float32, scale float32, round16 bool) {
	softmaxAt(kern.softmax.levelFor(1), s, scale, round16)
}

// The one-row kernels by level: asmLevel and above run the
// architecture's kernel (…Asm, in kernels_amd64.go or kernels_arm64.go),
// below it the Go twin.

func dotF16F32At(l cpu.Level, k []uint16, q []float32) float32 {
	if l < asmLevel || len(k) == 0 {
		return dotGeneric(k, q)
	}
	return dotAsm(k, q, dotF16F32Asm)
}

func dotI8F32At(l cpu.Level, k []int8, q []float32) float32 {
	if l < asmLevel || len(k) == 0 {
		return dotGeneric(k, q)
	}
	return dotAsm(k, q, dotI8F32Asm)
}

func axpyF16At(l cpu.Level, dst []float32, a float32, v []uint16) {
	if l < asmLevel || len(v) == 0 {
		axpyGeneric(dst, a, v)
		return
	}
	axpyAsm(dst, a, v, axpyF16Asm)
}

func axpyI8At(l cpu.Level, dst []float32, a float32, v []int8) {
	if l < asmLevel || len(v) == 0 {
		axpyGeneric(dst, a, v)
		return
	}
	axpyAsm(dst, a, v, axpyI8Asm)
}

func axpy2F16At(l cpu.Level, dst []float32, a0, a1 float32, v0, v1 []uint16) {
	if l < asmLevel || len(v0) == 0 {
		axpy2Generic(dst, a0, a1, v0, v1)
		return
	}
	axpy2Asm(dst, a0, a1, v0, v1, axpy2F16Asm)
}

func axpy2I8At(l cpu.Level, dst []float32, a0, a1 float32, v0, v1 []int8) {
	if l < asmLevel || len(v0) == 0 {
		axpy2Generic(dst, a0, a1, v0, v1)
		return
	}
	axpy2Asm(dst, a0, a1, v0, v1, axpy2I8Asm)
}

// dotAsm, axpyAsm and axpy2Asm pass rows of either element type to the
// type's assembly kernel asm, resliced first so that a short slice panics
// in Go as the twin would instead of being read past. They are small
// enough to be inlined, where asm is a known function: the call is then
// direct and the kernel's //go:noescape holds, so the rows do not escape
// (check with -gcflags=-m; a larger generic …At, not inlined, makes every
// row leak).
func dotAsm[T uint16 | int8](k []T, q []float32, asm func(k *T, q *float32, n int) float32) float32 {
	q = q[:len(k)]
	return asm(&k[0], &q[0], len(k))
}

func axpyAsm[T uint16 | int8](dst []float32, a float32, v []T, asm func(dst *float32, a float32, v *T, n int)) {
	dst = dst[:len(v)]
	asm(&dst[0], a, &v[0], len(v))
}

func axpy2Asm[T uint16 | int8](dst []float32, a0, a1 float32, v0, v1 []T, asm func(dst *float32, a0, a1 float32, v0, v1 *T, n int)) {
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	asm(&dst[0], a0, a1, &v0[0], &v1[0], len(v0))
}

// headsN is how many of the heads in q (or o), d floats each, the xN
// kernels of level l take: whole groups of four, then, where the level
// has a two-head kernel (pair), a last two; none for the pure-Go level.
// It checks that the strided slice sw holds them, so that the assembly
// never reads or writes past its end.
func headsN(l cpu.Level, qo, sw []float32, stride, rows, d int, pair bool) int {
	if l < asmLevel || rows == 0 || d <= 0 {
		return 0
	}
	heads := len(qo) / d
	n := heads / 4 * 4
	if pair && heads-n >= 2 {
		n += 2
	}
	if n > 0 {
		_ = qo[n*d-1]
		_ = sw[(n-1)*stride+rows-1]
	}
	return n
}
