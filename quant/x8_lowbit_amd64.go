//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// x8LowVariants lists the X8 kernels of a low-bit type t this CPU runs,
// the one X8 chooses first: decode without and with non-temporal
// prefetch 4 KB ahead. They have no GEMM (Mul nil): the low-bit types
// have none in the row layout either.
func x8LowVariants(t Type) []X8Kernel {
	if !cpu.Has(cpu.AVX512VNNI) {
		return nil
	}
	switch t {
	case IQ4_XS:
		return x8Pair("avx512vnni", t, rowIQ4_XSX8VNNI, rowIQ4_XSX8VNNINTA4096, x8Gemm{})
	case Q3_K:
		return x8Pair("avx512vnni", t, rowQ3_KX8VNNI, rowQ3_KX8VNNINTA4096, x8Gemm{})
	case Q2_K:
		return x8Pair("avx512vnni", t, rowQ2_KX8VNNI, rowQ2_KX8VNNINTA4096, x8Gemm{})
	}
	return nil
}
