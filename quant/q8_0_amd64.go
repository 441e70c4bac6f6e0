//go:build amd64 && !purego

package quant

// Q8_0 blocks are 2+QK bytes: fp16 d, then 32 int8.

//go:noescape
func dotQ8_0AVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ8_0VNNIAsm(w, x *byte, nb int) float32
