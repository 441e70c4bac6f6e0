//go:build amd64 && !purego

package quant

// Q5_K super-blocks are 176 bytes: fp16 d, fp16 dmin, 12 bytes of packed
// 6-bit scales and mins, qh[32] fifth bits, qs[128] nibbles. The activations
// are Q8_K (292 bytes).

//go:noescape
func dotQ5_KAVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ5_KVNNIAsm(w, x *byte, nb int) float32
