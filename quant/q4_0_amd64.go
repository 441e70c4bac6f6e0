//go:build amd64 && !purego

package quant

// Q4_0 blocks are 2+QK/2 bytes: fp16 d, then 16 bytes of nibbles (elements
// 0-15 low, 16-31 high). The activations are Q8_0 (2+QK bytes a block).

//go:noescape
func dotQ4_0AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0VNNIAsm(w, x *byte, nb int) float32

// dotQ4_0AVX2 is dotQ4_0 with AVX2.
func dotQ4_0AVX2(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(2+QK/2)]
	x = x[:nb*(2+QK)]
	return dotQ4_0AVX2Asm(&w[0], &x[0], nb)
}

// dotQ4_0VNNI is dotQ4_0 with AVX-512 VNNI, two blocks per 512-bit register.
func dotQ4_0VNNI(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(2+QK/2)]
	x = x[:nb*(2+QK)]
	return dotQ4_0VNNIAsm(&w[0], &x[0], nb)
}

//go:noescape
func dotQ4_0VBMIAsm(w, x *byte, nb int) float32

// dotQ4_0VBMI is dotQ4_0VNNI for CPUs that also have AVX512_VBMI and GFNI,
// which unpack the nibbles in two instructions.
func dotQ4_0VBMI(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(2+QK/2)]
	x = x[:nb*(2+QK)]
	return dotQ4_0VBMIAsm(&w[0], &x[0], nb)
}
