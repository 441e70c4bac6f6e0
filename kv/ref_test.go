package kv

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/x448/float16"
)

// A naive float64 model of what the cache should compute, written from the
// documented semantics rather than from the implementation.

// ref16 rounds x to binary16 through an independent converter.
func ref16(x float32) float64 { return float64(float16.Fromfloat32(x).Float32()) }

// refQuantize is the documented Int8 row format: scale = amax/127 in
// float32, q = round(x/scale) with halves away from zero, clamped to ±127;
// then twice: scale = Σx·q / Σq² (in float64, rounded to float32) and
// requantize, stopping early when the scale does not change.
func refQuantize(row []float32) (q []int8, scale float32) {
	var amax float32
	for _, x := range row {
		amax = max(amax, float32(math.Abs(float64(x))))
	}
	q = make([]int8, len(row))
	if amax == 0 {
		return q, 0
	}
	quant := func(s float32) (sxq, sqq float64) {
		for i, x := range row {
			r := math.Max(-127, math.Min(127, math.Round(float64(x/s))))
			q[i] = int8(r)
			sxq += float64(x) * r
			sqq += r * r
		}
		return
	}
	scale = amax / 127
	for range 2 {
		sxq, sqq := quant(scale)
		next := float32(sxq / sqq)
		if sqq == 0 || sxq <= 0 || next == scale || !(next > 0) {
			break
		}
		scale = next
	}
	quant(scale)
	return q, scale
}

// refRow returns a row as the cache holds it, widened to float64; for
// Int4, rotated back to the model's basis. order is the Walsh–Hadamard
// order an Int4 cache rotates the row by (0: none).
func refRow(typ Type, row []float32, order int) []float64 {
	out := make([]float64, len(row))
	switch typ {
	case F16:
		for i, x := range row {
			out[i] = ref16(x)
		}
		return out
	case Int4:
		return refInt4Row(row, order)
	}
	q, s := refQuantize(row)
	for i := range q {
		out[i] = float64(q[i]) * float64(s)
	}
	return out
}

// refToken is one stored token: its full k and v as given to Store, and as
// the cache should hold them.
type refToken struct {
	k, v   []float32
	kc, vc []float64
}

func newRefToken(typ Type, k, v []float32, kvHeads int) refToken {
	t := refToken{k: k, v: v}
	dk, dv := len(k)/kvHeads, len(v)/kvHeads
	rk, rv := cacheRotationOrders(dk, dv)
	for g := range kvHeads {
		t.kc = append(t.kc, refRow(typ, k[g*dk:(g+1)*dk], rk)...)
		t.vc = append(t.vc, refRow(typ, v[g*dv:(g+1)*dv], rv)...)
	}
	return t
}

// ulp16 is the spacing of F16 values just above |w| (|w| <= 65504).
func ulp16(w float64) float64 {
	w = math.Abs(w)
	if w < 0x1p-14 {
		return 0x1p-24
	}
	_, e := math.Frexp(w) // w = f·2^e, f in [0.5,1)
	return math.Ldexp(1, e-11)
}

// refAttend computes head h of the token at pos, attending to tokens
// lo..pos of toks (with p.ALiBi, biased by the distances from p.Query). roundQ and roundP select the F16 rounding of the query
// and of the weights. With roundP, bound[j] is how far out[j] may move when
// a float32 computation of each weight lands on the neighbouring F16 value.
func refAttend(toks []refToken, lo, pos int, q []float32, p AttnParams, kvHeads, dk, dv, h int, roundQ, roundP bool) (out, bound []float64) {
	g := h / (p.Heads / kvHeads)
	qh := make([]float64, dk)
	for i, x := range q[h*dk : (h+1)*dk] {
		qh[i] = float64(x)
		if roundQ {
			qh[i] = ref16(x)
		}
	}
	n := pos - lo + 1
	s := make([]float64, n)
	mx := math.Inf(-1)
	for i := range n {
		k := toks[lo+i].kc[g*dk : (g+1)*dk]
		var d float64
		for j := range dk {
			d += k[j] * qh[j]
		}
		d *= float64(p.Scale)
		if p.Softcap > 0 {
			d = float64(p.Softcap) * math.Tanh(d/float64(p.Softcap))
		}
		if p.ALiBi != nil {
			d -= float64(p.ALiBi[h]) * math.Abs(float64(p.Query-(lo+i)))
		}
		s[i] = d
		mx = max(mx, d)
	}
	if p.Sinks != nil {
		mx = max(mx, float64(p.Sinks[h]))
	}
	var sum float64
	for i := range s {
		s[i] = math.Exp(s[i] - mx)
		sum += s[i]
	}
	if p.Sinks != nil {
		// A sink is a position with a score and no value.
		sum += math.Exp(float64(p.Sinks[h]) - mx)
	}
	out = make([]float64, dv)
	bound = make([]float64, dv)
	for i := range s {
		w := s[i] / sum
		u := 0.0
		if roundP {
			w = ref16(float32(w))
			u = ulp16(w)
		}
		v := toks[lo+i].vc[g*dv : (g+1)*dv]
		for j := range dv {
			out[j] += w * v[j]
			bound[j] += u * math.Abs(v[j])
		}
	}
	return out, bound
}

func randVec(r *rand.Rand, n int, sd float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * sd)
	}
	return v
}

// refRotationOrders are llama.cpp's rotation orders as PR #21038 sets them:
// keys by the largest power of two dividing the key head size, values by
// 64, each only for head sizes that are multiples of 64.
func refRotationOrders(dk, dv int) (rk, rv int) {
	if dk%64 == 0 {
		rk = dk & -dk // the lowest set bit
	}
	if dv%64 == 0 {
		rv = 64
	}
	return rk, rv
}

// cacheRotationOrders are the rotation orders of an Int4 cache in this
// build: llama.cpp's, or none with -tags kvnorotate.
func cacheRotationOrders(dk, dv int) (rk, rv int) {
	if !rotateInt4 {
		return 0, 0
	}
	return refRotationOrders(dk, dv)
}

// refHadamard is the orthonormal Walsh–Hadamard matrix of order n built as
// Sylvester does: entry (i, j) is (−1)^popcount(i&j)/√n.
func refHadamard(n int) [][]float64 {
	h := make([][]float64, n)
	for i := range h {
		h[i] = make([]float64, n)
		for j := range h[i] {
			h[i][j] = 1 / math.Sqrt(float64(n))
			if bits.OnesCount(uint(i&j))%2 == 1 {
				h[i][j] = -h[i][j]
			}
		}
	}
	return h
}

// refRotate multiplies each block of n elements of x by refHadamard(n).
func refRotate(x []float64, n int) []float64 {
	if n == 0 {
		return slices.Clone(x)
	}
	h := refHadamard(n)
	out := make([]float64, len(x))
	for b := 0; b < len(x); b += n {
		for i := range n {
			for j := range n {
				out[b+i] += h[i][j] * x[b+j]
			}
		}
	}
	return out
}

// refQ4 is llama.cpp's q4_0 block as ggml-common.h and
// quantize_row_q4_0_ref define it: per 32 elements, d = m/−8 in float32
// where m is the element of largest magnitude (the first on ties), codes
// ⌊x·(1/d) + 8.5⌋ clamped to 15 (0 when d is 0), and d stored as F16.
// It returns the codes and the stored scale.
func refQ4(x []float32) (codes []int, scales []float64) {
	for b := 0; b < len(x); b += 32 {
		blk := x[b : b+32]
		var m, amax float32
		for _, v := range blk {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, m = a, v
			}
		}
		d := m / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for _, v := range blk {
			codes = append(codes, min(15, int(v*id+8.5)))
		}
		scales = append(scales, ref16(d))
	}
	return codes, scales
}

// refQ4Fit is the Int4 cache's q4_0 block (quantizeQ4's documentation): for
// each candidate step count s of q4Fits, codes ⌊x·(−s/m) + 8.5⌋ clamped to
// [0, 15], then the least-squares scale d = Σx·l / Σl² (l = c−8) of those
// codes; the candidate leaving the least squared error Σx² − (Σx·l)²/Σl²
// wins (the first on ties), d is stored as F16, and the codes are rounded
// again at the stored d (⌊x·(1/d) + 8.5⌋). Arithmetic in float64.
func refQ4Fit(x []float32) (codes []int, scales []float64) {
	codesAt := func(blk []float32, id float64) []int {
		cs := make([]int, len(blk))
		for i, v := range blk {
			cs[i] = int(math.Min(15, math.Max(0, math.Floor(float64(v)*id+8.5))))
		}
		return cs
	}
	for b := 0; b < len(x); b += 32 {
		blk := x[b : b+32]
		top := 0 // the first element of largest magnitude
		for i := range blk {
			if math.Abs(float64(blk[i])) > math.Abs(float64(blk[top])) {
				top = i
			}
		}
		var d, best float64
		for _, s := range q4Fits {
			var sxl, sll float64
			for i, c := range codesAt(blk, -float64(s)/float64(blk[top])) {
				sxl += float64(blk[i]) * float64(c-8)
				sll += float64((c - 8) * (c - 8))
			}
			if sll > 0 && sxl*sxl/sll > best {
				best, d = sxl*sxl/sll, sxl/sll
			}
		}
		d = ref16(float32(d))
		if d == 0 {
			codes = append(codes, slices.Repeat([]int{8}, 32)...)
		} else {
			codes = append(codes, codesAt(blk, 1/d)...)
		}
		scales = append(scales, d)
	}
	return codes, scales
}

// refInt4Row is a row as an Int4 cache holds it, in the model's basis: the
// row rotated (in float32, by the cache's own transform, which
// TestHadamardMatchesMatrix checks against refHadamard), quantized to q4_0,
// dequantized and rotated back in float64.
func refInt4Row(row []float32, order int) []float64 {
	x := slices.Clone(row)
	hadamard(x, order)
	codes, scales := refQ4Fit(x)
	deq := make([]float64, len(row))
	for i, c := range codes {
		deq[i] = float64(c-8) * scales[i/32]
	}
	return refRotate(deq, order)
}
