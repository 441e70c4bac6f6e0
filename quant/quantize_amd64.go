//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

//go:noescape
func quantQ8_0AVX512(dst *byte, src *float32, nb int)

//go:noescape
func quantQ8_KAVX512(dst *byte, src *float32, nb int)

// quantizeQ8_0 is quantQ8_0, with AVX-512 when the CPU has it.
func quantizeQ8_0(dst []byte, src []float32) {
	nb := min(len(src)/QK, len(dst)/q8_0Bytes)
	if !cpu.Has(cpu.AVX512) || nb == 0 {
		quantQ8_0(dst, src)
		return
	}
	quantQ8_0AVX512(&dst[0], &src[0], nb)
}

// quantizeQ8_K is quantQ8_K, with AVX-512 when the CPU has it.
func quantizeQ8_K(dst []byte, src []float32) {
	nb := min(len(src)/QKK, len(dst)/q8_KBytes)
	if !cpu.Has(cpu.AVX512) || nb == 0 {
		quantQ8_K(dst, src)
		return
	}
	quantQ8_KAVX512(&dst[0], &src[0], nb)
}
