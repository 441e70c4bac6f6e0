//go:build amd64 && !purego

package quant

import (
	"unsafe"

	"github.com/lowmem/llm/internal/cpu"
)

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

// toHalves is FP32ToFP16Row's body (with F16C).
func toHalves(dst []uint16, src []float32) {
	if !cpu.Has(cpu.AVX2) || len(src) == 0 {
		toHalvesGo(dst, src)
		return
	}
	dst = dst[:len(src)]
	quantF16AVX2Asm((*byte)(unsafe.Pointer(&dst[0])), &src[0], len(src))
}
