//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// x8Variants lists the X8 kernels of t this CPU runs, the one X8 chooses
// first: decode without and with non-temporal prefetch 4 KB ahead, each
// with the group's GEMM.
// Every one needs AVX-512 VNNI only (no VBMI), so Cascade Lake-class
// Xeons run them too.
func x8Variants(t Type) []X8Kernel {
	if ks := x8LowVariants(t); ks != nil {
		return ks
	}
	switch {
	case t == Q4_0 && cpu.Has(cpu.AVX512VNNI):
		return withMulti(t, x8Pair("avx512vnni", t, rowQ4_0X8VNNI, rowQ4_0X8VNNINTA4096, gemmQ4_0X8R0VNNI, gemmQ4_0X8R4VNNI), rowQ4_0X8VNNIT2, rowQ4_0X8VNNIT4, nil)
	case t == Q4_K && cpu.Has(cpu.AVX512VNNI):
		return withMulti(t, x8Pair("avx512vnni", t, rowQ4_KX8VNNI, rowQ4_KX8VNNINTA4096, gemmQ4_KX8GVNNI, nil), rowQ4_KX8VNNIT2, rowQ4_KX8VNNIT4, nil)
	case t == Q8_0 && cpu.Has(cpu.AVX512VNNI):
		return withMulti(t, x8Pair("avx512vnni", t, rowQ8_0X8VNNI, rowQ8_0X8VNNINTA4096, gemmQ8_0X8R0VNNI, gemmQ8_0X8R4VNNI), rowQ8_0X8VNNIT2, rowQ8_0X8VNNIT4, nil)
	case t == Q5_K && cpu.Has(cpu.AVX512VNNI):
		return withMulti(t, x8Pair("avx512vnni", t, rowQ5_KX8VNNI, rowQ5_KX8VNNINTA4096, gemmQ5_KX8GVNNI, nil), rowQ5_KX8VNNIT2, nil, nil)
	case t == Q6_K && cpu.Has(cpu.AVX512VNNI):
		return withMulti(t, x8Pair("avx512vnni", t, rowQ6_KX8VNNI, rowQ6_KX8VNNINTA4096, gemmQ6_KX8GVNNI, nil), rowQ6_KX8VNNIT2, nil, nil)
	}
	return nil
}

// rowX8Asm is the signature of the X8 decode kernels.
type rowX8Asm func(w *byte, groups int, x *byte, nb int, out *float32)

// x8Pair is t's two X8 kernels named for the instruction set isa: decode
// kernel row, and nta, its twin with non-temporal prefetch, each with the
// GEMM of lo and hi (nil for none).
func x8Pair(isa string, t Type, row, nta rowX8Asm, lo, hi gemmAsm) []X8Kernel {
	return []X8Kernel{
		x8Kernel(isa+"-x8", t, row, lo, hi),
		x8Kernel(isa+"-x8-nta", t, nta, lo, hi),
	}
}

// x8Kernel wraps the assembly of one X8 layout: decode kernel row, and
// the GEMM of rows 0-3 (lo) and 4-7 (hi) of a group, or of all eight
// (lo, hi nil: Q4_K's); Mul is nil without them.
func x8Kernel(name string, t Type, row rowX8Asm, lo, hi gemmAsm) X8Kernel {
	bb := X8BlockBytes(t)
	k := X8Kernel{
		Name: name,
		Type: t,
		MatVec: func(n int, w []byte, groups int, x []byte, out []float32) {
			nb := n / t.BlockElems()
			if groups <= 0 {
				return
			}
			// One bounds check each, so the assembly stays inside the slices.
			_ = w[groups*nb*bb-1]
			_ = x[n/t.VecDotType().BlockElems()*t.VecDotType().BlockBytes()-1]
			_ = out[8*groups-1]
			row(&w[0], groups, &x[0], nb, &out[0])
		},
	}
	if lo == nil {
		return k
	}
	g, _ := Gemm(t)
	k.Mul = func(n int, w []byte, groups int, p []byte, cols int, out []float32, outStride int) {
		nb := n / t.BlockElems()
		cols = min(cols, GemmCols)
		if groups <= 0 || cols <= 0 {
			return
		}
		_ = w[groups*nb*bb-1]
		_ = p[g.PanelBytes(n)-1]
		_ = out[(cols-1)*outStride+8*groups-1]
		for i := 0; i < groups; i++ {
			gw := &w[i*nb*bb]
			lo(gw, 0, &p[0], nb, &out[8*i], outStride, cols)
			if hi != nil {
				hi(gw, 0, &p[0], nb, &out[8*i+4], outStride, cols)
			}
		}
	}
	return k
}

// rowX8MultiAsm is the signature of the multi-token X8 decode kernels:
// tokens at x+k·xs, results at out+k·os.
type rowX8MultiAsm func(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)

// withMulti gives each kernel of ks (of type t) a MatVecN over the
// two-, four- and eight-token kernels m2, m4 and m8 (nil for none), a
// batch taken eight tokens at a time, then four, two, one (the kernel's
// own MatVec).
func withMulti(t Type, ks []X8Kernel, m2, m4, m8 rowX8MultiAsm) []X8Kernel {
	bb := X8BlockBytes(t)
	vt := t.VecDotType()
	for i := range ks {
		mv := ks[i].MatVec
		ks[i].MatVecN = func(n int, w []byte, groups int, x []byte, xStride, tokens int, out []float32, outStride int) {
			if groups <= 0 || tokens <= 0 {
				return
			}
			nb := n / t.BlockElems()
			xb := n / vt.BlockElems() * vt.BlockBytes()
			// One bounds check each, so the assembly stays inside the slices.
			_ = w[groups*nb*bb-1]
			_ = x[(tokens-1)*xStride+xb-1]
			_ = out[(tokens-1)*outStride+8*groups-1]
			for k := 0; k < tokens; {
				switch left := tokens - k; {
				case left >= 8 && m8 != nil:
					m8(&w[0], groups, &x[k*xStride], nb, &out[k*outStride], xStride, outStride)
					k += 8
				case left >= 4 && m4 != nil:
					m4(&w[0], groups, &x[k*xStride], nb, &out[k*outStride], xStride, outStride)
					k += 4
				case left >= 2:
					m2(&w[0], groups, &x[k*xStride], nb, &out[k*outStride], xStride, outStride)
					k += 2
				default:
					mv(n, w, groups, x[k*xStride:], out[k*outStride:])
					k++
				}
			}
		}
	}
	return ks
}
