//go:build !(amd64 || arm64) || purego

package quant

// archKernels has no assembly to offer on this platform or with -tags purego.
func archKernels(Type) []Kernel { return nil }
