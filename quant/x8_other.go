//go:build !amd64 || purego

package quant

// x8Variants: no X8 kernels without assembly; the pure-Go twins are
// slower than the row layout's portable tiles.
func x8Variants(Type) []X8Kernel { return nil }

// x8Pays: X8 takes whatever x8Variants lists (nothing).
func x8Pays(X8Kernel) bool { return true }

// x8Default: the first of x8Variants' list.
func x8Default([]X8Kernel) int { return 0 }
