//go:build !purego

package quant

import "golang.org/x/sys/cpu"

// The CPU features the arm64 kernels need, read once. Every arm64 CPU has
// Advanced SIMD (NEON); SDOT is FEAT_DotProd (Cortex-A55/A76 and later,
// Neoverse N1, Apple M1), SMMLA is FEAT_I8MM (Cortex-A510/A710, Neoverse
// N2/V1, Apple M2).
var (
	haveDotprod = cpu.ARM64.HasASIMDDP
	haveI8MM    = haveDotprod && cpu.ARM64.HasI8MM
)

// asmKernels holds, per weight type, the kernels this CPU runs, slowest
// first, so Dot picks the last one.
var asmKernels = buildAsmKernels()

func buildAsmKernels() map[Type][]Kernel {
	m := make(map[Type][]Kernel)
	add := func(ok bool, t Type, name string, f DotFunc) {
		if ok {
			m[t] = append(m[t], Kernel{Name: name, Type: t, Dot: f})
		}
	}
	for _, s := range armSpecs {
		add(s.ok() && !s.noDot, s.t, s.name, s.asmDot)
	}
	return m
}

// archKernels lists the assembly kernels this CPU can run for t, slowest
// first.
func archKernels(t Type) []Kernel {
	return append([]Kernel(nil), asmKernels[t]...)
}

// armSpec describes the kernels of one weight type at one feature level:
// the dot product of one row, the tile of 4 rows by one column that
// matrix-vector products run, and optionally a 4×cols tile for batches.
type armSpec struct {
	name   string
	t      Type
	lvl    int // 0 NEON, 1 dotprod, 2 i8mm
	dot    func(w, x *byte, nb int) float32
	col    tileAsm // 4 × 1
	big    tileAsm // 4 × cols, or nil
	cols   int
	noDot  bool // the level adds nothing to the dot product of the level below
	mult   int  // the tiles take n a multiple of this (0: any)
	layout tileLayout
}

// tileAsm is the signature of the assembly tile kernels: out[c*outStride+r]
// for the kernel's 4 rows and its columns, over nb > 0 blocks. Strides are
// in bytes for w and x and in floats for out.
type tileAsm func(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)

func (s *armSpec) ok() bool {
	switch s.lvl {
	case 1:
		return haveDotprod
	case 2:
		return haveI8MM
	}
	return true
}

// armSpecs lists the kernels, slowest first within each type.
var armSpecs = []*armSpec{
	{name: "neon", t: F32, lvl: 0, dot: dotF32NEON, col: tileF32NEON4x1, mult: 4},
	{name: "neon", t: F16, lvl: 0, dot: dotF16NEON, col: tileF16NEON4x1, mult: 4},
	{name: "neon", t: Q4_0, lvl: 0, dot: dotQ4_0NEON, col: tileQ4_0NEON4x1, big: tileQ4_0NEON4x4, cols: 4},
	{name: "dotprod", t: Q4_0, lvl: 1, dot: dotQ4_0Dotprod, col: tileQ4_0Dotprod4x1, big: tileQ4_0Dotprod4x4, cols: 4},
	{name: "i8mm", t: Q4_0, lvl: 2, dot: dotQ4_0Dotprod, col: tileQ4_0Dotprod4x1, big: tileQ4_0I8MM4x4, cols: 4, noDot: true},
	{name: "neon", t: Q4_1, lvl: 0, dot: dotQ4_1NEON, col: tileQ4_1NEON4x1, big: tileQ4_1NEON4x4, cols: 4},
	{name: "dotprod", t: Q4_1, lvl: 1, dot: dotQ4_1Dotprod, col: tileQ4_1Dotprod4x1, big: tileQ4_1Dotprod4x4, cols: 4},
	{name: "i8mm", t: Q4_1, lvl: 2, dot: dotQ4_1Dotprod, col: tileQ4_1Dotprod4x1, big: tileQ4_1I8MM4x4, cols: 4, noDot: true},
	{name: "neon", t: Q5_0, lvl: 0, dot: dotQ5_0NEON, col: tileQ5_0NEON4x1, big: tileQ5_0NEON4x4, cols: 4},
	{name: "dotprod", t: Q5_0, lvl: 1, dot: dotQ5_0Dotprod, col: tileQ5_0Dotprod4x1, big: tileQ5_0Dotprod4x4, cols: 4},
	{name: "neon", t: Q8_0, lvl: 0, dot: dotQ8_0NEON, col: tileQ8_0NEON4x1, big: tileQ8_0NEON4x4, cols: 4},
	{name: "dotprod", t: Q8_0, lvl: 1, dot: dotQ8_0Dotprod, col: tileQ8_0Dotprod4x1, big: tileQ8_0Dotprod4x4, cols: 4},
	{name: "i8mm", t: Q8_0, lvl: 2, dot: dotQ8_0Dotprod, col: tileQ8_0Dotprod4x1, big: tileQ8_0I8MM4x4, cols: 4, noDot: true},
	{name: "neon", t: Q4_K, lvl: 0, dot: dotQ4_KNEON, col: tileQ4_KNEON4x1},
	{name: "dotprod", t: Q4_K, lvl: 1, dot: dotQ4_KDotprod, col: tileQ4_KDotprod4x1},
	{name: "neon", t: Q5_K, lvl: 0, dot: dotQ5_KNEON, col: tileQ5_KNEON4x1},
	{name: "dotprod", t: Q5_K, lvl: 1, dot: dotQ5_KDotprod, col: tileQ5_KDotprod4x1},
	{name: "neon", t: Q6_K, lvl: 0, dot: dotQ6_KNEON, col: tileQ6_KNEON4x1},
	{name: "dotprod", t: Q6_K, lvl: 1, dot: dotQ6_KDotprod, col: tileQ6_KDotprod4x1},
}

func init() {
	for _, s := range armSpecs {
		s.layout = tileLayoutOf(s.t)
	}
}

// asmDot is the DotFunc of s: whole blocks only, and slices cut to them
// first, so a short slice panics as the twin's would instead of being read
// past.
func (s *armSpec) asmDot(n int, w, x []byte) float32 {
	nb := n / s.layout.be
	if nb <= 0 {
		return 0
	}
	w = w[:nb*s.layout.wb]
	x = x[:n/s.layout.xbe*s.layout.xbb]
	return s.dot(&w[0], &x[0], nb)
}
