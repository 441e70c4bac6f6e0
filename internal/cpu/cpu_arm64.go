package cpu

import "golang.org/x/sys/cpu"

// archLevel reads the CPU's features. Every arm64 CPU has Advanced SIMD
// (Go requires it); golang.org/x/sys/cpu reads FEAT_DotProd and FEAT_I8MM
// from the OS (HWCAP on Linux, sysctl on Darwin).
func archLevel() Level {
	a := cpu.ARM64
	switch {
	case !a.HasASIMDDP:
		return NEON
	case !a.HasI8MM:
		return DotProd
	}
	return I8MM
}
