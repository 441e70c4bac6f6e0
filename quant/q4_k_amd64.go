//go:build amd64 && !purego

package quant

// Q4_K super-blocks are 144 bytes: fp16 d, fp16 dmin, 12 bytes of packed
// 6-bit scales and mins, 128 bytes of nibbles. The activations are Q8_K:
// float32 d, 256 int8, 16 int16 block sums (292 bytes).

//go:noescape
func dotQ4_KAVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_KVNNIAsm(w, x *byte, nb int) float32

// dotQ4_KAVX2 is dotQ4_K with AVX2.
func dotQ4_KAVX2(n int, w, x []byte) float32 {
	nb := n / QKK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*144]
	x = x[:nb*292]
	return dotQ4_KAVX2Asm(&w[0], &x[0], nb)
}

// dotQ4_KVNNI is dotQ4_K with AVX-512: VPMADDUBSW then VPDPWSSD with the
// sub-block scales, 64 elements per instruction.
func dotQ4_KVNNI(n int, w, x []byte) float32 {
	nb := n / QKK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*144]
	x = x[:nb*292]
	return dotQ4_KVNNIAsm(&w[0], &x[0], nb)
}
