package cpu

import "golang.org/x/sys/cpu"

// archLevel reads the CPU's features. golang.org/x/sys/cpu reports AVX2
// and AVX-512 only when the OS saves the YMM and ZMM state, so no kernel
// can fault on a CPU or kernel that lacks them.
func archLevel() Level {
	x := cpu.X86
	switch {
	case !(x.HasAVX2 && x.HasFMA && x.HasF16C):
		return Generic
	case !(x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL):
		return AVX2
	case !x.HasAVX512VNNI:
		return AVX512
	case !(x.HasAVX512VBMI && x.HasAVX512GFNI):
		return AVX512VNNI
	}
	return AVX512VBMI
}
