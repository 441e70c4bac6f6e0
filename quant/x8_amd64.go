//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// archX8 returns the AVX-512 VNNI kernels of the X8 layout. Decode takes
// the kernel with non-temporal prefetch 4 KB ahead on Zen 4, where the
// row kernels stream fastest so too (tilePrefs), and the plain one
// elsewhere.
func archX8(t Type) (X8Kernel, bool) {
	ks := x8Variants()
	if len(ks) == 0 {
		return X8Kernel{}, false
	}
	if cpu.CPU().Split512() {
		return ks[1], true
	}
	return ks[0], true
}

// x8Variants lists the X8 kernels this CPU runs.
func x8Variants() []X8Kernel {
	if !cpu.Has(cpu.AVX512VNNI) {
		return nil
	}
	return []X8Kernel{x8Kernel("avx512vnni", rowQ4_0X8VNNI), x8Kernel("avx512vnni-nta", rowQ4_0X8VNNINTA4096)}
}

// x8Kernel wraps the assembly of Q4_0's X8 layout, with decode kernel row.
func x8Kernel(name string, row func(w *byte, groups int, x *byte, nb int, out *float32)) X8Kernel {
	return X8Kernel{
		Name: name,
		Type: Q4_0,
		MatVec: func(n int, w []byte, groups int, x []byte, out []float32) {
			nb := n / QK
			if groups <= 0 {
				return
			}
			// One bounds check each, so the assembly stays inside the slices.
			_ = w[groups*nb*X8BlockBytes-1]
			_ = x[nb*q8_0Bytes-1]
			_ = out[8*groups-1]
			row(&w[0], groups, &x[0], nb, &out[0])
		},
		Mul: func(n int, w []byte, groups int, p []byte, cols int, out []float32, outStride int) {
			nb := n / QK
			cols = min(cols, GemmCols)
			if groups <= 0 || cols <= 0 {
				return
			}
			_ = w[groups*nb*X8BlockBytes-1]
			_ = p[panelBytesQ8_0(n)-1]
			_ = out[(cols-1)*outStride+8*groups-1]
			for g := 0; g < groups; g++ {
				gw := &w[g*nb*X8BlockBytes]
				gemmQ4_0X8R0VNNI(gw, 0, &p[0], nb, &out[8*g], outStride, cols)
				gemmQ4_0X8R4VNNI(gw, 0, &p[0], nb, &out[8*g+4], outStride, cols)
			}
		},
	}
}
