package kv

import (
	"math"
	"math/rand/v2"

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

// refRow returns a row as the cache holds it, widened to float64.
func refRow(typ Type, row []float32) []float64 {
	out := make([]float64, len(row))
	if typ == F16 {
		for i, x := range row {
			out[i] = ref16(x)
		}
		return out
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
	for g := range kvHeads {
		t.kc = append(t.kc, refRow(typ, k[g*dk:(g+1)*dk])...)
		t.vc = append(t.vc, refRow(typ, v[g*dv:(g+1)*dv])...)
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
// lo..pos of toks. roundQ and roundP select the F16 rounding of the query
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
		s[i] = d
		mx = max(mx, d)
	}
	var sum float64
	for i := range s {
		s[i] = math.Exp(s[i] - mx)
		sum += s[i]
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
