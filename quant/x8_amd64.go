//go:build amd64 && !purego

package quant

import (
	"strings"

	"github.com/lowmem/llm/internal/cpu"
)

// x8Variants lists the X8 kernels of t this CPU runs, the one X8 chooses
// first: decode without and with non-temporal prefetch 4 KB ahead, each
// with the group's GEMM; with AVX-512 the VNNI kernels (AVX-512 VNNI
// only, no VBMI, so Cascade Lake-class Xeons run them too), then the AVX2
// ones (x8AVX2Pays says whether X8 takes those).
func x8Variants(t Type) []X8Kernel {
	if ks := x8LowVariants(t); ks != nil {
		return ks
	}
	var ks []X8Kernel
	switch {
	case t == Q4_0 && cpu.Has(cpu.AVX512VNNI):
		ks = withMulti(t, x8Pair("avx512vnni", t, rowQ4_0X8VNNI, rowQ4_0X8VNNINTA4096, rowQ4_0X8VNNIPF4096, x8Gemm{lo: gemmQ4_0X8R0VNNI, hi: gemmQ4_0X8R4VNNI}), multiAsm{rowQ4_0X8VNNIT2, rowQ4_0X8VNNIT4, nil}, multiAsm{rowQ4_0X8VNNIPF4096T2, rowQ4_0X8VNNIPF4096T4, nil})
	case t == Q4_K && cpu.Has(cpu.AVX512VNNI):
		ks = withMulti(t, x8Pair("avx512vnni", t, rowQ4_KX8VNNI, rowQ4_KX8VNNINTA4096, rowQ4_KX8VNNIPF4096, x8Gemm{lo: gemmQ4_KX8GVNNI}), multiAsm{rowQ4_KX8VNNIT2, rowQ4_KX8VNNIT4, nil}, multiAsm{rowQ4_KX8VNNIPF4096T2, rowQ4_KX8VNNIPF4096T4, nil})
	case t == Q8_0 && cpu.Has(cpu.AVX512VNNI):
		ks = withMulti(t, x8Pair("avx512vnni", t, rowQ8_0X8VNNI, rowQ8_0X8VNNINTA4096, rowQ8_0X8VNNIPF4096, x8Gemm{lo: gemmQ8_0X8R0VNNI, hi: gemmQ8_0X8R4VNNI}), multiAsm{rowQ8_0X8VNNIT2, rowQ8_0X8VNNIT4, nil}, multiAsm{rowQ8_0X8VNNIPF4096T2, rowQ8_0X8VNNIPF4096T4, nil})
	case t == Q5_K && cpu.Has(cpu.AVX512VNNI):
		ks = withMulti(t, x8Pair("avx512vnni", t, rowQ5_KX8VNNI, rowQ5_KX8VNNINTA4096, rowQ5_KX8VNNIPF4096, x8Gemm{lo: gemmQ5_KX8GVNNI}), multiAsm{rowQ5_KX8VNNIT2, nil, nil}, multiAsm{rowQ5_KX8VNNIPF4096T2, nil, nil})
	case t == Q6_K && cpu.Has(cpu.AVX512VNNI):
		ks = withMulti(t, x8Pair("avx512vnni", t, rowQ6_KX8VNNI, rowQ6_KX8VNNINTA4096, rowQ6_KX8VNNIPF4096, x8Gemm{lo: gemmQ6_KX8GVNNI}), multiAsm{rowQ6_KX8VNNIT2, nil, nil}, multiAsm{rowQ6_KX8VNNIPF4096T2, nil, nil})
	}
	if !cpu.Has(cpu.AVX2) {
		return ks
	}
	switch t {
	case Q4_0:
		ks = append(ks, withMulti(t, x8Pair("avx2", t, rowQ4_0X8AVX2, rowQ4_0X8AVX2NTA4096, rowQ4_0X8AVX2PF4096, x8Gemm{one: gemmQ4_0X8AVX2}), multiAsm{rowQ4_0X8AVX2T2, rowQ4_0X8AVX2T4, nil}, multiAsm{})...)
	case Q8_0:
		ks = append(ks, withMulti(t, x8Pair("avx2", t, rowQ8_0X8AVX2, rowQ8_0X8AVX2NTA4096, rowQ8_0X8AVX2PF4096, x8Gemm{one: gemmQ8_0X8AVX2}), multiAsm{rowQ8_0X8AVX2T2, rowQ8_0X8AVX2T4, nil}, multiAsm{})...)
	case Q4_K:
		ks = append(ks, withMulti(t, x8Pair("avx2", t, rowQ4_KX8AVX2, rowQ4_KX8AVX2NTA4096, rowQ4_KX8AVX2PF4096, x8Gemm{}), multiAsm{rowQ4_KX8AVX2T2, nil, nil}, multiAsm{})...)
	case Q6_K:
		ks = append(ks, x8Pair("avx2", t, rowQ6_KX8AVX2, rowQ6_KX8AVX2NTA4096, rowQ6_KX8AVX2PF4096, x8Gemm{})...)
	case Q5_K:
		ks = append(ks, x8Pair("avx2", t, rowQ5_KX8AVX2, rowQ5_KX8AVX2NTA4096, rowQ5_KX8AVX2PF4096, x8Gemm{})...)
	}
	return ks
}

// x8AVX2Pays reports whether X8 takes the AVX2 X8 kernels of t by
// default, on a CPU without AVX-512: only where they beat the AVX2 row
// layout, so the load-time repack is never paid for a loss. Measured
// under LLM_CPU=avx2 on a Zen 4 shared with other work (indicative):
// BenchmarkX8, one thread, 128 MB (256 KB), GB/s X8 against row: Q4_0
// 16-20 (35-38) against 9-11 (14-15), Q4_K 13-19 (24-26) against 12
// (13-15), Q8_0 20-22 (43-48) against 21-23 (28-29); end to end
// (examples/bench, TinyLlama, tg32, 1 thread, 3 alternating rounds)
// Q4_0 1.6×, Q4_K_M 1.15×, Q8_0 1.25× (and 1.1-1.6× on 2 threads),
// pp64 within 5 %. Q6_K (19 against 17) and Q5_K (12 against 18) stay
// in the row layout: their batches would lose the row layout's tiles
// (no AVX2 GEMM or MatVecN for them). LLM_KERNELS can still name them.
// The lattice types' AVX2 X8 kernels (no MatVecN either) beat their row
// kernels, which fetch a grid point a group, at everything: one thread
// from DRAM (BenchmarkX8Lowbit, busy machine) IQ2_XS 11.0 against 3.7
// GB/s of the file's bytes, IQ3_XXS 14.0 against 2.9, IQ1_M 8.8
// against 2.6; a batch a token at a time (BenchmarkX8LowbitPrefill) 42
// against 8-13 GMAC per CPU-second. Q5_0's (busy machine, rough): one
// thread from DRAM 19-20 against 12 GB/s per CPU-second
// (BenchmarkX8Lowbit), its four-token MatVecN 81 against the row
// tile's 18 GMAC per CPU-second (BenchmarkX8LowbitPrefill); end to end,
// quiet, TinyLlama in Q5_0 on two threads (examples/bench, repack on and
// off alternating, three rounds) pp64 119 against 35 tok/s, tg32 53
// against 29.
func x8AVX2Pays(t Type) bool {
	return t == Q4_0 || t == Q4_K || t == Q8_0 || t == Q5_0 || isLattice(t)
}

// x8Pays reports whether X8 takes k, its type's default variant
// (x8Default), by default.
func x8Pays(k X8Kernel) bool {
	return !strings.HasPrefix(k.Name, "avx2-") || x8AVX2Pays(k.Type)
}

// x8Default is the index in ks, x8Variants' list for a type, of the
// kernel X8 takes by default: the first, whose block columns are one
// sequential stream the hardware prefetchers follow (on Zen 4 the
// non-temporal prefetch slowed these: BenchmarkX8, 128 MB, one thread,
// Q4_0 28.5 against 24.2 GB/s, Q4_K 29.8 against 25.1, Q6_K 31.8 against
// 24.4), except on Intel's AVX-512 cores, which take its twin prefetching
// 4 KB ahead into L2. Measured on Emerald Rapids (2 vCPUs): BenchmarkX8,
// 512 MB, one thread, 8.6 against 10.0-11.2 GB/s for Q4_0, 7.4-8.2 against
// 10.6-11.4 for Q4_K, 7.1-10.5 against 10.4-13.2 for Q8_0, 7.9-9.8 against
// 11.4-13.1 for Q6_K, 8.4-8.8 against 11.5-12.4 for Q5_K, and the
// low-bit types alike (BenchmarkX8Lowbit: IQ4_XS 8.2 against 10.8, Q3_K
// 7.3 against 11.4, Q2_K 7.8 against 10.8, IQ4_NL 9.1 against 10.5,
// IQ3_S 6.3 against 8.1); examples/bench tg128 on 2 threads, TinyLlama,
// alternating rounds: Q4_0 26-30 against 34-41 tok/s, Q4_K_M 24-26
// against 32-34, Q8_0 15-17 against 20-21. Its MatVecN takes the
// multi-token kernels' prefetching twins (withMulti): BenchmarkX8Batch,
// 512 MB, one thread, two or three runs, GB/s for two tokens and four:
// Q4_0 6.8-8.2 and 5.3-5.9 against 8.5-9.9 and 7.0-7.7, Q4_K 7.5 and 5.8
// against 10.0 and 7.2, Q8_0 9.1-11.2 and 8.8-9.2 against 11.6-13.2 and
// 11.0-11.1 (a first run 9.9 and 8.9 against 8.9 and 8.5), Q6_K 8.4 and
// 5.8 against 10.6 and 7.3; end to end (examples/bench -p 4 and -p 16
// -n 0, 2 threads, three alternating rounds, medians) TinyLlama Q4_K_M
// pp4 63.5 against 77.8 tok/s and pp16 104 against 124, Q4_0 82 against
// 93 and 115 against 128, Q8_0 55 against 57 and 91 against 94;
// Llama-3.1-8B Q4_K_M pp8 13.8 against 14.9 (4 of 5 rounds ahead).
func x8Default(ks []X8Kernel) int {
	if cpu.CPU().IntelAVX512() {
		for i, k := range ks {
			if k.Name == ks[0].Name+"-pf" {
				return i
			}
		}
	}
	return 0
}

// rowX8Asm is the signature of the X8 decode kernels.
type rowX8Asm func(w *byte, groups int, x *byte, nb int, out *float32)

// x8Gemm is the GEMM of a group of the X8 layout: the four-row kernels
// of rows 0-3 (lo) and 4-7 (hi), or lo alone taking all eight (the
// k-quants'), or a one-row kernel (one) that takes its row of the group
// in the wStride argument; none for a type without.
type x8Gemm struct{ lo, hi, one gemmAsm }

// x8Pair is t's three X8 kernels named for the instruction set isa:
// decode kernel row, nta, its twin with non-temporal prefetch, and pf,
// its twin prefetching into L2, each with the GEMM g (see x8Default for
// which decode takes).
func x8Pair(isa string, t Type, row, nta, pf rowX8Asm, g x8Gemm) []X8Kernel {
	return []X8Kernel{
		x8Kernel(isa+"-x8", t, row, g),
		x8Kernel(isa+"-x8-nta", t, nta, g),
		x8Kernel(isa+"-x8-pf", t, pf, g),
	}
}

// x8Kernel wraps the assembly of one X8 layout: decode kernel row, and
// the GEMM gm; Mul is nil without one.
func x8Kernel(name string, t Type, row rowX8Asm, gm x8Gemm) X8Kernel {
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
	if gm.lo == nil && gm.one == nil {
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
			if gm.one != nil {
				for r := 0; r < 8; r++ {
					gm.one(gw, r, &p[0], nb, &out[8*i+r], outStride, cols)
				}
				continue
			}
			gm.lo(gw, 0, &p[0], nb, &out[8*i], outStride, cols)
			if gm.hi != nil {
				gm.hi(gw, 0, &p[0], nb, &out[8*i+4], outStride, cols)
			}
		}
	}
	return k
}

// rowX8MultiAsm is the signature of the multi-token X8 decode kernels:
// tokens at x+k·xs, results at out+k·os.
type rowX8MultiAsm func(w *byte, groups int, x *byte, nb int, out *float32, xs int, os int)

// multiAsm is a type's two-, four- and eight-token X8 kernels (nil for
// none).
type multiAsm struct{ m2, m4, m8 rowX8MultiAsm }

// withMulti gives each kernel of ks (of type t) a MatVecN over the
// multi-token kernels, a batch taken eight tokens at a time, then four,
// two, one (the kernel's own MatVec): the "-pf" kernel, which prefetches
// into L2, those of pf when it has them (their loops prefetch too), the
// others those of plain.
func withMulti(t Type, ks []X8Kernel, plain, pf multiAsm) []X8Kernel {
	bb := X8BlockBytes(t)
	vt := t.VecDotType()
	for i := range ks {
		m2, m4, m8 := plain.m2, plain.m4, plain.m8
		if strings.HasSuffix(ks[i].Name, "-pf") && pf.m2 != nil {
			m2, m4, m8 = pf.m2, pf.m4, pf.m8
		}
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
