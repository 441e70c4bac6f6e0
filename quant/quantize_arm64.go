//go:build !purego

package quant

// quantizeQ8_0 is quantQ8_0 in NEON assembly, byte for byte.
func quantizeQ8_0(dst []byte, src []float32) {
	nb := min(len(src)/QK, len(dst)/q8_0Bytes)
	if nb == 0 {
		return
	}
	quantQ8_0NEON(&dst[0], &src[0], nb)
}

// quantizeQ8_K is quantQ8_K in NEON assembly, byte for byte.
func quantizeQ8_K(dst []byte, src []float32) {
	nb := min(len(src)/QKK, len(dst)/q8_KBytes)
	if nb == 0 {
		return
	}
	quantQ8_KNEON(&dst[0], &src[0], nb)
}
