//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// archX8 returns the AVX-512 VNNI kernels of the X8 layout.
func archX8(t Type) (X8Kernel, bool) {
	if !cpu.Has(cpu.AVX512VNNI) {
		return X8Kernel{}, false
	}
	// TODO(lead): assembly kernels; the twins stand in meanwhile.
	return X8Kernel{Name: "avx512vnni-x8", Type: t, MatVec: matVecX8Q4_0, Mul: mulX8Q4_0}, true
}
