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
		return []X8Kernel{
			x8LowKernel("avx512vnni-x8", t, rowIQ4_XSX8VNNI),
			x8LowKernel("avx512vnni-x8-nta", t, rowIQ4_XSX8VNNINTA4096),
		}
	case Q3_K:
		return []X8Kernel{
			x8LowKernel("avx512vnni-x8", t, rowQ3_KX8VNNI),
			x8LowKernel("avx512vnni-x8-nta", t, rowQ3_KX8VNNINTA4096),
		}
	case Q2_K:
		return []X8Kernel{
			x8LowKernel("avx512vnni-x8", t, rowQ2_KX8VNNI),
			x8LowKernel("avx512vnni-x8-nta", t, rowQ2_KX8VNNINTA4096),
		}
	}
	return nil
}

// x8LowKernel wraps a low-bit type's X8 decode kernel row.
func x8LowKernel(name string, t Type, row func(w *byte, groups int, x *byte, nb int, out *float32)) X8Kernel {
	bb := X8BlockBytes(t)
	return X8Kernel{
		Name: name,
		Type: t,
		MatVec: func(n int, w []byte, groups int, x []byte, out []float32) {
			nb := n / QKK
			if groups <= 0 {
				return
			}
			// One bounds check each, so the assembly stays inside the slices.
			_ = w[groups*nb*bb-1]
			_ = x[nb*q8_KBytes-1]
			_ = out[8*groups-1]
			row(&w[0], groups, &x[0], nb, &out[0])
		},
	}
}
