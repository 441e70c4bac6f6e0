//go:build amd64 && !purego

package quant

import "golang.org/x/sys/cpu"

// The CPU features the assembly kernels need, read once. golang.org/x/sys/cpu
// already reports AVX2 and AVX-512 only when the OS saves the YMM and ZMM
// state, so no kernel here can fault on a CPU or kernel that lacks them.
var (
	// The AVX2 kernels also use FMA and F16C (VCVTPH2PS for the fp16 scales).
	haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C
	// The AVX-512 kernels use byte and word instructions (BW) on 512-bit
	// registers and EVEX-encoded 256-bit forms (VL) for the tails.
	haveAVX512 = haveAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL
	// VPDPBUSD and VPDPWSSD.
	haveVNNI = haveAVX512 && cpu.X86.HasAVX512VNNI
	// VPERMB and VGF2P8AFFINEQB on top of VNNI (Ice Lake, Zen 4 and later).
	haveVBMI = haveVNNI && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512GFNI
)

// asmKernels holds, per weight type, the kernels this CPU runs, slowest
// first, so Dot picks the last one.
var asmKernels = buildAsmKernels()

func buildAsmKernels() map[Type][]Kernel {
	m := make(map[Type][]Kernel)
	add := func(ok bool, t Type, name string, f DotFunc) {
		if ok {
			m[t] = append(m[t], Kernel{Name: name, Type: t, Dot: f})
		}
	}
	add(haveAVX2, F32, "avx2", dotF32AVX2)
	add(haveAVX512, F32, "avx512", dotF32AVX512)
	add(haveAVX2, F16, "avx2", dotF16AVX2)
	add(haveAVX512, F16, "avx512", dotF16AVX512)
	add(haveAVX2, Q8_0, "avx2", dotQ8_0AVX2)
	add(haveVNNI, Q8_0, "avx512vnni", dotQ8_0VNNI)
	add(haveAVX2, Q4_0, "avx2", dotQ4_0AVX2)
	add(haveVNNI, Q4_0, "avx512vnni", dotQ4_0VNNI)
	add(haveVBMI, Q4_0, "avx512vbmi", dotQ4_0VBMI)
	add(haveAVX2, Q4_1, "avx2", dotQ4_1AVX2)
	add(haveVNNI, Q4_1, "avx512vnni", dotQ4_1VNNI)
	add(haveAVX2, Q5_0, "avx2", dotQ5_0AVX2)
	add(haveVNNI, Q5_0, "avx512vnni", dotQ5_0VNNI)
	add(haveAVX2, Q4_K, "avx2", dotQ4_KAVX2)
	add(haveVNNI, Q4_K, "avx512vnni", dotQ4_KVNNI)
	add(haveAVX2, Q5_K, "avx2", dotQ5_KAVX2)
	add(haveVNNI, Q5_K, "avx512vnni", dotQ5_KVNNI)
	add(haveAVX2, Q6_K, "avx2", dotQ6_KAVX2)
	add(haveVNNI, Q6_K, "avx512vnni", dotQ6_KVNNI)
	return m
}

// archKernels lists the assembly kernels this CPU can run for t, slowest
// first.
func archKernels(t Type) []Kernel {
	ks := asmKernels[t]
	return append([]Kernel(nil), ks...)
}
