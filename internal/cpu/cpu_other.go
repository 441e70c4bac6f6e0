//go:build !amd64 && !arm64

package cpu

// archLevel: no assembly kernels on this architecture yet.
func archLevel() Level { return Generic }
