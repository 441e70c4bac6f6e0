package kv

import (
	"math"

	"github.com/lowmem/llm/quant"
)

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

// q4Fits are the candidate scales quantizeQ4 tries for a block, as the
// number of steps the element of largest magnitude m lies from zero:
// d = m/−8 is quantize_row_q4_0_ref's choice, which spends the codes' range
// on one element; a finer step, clipping m, can round the other 31 closer.
// Five candidates each refitted by least squares lower the mean bucketed
// KL of the golden fixtures' 620–690-token prompts by 5–15 % against
// d = m/−8 alone (TestGoldenParityInt4); finer or wider candidate sets
// (up to 58 candidates, both signs) measured within 3 % of these five.
var q4Fits = [...]float32{8, 8.5, 9, 9.5, 10}

// quantizeQ4 stores src (rotated already, see Store) as q4_0 blocks in dst.
// The format is llama.cpp's, so any q4_0 reader decodes it; the scale is
// chosen to minimise each block's squared error (see q4Fits) rather than
// to map the largest element to −8.
func quantizeQ4(dst []byte, src []float32) {
	for b := 0; b+q4Block <= len(src); b += q4Block {
		o := b / q4Block * q4BlockBytes
		quantizeQ4Block(dst[o:o+q4BlockBytes:o+q4BlockBytes], src[b:b+q4Block:b+q4Block])
	}
}

// quantizeQ4Block quantizes one block of 32: for each candidate of q4Fits
// the codes nearest to x at that step, then the step that fits those codes
// best (d = Σx·l / Σl², l = c−8, leaving Σx² − (Σx·l)²/Σl² of squared
// error); the candidate leaving the least wins (the first on ties), its
// step is rounded to F16 and the codes are rounded again at that step
// (x·(1/d), as llama.cpp's q4_0 rounds). The arithmetic is float64 so that
// the test's reference model (refQ4Fit), written from this description,
// reaches the same bits.
func quantizeQ4Block(dst []byte, x []float32) {
	var m, amax float64
	for _, v := range x {
		if a := math.Abs(float64(v)); a > amax {
			amax, m = a, float64(v)
		}
	}
	var d, best float64
	for _, steps := range q4Fits {
		id := -float64(steps) / m
		var sxl, sll float64
		for _, v := range x {
			l := float64(q4Code(float64(v)*id) - 8)
			sxl += float64(v) * l
			sll += l * l
		}
		if sll > 0 && sxl*sxl/sll > best {
			best, d = sxl*sxl/sll, sxl/sll
		}
	}
	h := quant.FP32ToFP16(float32(d))
	dst[0], dst[1] = byte(h), byte(h>>8)
	var id float64 // 0 for an all-zero block: every code 8
	if d = float64(f16(h)); d != 0 {
		id = 1 / d
	}
	for j := range q4Block / 2 {
		dst[2+j] = byte(q4Code(float64(x[j])*id)) | byte(q4Code(float64(x[j+q4Block/2])*id))<<4
	}
}

// q4Code is the code nearest to t steps from zero, clamped to [0, 15];
// NaN gives 8 (zero), so no input makes it index out of a nibble.
func q4Code(t float64) int {
	t += 8.5 // then int(t) is ⌊t⌋, t being positive
	if !(t > 0) {
		if t != t {
			return 8
		}
		return 0
	}
	if t >= 15 {
		return 15
	}
	return int(t)
}

// dequantizeQ4 widens the q4_0 blocks of src into dst (len(dst) elements).
func dequantizeQ4(dst []float32, src []byte) {
	// Cannot fail: src holds len(dst)/32 blocks.
	_ = quant.Dequantize(quant.Q4_0, dst, src[:q4RowBytes(len(dst))])
}

// q4Scale is the F16 scale at the start of block b.
func q4Scale(b []byte) float32 { return f16(uint16(b[0]) | uint16(b[1])<<8) }
