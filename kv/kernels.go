package kv

import "math"

// Pure-Go inner loops of attention. They are kept small and free of cache
// bookkeeping so that an assembly version can replace any one of them with
// the same signature and the same float32 accumulation semantics.

// i8Table maps an int8, read as its byte, to float32: a load from a 1 KiB
// table is cheaper than Go's integer-to-float conversion here.
var i8Table [256]float32

func init() {
	for i := range i8Table {
		i8Table[i] = float32(int8(uint8(i)))
	}
}

// dotF16F32 returns Σ k[i]·q[i] for an F16 key row and a float32 query,
// accumulated in float32 like ggml_vec_dot_f16 (four partial sums, the order
// differs from ggml's SIMD lanes only in float32 rounding). len(q) must be
// at least len(k).
func dotF16F32(k []uint16, q []float32) float32 {
	q = q[:len(k)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(k); i += 4 {
		kk := k[i : i+4 : i+4]
		qq := q[i : i+4 : i+4]
		s0 += f16(kk[0]) * qq[0]
		s1 += f16(kk[1]) * qq[1]
		s2 += f16(kk[2]) * qq[2]
		s3 += f16(kk[3]) * qq[3]
	}
	for ; i < len(k); i++ {
		s0 += f16(k[i]) * q[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyF16 adds a·v to dst for an F16 value row. len(dst) must be at least
// len(v).
func axpyF16(dst []float32, a float32, v []uint16) {
	dst = dst[:len(v)]
	i := 0
	for ; i+4 <= len(v); i += 4 {
		vv := v[i : i+4 : i+4]
		dd := dst[i : i+4 : i+4]
		dd[0] += a * f16(vv[0])
		dd[1] += a * f16(vv[1])
		dd[2] += a * f16(vv[2])
		dd[3] += a * f16(vv[3])
	}
	for ; i < len(v); i++ {
		dst[i] += a * f16(v[i])
	}
}

// dotI8F32 returns Σ k[i]·q[i] for an int8 key row (before its scale) and a
// float32 query, accumulated in float32. len(q) must be at least len(k).
func dotI8F32(k []int8, q []float32) float32 {
	q = q[:len(k)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(k); i += 4 {
		kk := k[i : i+4 : i+4]
		qq := q[i : i+4 : i+4]
		s0 += i8Table[uint8(kk[0])] * qq[0]
		s1 += i8Table[uint8(kk[1])] * qq[1]
		s2 += i8Table[uint8(kk[2])] * qq[2]
		s3 += i8Table[uint8(kk[3])] * qq[3]
	}
	for ; i < len(k); i++ {
		s0 += i8Table[uint8(k[i])] * q[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyI8 adds a·v to dst for an int8 value row; a already includes the
// row's scale. len(dst) must be at least len(v).
func axpyI8(dst []float32, a float32, v []int8) {
	dst = dst[:len(v)]
	i := 0
	for ; i+4 <= len(v); i += 4 {
		vv := v[i : i+4 : i+4]
		dd := dst[i : i+4 : i+4]
		dd[0] += a * i8Table[uint8(vv[0])]
		dd[1] += a * i8Table[uint8(vv[1])]
		dd[2] += a * i8Table[uint8(vv[2])]
		dd[3] += a * i8Table[uint8(vv[3])]
	}
	for ; i < len(v); i++ {
		dst[i] += a * i8Table[uint8(v[i])]
	}
}

// axpy2F16 adds a0·v0 + a1·v1 to dst (the two products summed first).
// Taking two rows per pass halves the loads and stores of dst. v1 and dst
// must be at least len(v0) long.
func axpy2F16(dst []float32, a0, a1 float32, v0, v1 []uint16) {
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	i := 0
	for ; i+4 <= len(v0); i += 4 {
		x := v0[i : i+4 : i+4]
		y := v1[i : i+4 : i+4]
		dd := dst[i : i+4 : i+4]
		dd[0] += a0*f16(x[0]) + a1*f16(y[0])
		dd[1] += a0*f16(x[1]) + a1*f16(y[1])
		dd[2] += a0*f16(x[2]) + a1*f16(y[2])
		dd[3] += a0*f16(x[3]) + a1*f16(y[3])
	}
	for ; i < len(v0); i++ {
		dst[i] += a0*f16(v0[i]) + a1*f16(v1[i])
	}
}

// axpy2I8 is axpy2F16 for int8 rows; a0 and a1 include the rows' scales.
func axpy2I8(dst []float32, a0, a1 float32, v0, v1 []int8) {
	dst = dst[:len(v0)]
	v1 = v1[:len(v0)]
	i := 0
	for ; i+4 <= len(v0); i += 4 {
		x := v0[i : i+4 : i+4]
		y := v1[i : i+4 : i+4]
		dd := dst[i : i+4 : i+4]
		dd[0] += a0*i8Table[uint8(x[0])] + a1*i8Table[uint8(y[0])]
		dd[1] += a0*i8Table[uint8(x[1])] + a1*i8Table[uint8(y[1])]
		dd[2] += a0*i8Table[uint8(x[2])] + a1*i8Table[uint8(y[2])]
		dd[3] += a0*i8Table[uint8(x[3])] + a1*i8Table[uint8(y[3])]
	}
	for ; i < len(v0); i++ {
		dst[i] += a0*i8Table[uint8(v0[i])] + a1*i8Table[uint8(v1[i])]
	}
}

// quantizeI8 stores src as symmetric int8 in dst and returns the scale:
// scale = amax/127 and dst[i] = round(src[i]/scale), halves away from zero.
// An all-zero row gets scale 0. len(dst) must be at least len(src).
func quantizeI8(dst []int8, src []float32) float32 {
	dst = dst[:len(src)]
	var amax float32
	for _, x := range src {
		if x < 0 {
			x = -x
		}
		if x > amax {
			amax = x
		}
	}
	if amax == 0 {
		clear(dst)
		return 0
	}
	scale := amax / 127
	for i, x := range src {
		r := roundHalfAway(x / scale)
		// x/scale can land a hair above 127 when amax/127 rounded down.
		r = min(max(r, -127), 127)
		dst[i] = int8(r)
	}
	return scale
}

// roundHalfAway rounds to the nearest integer, halves away from zero, like
// C's roundf.
func roundHalfAway(x float32) float32 { return float32(math.Round(float64(x))) }
