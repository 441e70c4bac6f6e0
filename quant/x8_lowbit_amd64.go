//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// x8LowVariants lists the X8 kernels of a low-bit type t this CPU runs,
// the one X8 chooses first: decode without and with non-temporal
// prefetch 4 KB ahead, each with a MatVecN over the two- and four-token
// kernels (and IQ4_XS's, IQ4_NL's, MXFP4's, Q5_0's and IQ3_S's
// eight-token one). They have no GEMM (Mul nil): the low-bit types, and
// Q5_0, whose X8 kernels are IQ4_NL's with its values, have none in the
// row layout either. Q5_0's AVX2 twins have a MatVecN over two and
// four tokens; the lattice types' none. Every one beats its row layout,
// so X8 takes them all: Q5_0's, one thread on a shared Zen 4
// (BenchmarkX8Lowbit, BenchmarkX8LowbitPrefill), 25.4 against 13.7
// GB/s from memory, 38.8 against 15.1 from L2, MatVecN 115 GMAC per
// CPU-second against its tile's 44; on Zen 4
// (shared, indicative) BenchmarkDecodeBandwidth's product on two threads
// took 3.2 against 1.4 ms for IQ4_NL and 7.5 against 1.4 ms for IQ3_S
// (whose repacked bytes are 25 % more), and MatVecN ran 123 and 159
// GMAC per CPU-second against their tiles' 47 and 28
// (BenchmarkX8LowbitPrefill). MXFP4, on a busy Zen 4 (rough): one
// thread at gpt-oss's width 2880 (BenchmarkX8Tail) 20.1-20.4 against
// 9.3-9.7 GB/s from memory, 31 against 15.6 from L2; MatVecN 119 GMAC
// per CPU-second against its tile's 46; BenchmarkDecodeBandwidth's
// product on two threads 35-43 % of the read bandwidth against 19-23.
func x8LowVariants(t Type) []X8Kernel {
	return append(x8LowVNNI(t), x8LowAVX2(t)...)
}

// x8LowAVX2 is x8LowVariants' AVX2 kernels: the lattice types' and
// Q5_0's (with a MatVecN over two and four tokens).
func x8LowAVX2(t Type) []X8Kernel {
	if !cpu.Has(cpu.AVX2) {
		return nil
	}
	switch t {
	case Q5_0:
		return withMulti(t, x8Pair("avx2", t, rowQ5_0X8AVX2, rowQ5_0X8AVX2NTA4096, rowQ5_0X8AVX2PF4096, x8Gemm{}), multiAsm{rowQ5_0X8AVX2T2, rowQ5_0X8AVX2T4, nil}, multiAsm{})
	case IQ2_XXS, IQ2_XS, IQ2_S:
		return x8Pair("avx2", t, rowIQ2X8AVX2, rowIQ2X8AVX2NTA4096, rowIQ2X8AVX2PF4096, x8Gemm{})
	case IQ3_XXS:
		return x8Pair("avx2", t, rowIQ3_XXSX8AVX2, rowIQ3_XXSX8AVX2NTA4096, rowIQ3_XXSX8AVX2PF4096, x8Gemm{})
	case IQ1_S, IQ1_M:
		return x8Pair("avx2", t, rowIQ1X8AVX2, rowIQ1X8AVX2NTA4096, rowIQ1X8AVX2PF4096, x8Gemm{})
	}
	return nil
}

// x8LowVNNI is x8LowVariants' AVX-512 VNNI kernels.
func x8LowVNNI(t Type) []X8Kernel {
	a, ok := x8LowVNNIAsm[t]
	if !ok || !cpu.Has(cpu.AVX512VNNI) {
		return nil
	}
	return withMulti(t, x8Pair("avx512vnni", t, a.row, a.nta, a.pf, x8Gemm{}), a.multi, a.pfMulti)
}

// x8LowAsm is a type's X8 kernels of one instruction set: decode, its
// twins with non-temporal and with L2 prefetch, and the multi-token
// kernels (withMulti's plain and pf).
type x8LowAsm struct {
	row, nta, pf   rowX8Asm
	multi, pfMulti multiAsm
}

// x8LowVNNIAsm is the low-bit types' AVX-512 VNNI X8 kernels.
var x8LowVNNIAsm = map[Type]x8LowAsm{
	IQ4_XS:  {rowIQ4_XSX8VNNI, rowIQ4_XSX8VNNINTA4096, rowIQ4_XSX8VNNIPF4096, multiAsm{rowIQ4_XSX8VNNIT2, rowIQ4_XSX8VNNIT4, rowIQ4_XSX8VNNIT8}, multiAsm{rowIQ4_XSX8VNNIPF4096T2, rowIQ4_XSX8VNNIPF4096T4, rowIQ4_XSX8VNNIPF4096T8}},
	Q3_K:    {rowQ3_KX8VNNI, rowQ3_KX8VNNINTA4096, rowQ3_KX8VNNIPF4096, multiAsm{rowQ3_KX8VNNIT2, rowQ3_KX8VNNIT4, nil}, multiAsm{rowQ3_KX8VNNIPF4096T2, rowQ3_KX8VNNIPF4096T4, nil}},
	IQ4_NL:  {rowIQ4_NLX8VNNI, rowIQ4_NLX8VNNINTA4096, rowIQ4_NLX8VNNIPF4096, multiAsm{rowIQ4_NLX8VNNIT2, rowIQ4_NLX8VNNIT4, rowIQ4_NLX8VNNIT8}, multiAsm{rowIQ4_NLX8VNNIPF4096T2, rowIQ4_NLX8VNNIPF4096T4, rowIQ4_NLX8VNNIPF4096T8}},
	Q5_0:    {rowQ5_0X8VNNI, rowQ5_0X8VNNINTA4096, rowQ5_0X8VNNIPF4096, multiAsm{rowQ5_0X8VNNIT2, rowQ5_0X8VNNIT4, rowQ5_0X8VNNIT8}, multiAsm{rowQ5_0X8VNNIPF4096T2, rowQ5_0X8VNNIPF4096T4, rowQ5_0X8VNNIPF4096T8}},
	MXFP4:   {rowMXFP4X8VNNI, rowMXFP4X8VNNINTA4096, rowMXFP4X8VNNIPF4096, multiAsm{rowMXFP4X8VNNIT2, rowMXFP4X8VNNIT4, rowMXFP4X8VNNIT8}, multiAsm{rowMXFP4X8VNNIPF4096T2, rowMXFP4X8VNNIPF4096T4, rowMXFP4X8VNNIPF4096T8}},
	IQ3_S:   {rowIQ3_SX8VNNI, rowIQ3_SX8VNNINTA4096, rowIQ3_SX8VNNIPF4096, multiAsm{rowIQ3_SX8VNNIT2, rowIQ3_SX8VNNIT4, rowIQ3_SX8VNNIT8}, multiAsm{rowIQ3_SX8VNNIPF4096T2, rowIQ3_SX8VNNIPF4096T4, rowIQ3_SX8VNNIPF4096T8}},
	IQ2_XXS: x8IQ2VNNI,
	IQ2_XS:  x8IQ2VNNI,
	IQ2_S:   x8IQ2VNNI,
	IQ3_XXS: {rowIQ3_XXSX8VNNI, rowIQ3_XXSX8VNNINTA4096, rowIQ3_XXSX8VNNIPF4096, multiAsm{rowIQ3_XXSX8VNNIT2, rowIQ3_XXSX8VNNIT4, rowIQ3_XXSX8VNNIT8}, multiAsm{rowIQ3_XXSX8VNNIPF4096T2, rowIQ3_XXSX8VNNIPF4096T4, rowIQ3_XXSX8VNNIPF4096T8}},
	IQ1_S:   x8IQ1VNNI,
	IQ1_M:   x8IQ1VNNI,
	Q2_K:    {rowQ2_KX8VNNI, rowQ2_KX8VNNINTA4096, rowQ2_KX8VNNIPF4096, multiAsm{rowQ2_KX8VNNIT2, rowQ2_KX8VNNIT4, nil}, multiAsm{rowQ2_KX8VNNIPF4096T2, rowQ2_KX8VNNIPF4096T4, nil}},
}

// x8IQ2VNNI and x8IQ1VNNI are the kernels the three IQ2 and the two IQ1
// types share.
var (
	x8IQ2VNNI = x8LowAsm{rowIQ2X8VNNI, rowIQ2X8VNNINTA4096, rowIQ2X8VNNIPF4096, multiAsm{rowIQ2X8VNNIT2, rowIQ2X8VNNIT4, rowIQ2X8VNNIT8}, multiAsm{rowIQ2X8VNNIPF4096T2, rowIQ2X8VNNIPF4096T4, rowIQ2X8VNNIPF4096T8}}
	x8IQ1VNNI = x8LowAsm{rowIQ1X8VNNI, rowIQ1X8VNNINTA4096, rowIQ1X8VNNIPF4096, multiAsm{rowIQ1X8VNNIT2, rowIQ1X8VNNIT4, rowIQ1X8VNNIT8}, multiAsm{rowIQ1X8VNNIPF4096T2, rowIQ1X8VNNIPF4096T4, rowIQ1X8VNNIPF4096T8}}
)
