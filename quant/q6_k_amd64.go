//go:build amd64 && !purego

package quant

// Q6_K super-blocks are 210 bytes: ql[128] low nibbles, qh[64] high 2-bit
// pairs, int8 scales[16], fp16 d. The activations are Q8_K (292 bytes).

//go:noescape
func dotQ6_KAVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ6_KVNNIAsm(w, x *byte, nb int) float32
