package quant

import (
	"math"
	"sync"
)

// BF16ToFP32 returns the value of the bfloat16 number with bits h. The
// conversion is exact: a bfloat16 is the top half of a float32.
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 rounds f to the nearest bfloat16, ties to even, and returns its
// bits, as ggml_compute_fp32_to_bf16 does: a NaN keeps its sign and top
// payload bits and is made quiet, values past the largest bfloat16 become
// ±Inf, and subnormals are rounded, not flushed to zero (current ggml; some
// older versions flushed them).
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

func dequantBF16(dst []float32, src []byte) { dequant16(dst, src, BF16ToFP32) }
func quantBF16(dst []byte, src []float32)   { quant16(dst, src, FP32ToBF16) }

// dotBF16 multiplies two bfloat16 rows in float32, like ggml_vec_dot_bf16;
// like dotF16 it agrees with ggml to rounding, not bit for bit.
func dotBF16(n int, w, x []byte) float32 { return dotHalf(n, w, x, bf16Table()) }

// bf16Table maps every bfloat16 bit pattern to its float32 value. A table
// read is as fast as the shift here and lets dotHalf serve both formats;
// it is built on first use, so only processes with BF16 weights hold it.
var bf16Table = sync.OnceValue(func() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for h := range t {
		t[h] = BF16ToFP32(uint16(h))
	}
	return t
})
