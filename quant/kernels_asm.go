//go:build (amd64 || arm64) && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// The registry of assembly dot products, shared by the architectures that
// have them: each lists its variants in dotVariants (kernels_<arch>.go). A
// variant is listed only when internal/cpu allows its level (the CPU has it
// and LLM_CPU does not cap below it).

// asmDot is the signature of the assembly dot products: nb blocks (F32
// and F16: elements) of weights at w and activations at x.
type asmDot func(w, x *byte, nb int) float32

// dotVariant is one assembly dot product.
type dotVariant struct {
	t     Type
	level cpu.Level
	name  string
	f     asmDot
}

// asmKernels holds, per weight type, the kernels this process runs,
// slowest first. Built once.
var asmKernels = buildAsmKernels()

func buildAsmKernels() map[Type][]Kernel {
	m := make(map[Type][]Kernel)
	for _, v := range dotVariants {
		if cpu.Has(v.level) {
			m[v.t] = append(m[v.t], Kernel{Name: v.name, Type: v.t, Dot: blockDot(v.f, v.t)})
		}
	}
	return m
}

// blockDot adapts an assembly dot product to a DotFunc. It slices w and x
// to the bytes the kernel reads, so a short row panics in Go, as the
// pure-Go kernel does, instead of being read past its end.
func blockDot(f asmDot, t Type) DotFunc {
	be, wb, xb := t.BlockElems(), t.BlockBytes(), t.VecDotType().BlockBytes()
	return func(n int, w, x []byte) float32 {
		nb := n / be
		if nb <= 0 {
			return 0
		}
		w = w[:nb*wb]
		x = x[:nb*xb]
		return f(&w[0], &x[0], nb)
	}
}

// quantizeBlocks encodes src into dst, be elements to a block of bb bytes,
// with the assembly encoder asm when use is true and there is a whole
// block to encode, else with the pure-Go encoder ref, which asm matches
// byte for byte: the activation quantizers of kernels_<arch>.go.
func quantizeBlocks(dst []byte, src []float32, be, bb int, use bool, asm func(dst *byte, src *float32, nb int), ref func(dst []byte, src []float32)) {
	nb := min(len(src)/be, len(dst)/bb)
	if !use || nb == 0 {
		ref(dst, src)
		return
	}
	asm(&dst[0], &src[0], nb)
}

// archKernels lists the assembly kernels this process can run for t,
// slowest first.
func archKernels(t Type) []Kernel {
	return append([]Kernel(nil), asmKernels[t]...)
}

// asmDotOf returns the kernel of t named name (for the tile specs), or nil.
func asmDotOf(t Type, name string) DotFunc {
	for _, k := range asmKernels[t] {
		if k.Name == name {
			return k.Dot
		}
	}
	return nil
}
