//go:build !(amd64 || arm64) || purego

package quant

func quantizeQ8_0(dst []byte, src []float32) { quantQ8_0(dst, src) }

func quantizeQ8_K(dst []byte, src []float32) { quantQ8_K(dst, src) }
