//go:build amd64 && !purego

package quant

// Q5_0 blocks are 6+QK/2 bytes: fp16 d, 32 high bits (bit j belongs to
// element j), 16 bytes of nibbles. The activations are Q8_0 (2+QK bytes).

//go:noescape
func dotQ5_0AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0VNNIAsm(w, x *byte, nb int) float32

// dotQ5_0AVX2 is dotQ5_0 with AVX2.
func dotQ5_0AVX2(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(6+QK/2)]
	x = x[:nb*(2+QK)]
	return dotQ5_0AVX2Asm(&w[0], &x[0], nb)
}

// dotQ5_0VNNI is dotQ5_0 with AVX-512 VNNI, two blocks per 512-bit register.
func dotQ5_0VNNI(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(6+QK/2)]
	x = x[:nb*(2+QK)]
	return dotQ5_0VNNIAsm(&w[0], &x[0], nb)
}
