//go:build !amd64 || purego

package quant

func quantizeF16(dst []byte, src []float32) { quantF16(dst, src) }

func toHalves(dst []uint16, src []float32) { toHalvesGo(dst, src) }
