//go:build amd64 && !purego

package quant

// Q4_1 blocks are 4+QK/2 bytes: fp16 d, fp16 m, 16 bytes of nibbles. The
// activations are Q8_1: fp16 d, fp16 s (d·Σq), 32 int8 (4+QK bytes).

//go:noescape
func dotQ4_1AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1VNNIAsm(w, x *byte, nb int) float32

// dotQ4_1AVX2 is dotQ4_1 with AVX2.
func dotQ4_1AVX2(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(4+QK/2)]
	x = x[:nb*(4+QK)]
	return dotQ4_1AVX2Asm(&w[0], &x[0], nb)
}

// dotQ4_1VNNI is dotQ4_1 with AVX-512 VNNI, two blocks per 512-bit register.
func dotQ4_1VNNI(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(4+QK/2)]
	x = x[:nb*(4+QK)]
	return dotQ4_1VNNIAsm(&w[0], &x[0], nb)
}
