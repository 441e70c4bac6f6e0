//go:build !amd64 || purego

package quant

func quantizeF16(dst []byte, src []float32) { quantF16(dst, src) }
