package kv

import "github.com/lowmem/llm/quant"

// An Int4 row is a head's key or value as llama.cpp's q4_0 blocks
// (ggml-common.h, block_q4_0): per 32 elements, an F16 scale d (2 bytes,
// little-endian) and 16 bytes of 4-bit codes c, byte j holding element j in
// its low nibble and element j+16 in its high one; the element is d·(c−8).
const (
	q4Block      = 32
	q4BlockBytes = 2 + q4Block/2
)

// q4RowBytes is the storage of a row of d elements (a multiple of q4Block).
func q4RowBytes(d int) int { return d / q4Block * q4BlockBytes }

// quantizeQ4 stores src (rotated already, see Store) as q4_0 blocks in
// dst: the scale maps the element of largest magnitude to −8 and codes are
// ⌊x/d+8.5⌋ clamped to 15, as quantize_row_q4_0_ref does.
func quantizeQ4(dst []byte, src []float32) {
	// Cannot fail: the cache sizes dst for len(src)/32 blocks.
	_ = quant.QuantizeRow(quant.Q4_0, dst[:q4RowBytes(len(src))], src)
}

// dequantizeQ4 widens the q4_0 blocks of src into dst (len(dst) elements).
func dequantizeQ4(dst []float32, src []byte) {
	// Cannot fail: src holds len(dst)/32 blocks.
	_ = quant.Dequantize(quant.Q4_0, dst, src[:q4RowBytes(len(dst))])
}

// q4Scale is the F16 scale at the start of block b.
func q4Scale(b []byte) float32 { return f16(uint16(b[0]) | uint16(b[1])<<8) }
