//go:build amd64 && !purego

package quant

// Q5_0 blocks are 6+QK/2 bytes: fp16 d, 32 high bits (bit j belongs to
// element j), 16 bytes of nibbles. The activations are Q8_0 (2+QK bytes).

//go:noescape
func dotQ5_0AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ5_0VNNIAsm(w, x *byte, nb int) float32
