//go:build amd64 && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// quantizeF16 is quantF16 with F16C (every amd64 level with assembly has
// it): the same halves, rounded to nearest even.
func quantizeF16(dst []byte, src []float32) {
	if !cpu.Has(cpu.AVX2) || len(src) == 0 {
		quantF16(dst, src)
		return
	}
	dst = dst[:2*len(src)]
	quantF16AVX2Asm(&dst[0], &src[0], len(src))
}
