package quant

import "math"

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

// dotBF16 multiplies two bfloat16 rows in float32, like ggml_vec_dot_bf16;
// like dotF16 it agrees with ggml to rounding, not bit for bit.
func dotBF16(n int, w, x []byte) float32 {
	w = w[:2*n]
	x = x[:2*n]
	var s0, s1, s2, s3 float32
	for len(w) >= 8 && len(x) >= 8 {
		a := (*[8]byte)(w)
		b := (*[8]byte)(x)
		s0 += math.Float32frombits(uint32(a[0])<<16|uint32(a[1])<<24) * math.Float32frombits(uint32(b[0])<<16|uint32(b[1])<<24)
		s1 += math.Float32frombits(uint32(a[2])<<16|uint32(a[3])<<24) * math.Float32frombits(uint32(b[2])<<16|uint32(b[3])<<24)
		s2 += math.Float32frombits(uint32(a[4])<<16|uint32(a[5])<<24) * math.Float32frombits(uint32(b[4])<<16|uint32(b[5])<<24)
		s3 += math.Float32frombits(uint32(a[6])<<16|uint32(a[7])<<24) * math.Float32frombits(uint32(b[6])<<16|uint32(b[7])<<24)
		w = w[8:]
		x = x[8:]
	}
	for len(w) >= 2 && len(x) >= 2 {
		s0 += BF16ToFP32(le16(w)) * BF16ToFP32(le16(x))
		w = w[2:]
		x = x[2:]
	}
	return (s0 + s1) + (s2 + s3)
}
