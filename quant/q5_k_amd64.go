//go:build amd64 && !purego

package quant

// Q5_K super-blocks are 176 bytes: fp16 d, fp16 dmin, 12 bytes of packed
// 6-bit scales and mins, qh[32] fifth bits, qs[128] nibbles. The activations
// are Q8_K (292 bytes).

//go:noescape
func dotQ5_KAVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ5_KVNNIAsm(w, x *byte, nb int) float32

// dotQ5_KAVX2 is dotQ5_K with AVX2.
func dotQ5_KAVX2(n int, w, x []byte) float32 {
	nb := n / QKK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*176]
	x = x[:nb*292]
	return dotQ5_KAVX2Asm(&w[0], &x[0], nb)
}

// dotQ5_KVNNI is dotQ5_K with AVX-512: VPMADDUBSW then VPDPWSSD with the
// sub-block scales, 64 elements per instruction.
func dotQ5_KVNNI(n int, w, x []byte) float32 {
	nb := n / QKK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*176]
	x = x[:nb*292]
	return dotQ5_KVNNIAsm(&w[0], &x[0], nb)
}
