//go:build amd64 && !purego

package quant

// Q4_0 blocks are 2+QK/2 bytes: fp16 d, then 16 bytes of nibbles (elements
// 0-15 low, 16-31 high). The activations are Q8_0 (2+QK bytes a block).

//go:noescape
func dotQ4_0AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0VNNIAsm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0VBMIAsm(w, x *byte, nb int) float32
