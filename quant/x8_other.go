//go:build !amd64 || purego

package quant

// archX8: no X8 kernels without assembly; the pure-Go twins are slower
// than the row layout's portable tiles.
func archX8(Type) (X8Kernel, bool) { return X8Kernel{}, false }

func x8Variants() []X8Kernel { return nil }
