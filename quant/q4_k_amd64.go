//go:build amd64 && !purego

package quant

// Q4_K super-blocks are 144 bytes: fp16 d, fp16 dmin, 12 bytes of packed
// 6-bit scales and mins, 128 bytes of nibbles. The activations are Q8_K:
// float32 d, 256 int8, 16 int16 block sums (292 bytes).

//go:noescape
func dotQ4_KAVX2Asm(w, x *byte, nb int) float32

//go:noescape
func dotQ4_KVNNIAsm(w, x *byte, nb int) float32
