package kv

import "github.com/lowmem/llm/internal/cpu"

//go:generate sh -c "cd ../internal/asm && go run ./amd64 -pkg kv -out ../../kv"

// The attention kernels come in families (a dot product, an axpy, the
// multi-row scores and values, alone or several heads at once, softmax), and
// each family is a list of variants: the pure-Go twin first, then the
// architecture's (kernels_amd64.go: AVX2, AVX-512; kernels_arm64.go:
// NEON), each needing an instruction-set level. A variant is listed only when internal/cpu allows
// its level (the CPU has it and LLM_CPU does not cap below it), so one
// test runs them all against the twin, and LLM_CPU=avx2 forces the AVX2
// path through the end-to-end tests.
//
// The multi-row variants take rows of d elements only for d a multiple of
// their width (mult); a call picks the best level that takes its d. The
// choice depends on d alone, so one head's scores come from the same
// variant (same accumulators, same reduction) whether it goes alone or
// with three others, and the families of one level agree bit for bit.
//
// The functions attention calls (dotF16F32, scoresF16, …) are defined
// once for the architectures with assembly (kernels_asm.go,
// kernels_int4_asm.go) and once for the rest (kernels_other.go,
// kernels_int4_dispatch.go): they look up the level in the registry and
// call that level's kernel directly, not through the func value, so that
// escape analysis keeps attention's stack buffers on the stack.

// variant is one implementation of a kernel family.
type variant[F any] struct {
	name  string // "generic", "avx2", "avx512"
	level cpu.Level
	mult  int // row lengths it takes: positive multiples of mult
	f     F
}

// family lists the variants of a kernel this process may run, the
// pure-Go one first.
type family[F any] struct {
	all []variant[F]
}

// add appends the variants whose level internal/cpu allows.
func (fam *family[F]) add(vs ...variant[F]) {
	for _, v := range vs {
		if cpu.Has(v.level) {
			fam.all = append(fam.all, v)
		}
	}
}

// addGeneric adds the pure-Go variant f, which takes rows of any length.
func (fam *family[F]) addGeneric(f F) { fam.add(variant[F]{"generic", cpu.Generic, 1, f}) }

// levelFor returns the level of the best variant that takes rows of d
// elements (Generic for d <= 0).
func (fam *family[F]) levelFor(d int) cpu.Level {
	for i := len(fam.all) - 1; i > 0; i-- {
		if v := &fam.all[i]; d > 0 && d%v.mult == 0 {
			return v.level
		}
	}
	return cpu.Generic
}

// The signatures of the families.
type (
	dotF16Func   = func(k []uint16, q []float32) float32
	dotI8Func    = func(k []int8, q []float32) float32
	axpyF16Func  = func(dst []float32, a float32, v []uint16)
	axpyI8Func   = func(dst []float32, a float32, v []int8)
	axpy2F16Func = func(dst []float32, a0, a1 float32, v0, v1 []uint16)
	axpy2I8Func  = func(dst []float32, a0, a1 float32, v0, v1 []int8)
	// Scores and values of one head; rows are len(q) or len(o) long.
	scoresF16Func = func(dst []float32, k []uint16, q []float32)
	scoresI8Func  = func(dst []float32, k []int8, scales, q []float32)
	valuesF16Func = func(o, w []float32, v []uint16)
	valuesI8Func  = func(o, w []float32, v []int8, scales []float32)
	// The multi-head kernels take the leading heads of q (or o), d floats
	// each, four at a time and, where the level has two-head kernels, a
	// last two, and return how many they did (the pure-Go "variant" does
	// none).
	scoresF16xNFunc = func(dst []float32, stride, rows int, k []uint16, q []float32, d int) int
	scoresI8xNFunc  = func(dst []float32, stride, rows int, k []int8, scales, q []float32, d int) int
	valuesF16xNFunc = func(o, w []float32, stride, rows int, v []uint16, d int) int
	valuesI8xNFunc  = func(o, w []float32, stride, rows int, v []int8, scales []float32, d int) int
	softmaxFunc     = func(s []float32, scale float32, round16 bool)
	// Int4 (q4_0) rows: one head, and several at a time.
	scoresQ4Func   = func(dst []float32, k []byte, q []float32)
	valuesQ4Func   = func(o, w []float32, v []byte)
	scoresQ4xNFunc = func(dst []float32, stride, rows int, k []byte, q []float32, d int) int
	valuesQ4xNFunc = func(o, w []float32, stride, rows int, v []byte, d int) int
)

// kernelFamilies holds every family.
type kernelFamilies struct {
	dotF16      family[dotF16Func]
	dotI8       family[dotI8Func]
	axpyF16     family[axpyF16Func]
	axpyI8      family[axpyI8Func]
	axpy2F16    family[axpy2F16Func]
	axpy2I8     family[axpy2I8Func]
	scoresF16   family[scoresF16Func]
	scoresI8    family[scoresI8Func]
	valuesF16   family[valuesF16Func]
	valuesI8    family[valuesI8Func]
	scoresF16xN family[scoresF16xNFunc]
	scoresI8xN  family[scoresI8xNFunc]
	valuesF16xN family[valuesF16xNFunc]
	valuesI8xN  family[valuesI8xNFunc]
	softmax     family[softmaxFunc]
	scoresQ4    family[scoresQ4Func]
	valuesQ4    family[valuesQ4Func]
	scoresQ4xN  family[scoresQ4xNFunc]
	valuesQ4xN  family[valuesQ4xNFunc]
}

// kern is the registry, built once at start-up and read-only after. It
// is set in init because the pure-Go row kernels call the dispatching
// dot products, which read it.
var kern *kernelFamilies

func init() { kern = newKernelFamilies() }

func newKernelFamilies() *kernelFamilies {
	k := &kernelFamilies{}
	k.dotF16.addGeneric(dotGeneric[uint16])
	k.dotI8.addGeneric(dotGeneric[int8])
	k.axpyF16.addGeneric(axpyGeneric[uint16])
	k.axpyI8.addGeneric(axpyGeneric[int8])
	k.axpy2F16.addGeneric(axpy2Generic[uint16])
	k.axpy2I8.addGeneric(axpy2Generic[int8])
	k.scoresF16.addGeneric(scoresF16Rows)
	k.scoresI8.addGeneric(scoresI8Rows)
	k.valuesF16.addGeneric(valuesF16Rows)
	k.valuesI8.addGeneric(valuesI8Rows)
	k.scoresF16xN.addGeneric(func([]float32, int, int, []uint16, []float32, int) int { return 0 })
	k.scoresI8xN.addGeneric(func([]float32, int, int, []int8, []float32, []float32, int) int { return 0 })
	k.valuesF16xN.addGeneric(func([]float32, []float32, int, int, []uint16, int) int { return 0 })
	k.valuesI8xN.addGeneric(func([]float32, []float32, int, int, []int8, []float32, int) int { return 0 })
	k.softmax.addGeneric(softmaxGeneric)
	k.scoresQ4.addGeneric(scoresQ4Rows)
	k.valuesQ4.addGeneric(valuesQ4Rows)
	k.scoresQ4xN.addGeneric(func([]float32, int, int, []byte, []float32, int) int { return 0 })
	k.valuesQ4xN.addGeneric(func([]float32, []float32, int, int, []byte, int) int { return 0 })
	archKernels(k)
	return k
}
