package kv

import "math"

// Pure-Go inner loops of attention. They are kept small and free of cache
// bookkeeping so that an assembly version (kernels_amd64.s) can stand in for
// any one of them with the same float32 semantics, up to the order in which
// float32 sums are added. The names without the Generic suffix are what
// attention calls; kernels_amd64.go and kernels_other.go decide which
// implementation runs.

// i8Table maps an int8, read as its byte, to float32: a load from a 1 KiB
// table is cheaper than Go's integer-to-float conversion here.
var i8Table [256]float32

func init() {
	for i := range i8Table {
		i8Table[i] = float32(int8(uint8(i)))
	}
}

// dotF16F32Generic returns Σ k[i]·q[i] for an F16 key row and a float32 query,
// accumulated in float32 like ggml_vec_dot_f16 (four partial sums, the order
// differs from ggml's SIMD lanes only in float32 rounding). len(q) must be
// at least len(k).
func dotF16F32Generic(k []uint16, q []float32) float32 {
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

// axpyF16Generic adds a·v to dst for an F16 value row. len(dst) must be at least
// len(v).
func axpyF16Generic(dst []float32, a float32, v []uint16) {
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

// dotI8F32Generic returns Σ k[i]·q[i] for an int8 key row (before its scale) and a
// float32 query, accumulated in float32. len(q) must be at least len(k).
func dotI8F32Generic(k []int8, q []float32) float32 {
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

// axpyI8Generic adds a·v to dst for an int8 value row; a already includes the
// row's scale. len(dst) must be at least len(v).
func axpyI8Generic(dst []float32, a float32, v []int8) {
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

// axpy2F16Generic adds a0·v0 + a1·v1 to dst (the two products summed first).
// Taking two rows per pass halves the loads and stores of dst. v1 and dst
// must be at least len(v0) long.
func axpy2F16Generic(dst []float32, a0, a1 float32, v0, v1 []uint16) {
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

// axpy2I8Generic is axpy2F16 for int8 rows; a0 and a1 include the rows' scales.
func axpy2I8Generic(dst []float32, a0, a1 float32, v0, v1 []int8) {
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

// quantizeI8 stores src as symmetric int8 in dst and returns the scale. It
// starts from scale = amax/127 and then refines the scale by least squares
// for the chosen codes and requantizes (two rounds), which lowers the
// row's squared error compared with amax/127 alone: the codes keep their
// full range while the scale fits the bulk of the values. Rounding is
// halves away from zero. An all-zero row gets scale 0. len(dst) must be at
// least len(src).
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
	quant := func(scale float32) (sxq, sqq float64) {
		for i, x := range src {
			r := roundHalfAway(x / scale)
			r = min(max(r, -127), 127)
			dst[i] = int8(r)
			sxq += float64(x) * float64(r)
			sqq += float64(r) * float64(r)
		}
		return sxq, sqq
	}
	for range 2 {
		sxq, sqq := quant(scale)
		if sqq == 0 || sxq <= 0 {
			break
		}
		next := float32(sxq / sqq)
		if next == scale || !(next > 0) {
			break
		}
		scale = next
	}
	quant(scale)
	return scale
}

// roundHalfAway rounds to the nearest integer, halves away from zero, like
// C's roundf.
func roundHalfAway(x float32) float32 { return float32(math.Round(float64(x))) }

// scoresF16Rows sets dst[i] to the dot product of key row i of k with q;
// the rows are len(q) long. It is the fallback of scoresF16 for row lengths
// the multi-row assembly does not take.
func scoresF16Rows(dst []float32, k []uint16, q []float32) {
	d := len(q)
	k = k[:len(dst)*d]
	for i := range dst {
		dst[i] = dotF16F32(k[i*d:(i+1)*d], q)
	}
}

// scoresI8Rows is scoresF16Rows for int8 rows with per-row scales: dst[i]
// is the row's dot product times its scale.
func scoresI8Rows(dst []float32, k []int8, scales []float32, q []float32) {
	d := len(q)
	k = k[:len(dst)*d]
	scales = scales[:len(dst)]
	for i := range dst {
		dst[i] = dotI8F32(k[i*d:(i+1)*d], q) * scales[i]
	}
}

// valuesF16Rows adds Σ w[i]·row i of v to o; the rows are len(o) long.
// Rows go two at a time; zero weights (common once F16 rounding flushes
// tiny ones) are skipped, since they add nothing.
func valuesF16Rows(o, w []float32, v []uint16) {
	d := len(o)
	v = v[:len(w)*d]
	i := 0
	for ; i+2 <= len(w); i += 2 {
		a0, a1 := w[i], w[i+1]
		switch {
		case a0 != 0 && a1 != 0:
			axpy2F16(o, a0, a1, v[i*d:(i+1)*d], v[(i+1)*d:(i+2)*d])
		case a0 != 0:
			axpyF16(o, a0, v[i*d:(i+1)*d])
		case a1 != 0:
			axpyF16(o, a1, v[(i+1)*d:(i+2)*d])
		}
	}
	if i < len(w) && w[i] != 0 {
		axpyF16(o, w[i], v[i*d:(i+1)*d])
	}
}

// valuesI8Rows is valuesF16Rows for int8 rows with per-row scales: row i
// is added with weight w[i]·scales[i].
func valuesI8Rows(o, w []float32, v []int8, scales []float32) {
	d := len(o)
	v = v[:len(w)*d]
	scales = scales[:len(w)]
	i := 0
	for ; i+2 <= len(w); i += 2 {
		a0, a1 := w[i]*scales[i], w[i+1]*scales[i+1]
		switch {
		case a0 != 0 && a1 != 0:
			axpy2I8(o, a0, a1, v[i*d:(i+1)*d], v[(i+1)*d:(i+2)*d])
		case a0 != 0:
			axpyI8(o, a0, v[i*d:(i+1)*d])
		case a1 != 0:
			axpyI8(o, a1, v[(i+1)*d:(i+2)*d])
		}
	}
	if i < len(w) {
		if a := w[i] * scales[i]; a != 0 {
			axpyI8(o, a, v[i*d:(i+1)*d])
		}
	}
}

// softmaxGeneric turns K·Q products into attention weights in place:
// s = x·scale, then exp(s-max)/Σ, with each exponential computed in float64
// and rounded to float32, the float32 exponentials summed in float64, and
// the results scaled by the float32 reciprocal of the sum as ggml_soft_max
// does. round16 rounds the weights to F16, the precision llama.cpp
// multiplies them with V in.
func softmaxGeneric(s []float32, scale float32, round16 bool) {
	mx := float32(math.Inf(-1))
	for i, x := range s {
		x *= scale
		s[i] = x
		mx = max(mx, x)
	}
	var sum float64
	for i, x := range s {
		e := float32(math.Exp(float64(x - mx)))
		s[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	if round16 {
		for i, e := range s {
			s[i] = roundFP16(e * inv)
		}
	} else {
		for i, e := range s {
			s[i] = e * inv
		}
	}
}

// The ...Heads functions run one kernel for several query heads of one KV
// head: query (or output) h is d floats apart from the next, and its
// scores (or weights) stride floats apart. The platform's ...x4 functions
// take the leading heads four at a time, reading each cached row once for
// the four, and report how many they did; the rest go one by one. Either way
// each head's result is the same bits as a call for that head alone.

// scoresF16Heads sets dst[h·stride+i] to key row i of k times query h of q,
// for the rows rows of d elements.
func scoresF16Heads(dst []float32, stride, rows int, k []uint16, q []float32, d int) {
	k = k[:rows*d]
	for h := scoresF16x4(dst, stride, rows, k, q, d); h < len(q)/d; h++ {
		scoresF16(dst[h*stride:h*stride+rows], k, q[h*d:(h+1)*d])
	}
}

// scoresI8Heads is scoresF16Heads for int8 rows with per-row scales.
func scoresI8Heads(dst []float32, stride, rows int, k []int8, scales, q []float32, d int) {
	k, scales = k[:rows*d], scales[:rows]
	for h := scoresI8x4(dst, stride, rows, k, scales, q, d); h < len(q)/d; h++ {
		scoresI8(dst[h*stride:h*stride+rows], k, scales, q[h*d:(h+1)*d])
	}
}

// valuesF16Heads adds Σ_i w[h·stride+i]·row i of v to output h of o, for the
// rows rows of d elements.
func valuesF16Heads(o, w []float32, stride, rows int, v []uint16, d int) {
	v = v[:rows*d]
	for h := valuesF16x4(o, w, stride, rows, v, d); h < len(o)/d; h++ {
		valuesF16(o[h*d:(h+1)*d], w[h*stride:h*stride+rows], v)
	}
}

// valuesI8Heads is valuesF16Heads for int8 rows with per-row scales.
func valuesI8Heads(o, w []float32, stride, rows int, v []int8, scales []float32, d int) {
	v, scales = v[:rows*d], scales[:rows]
	for h := valuesI8x4(o, w, stride, rows, v, scales, d); h < len(o)/d; h++ {
		valuesI8(o[h*d:(h+1)*d], w[h*stride:h*stride+rows], v, scales)
	}
}
