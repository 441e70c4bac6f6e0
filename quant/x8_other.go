//go:build !amd64 || purego

package quant

// x8Variants: no X8 kernels without assembly; the pure-Go twins are
// slower than the row layout's portable tiles.
func x8Variants(Type) []X8Kernel { return nil }
