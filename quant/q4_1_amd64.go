//go:build amd64 && !purego

package quant

// Q4_1 blocks are 4+QK/2 bytes: fp16 d, fp16 m, 16 bytes of nibbles. The
// activations are Q8_1: fp16 d, fp16 s (d·Σq), 32 int8 (4+QK bytes).

//go:noescape
func dotQ4_1AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_1VNNIAsm(w, x *byte, nb int) float32
