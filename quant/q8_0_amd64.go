//go:build amd64 && !purego

package quant

// Q8_0 blocks are 2+QK bytes: fp16 d, then 32 int8.

//go:noescape
func dotQ8_0AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0VNNIAsm(w, x *byte, nb int) float32

// dotQ8_0AVX2 is dotQ8_0 with AVX2: VPMADDUBSW on |w| and y·sign(w).
func dotQ8_0AVX2(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(2+QK)]
	x = x[:nb*(2+QK)]
	return dotQ8_0AVX2Asm(&w[0], &x[0], nb)
}

// dotQ8_0VNNI is dotQ8_0 with AVX-512 VNNI, two blocks per 512-bit register.
func dotQ8_0VNNI(n int, w, x []byte) float32 {
	nb := n / QK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*(2+QK)]
	x = x[:nb*(2+QK)]
	return dotQ8_0VNNIAsm(&w[0], &x[0], nb)
}
