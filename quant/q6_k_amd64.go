//go:build amd64 && !purego

package quant

// Q6_K super-blocks are 210 bytes: ql[128] low nibbles, qh[64] high 2-bit
// pairs, int8 scales[16], fp16 d. The activations are Q8_K (292 bytes).

//go:noescape
func dotQ6_KAVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ6_KVNNIAsm(w, x *byte, nb int) float32

// dotQ6_KAVX2 is dotQ6_K with AVX2.
func dotQ6_KAVX2(n int, w, x []byte) float32 {
	nb := n / QKK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*210]
	x = x[:nb*292]
	return dotQ6_KAVX2Asm(&w[0], &x[0], nb)
}

// dotQ6_KVNNI is dotQ6_K with AVX-512: VPMADDUBSW then VPDPWSSD with the
// scales, 64 elements per instruction.
func dotQ6_KVNNI(n int, w, x []byte) float32 {
	nb := n / QKK
	if nb <= 0 {
		return 0
	}
	w = w[:nb*210]
	x = x[:nb*292]
	return dotQ6_KVNNIAsm(&w[0], &x[0], nb)
}
