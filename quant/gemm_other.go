//go:build !amd64 || purego

package quant

// archGemms: no assembly GEMM kernels on this platform yet.
func archGemms(Type) []GemmKernel { return nil }
