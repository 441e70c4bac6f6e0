package kv

import (
	"fmt"
	"math"
)

// AttnParams are the per-model constants of attention.
type AttnParams struct {
	// Heads is the number of query heads; a multiple of KVHeads. Query head
	// h reads KV head h/(Heads/KVHeads).
	Heads int
	// Scale multiplies every K·Q product, usually 1/sqrt(HeadDimK).
	Scale float32
	// Softcap, when positive, squashes each scaled score s to
	// Softcap·tanh(s/Softcap) (Gemma 2). 0 means none.
	Softcap float32
}

// Attend computes attention for query heads [h0,h1) of the token at pos in
// layer: each head's output is the softmax-weighted sum of the values of
// the positions it sees, which are 0..pos, or the last W of them in a layer
// with window W. Those positions must have been stored; with chunked
// prefill the whole chunk may be stored first, since Attend never looks
// past pos.
//
// q holds the token's query, HeadDimK floats per head (at least h1 heads),
// and out receives HeadDimV floats per head; only heads [h0,h1) of either
// are touched. scratch must hold at least as many floats as positions seen
// (pos+1 always suffices); it is overwritten. Giving it Heads/KVHeads times
// that lets Attend handle the query heads of one KV head together, reading
// the KV head's keys and values once for all of them, which is faster at
// long contexts. Attend does not allocate, and heads are computed
// independently, so the result is the same bits whatever the scratch size
// and however [h0,h1) is split across goroutines.
//
// With an F16 cache the numerics follow llama.cpp's CPU path without flash
// attention: Q is rounded to F16 and K·Q accumulated in float32, then
// scaled, soft-capped, and passed through a float32 softmax (max
// subtracted, sum in float64); the weights are rounded to F16 before the
// float32 weighted sum of values. llama.cpp applies its scale after the
// soft-cap, so for Gemma 2 it pre-scales Q and passes scale 1; do the same
// here (Scale 1) to match it bit for bit, the two orders agree then.
// With an Int8 cache Q and the weights stay float32 (there is no llama.cpp
// counterpart to match) and each row's dot product or weight is multiplied
// by the row's scale.
func (c *Cache) Attend(layer, pos int, q, out []float32, p AttnParams, h0, h1 int, scratch []float32) error {
	if layer < 0 || layer >= len(c.layers) {
		return fmt.Errorf("kv: attend: layer %d out of range [0,%d): %w", layer, len(c.layers), ErrInvalid)
	}
	if p.Heads <= 0 || p.Heads%c.cfg.KVHeads != 0 {
		return fmt.Errorf("kv: attend: %d query heads is not a positive multiple of %d KV heads: %w", p.Heads, c.cfg.KVHeads, ErrInvalid)
	}
	if h0 < 0 || h0 > h1 || h1 > p.Heads {
		return fmt.Errorf("kv: attend: head range [%d,%d) not within [0,%d): %w", h0, h1, p.Heads, ErrInvalid)
	}
	if !(p.Softcap >= 0) {
		return fmt.Errorf("kv: attend: softcap %v is negative: %w", p.Softcap, ErrInvalid)
	}
	dk, dv := c.cfg.HeadDimK, c.cfg.HeadDimV
	if h1 > len(q)/dk || h1 > len(out)/dv {
		return fmt.Errorf("kv: attend: q has %d and out %d floats, heads up to %d need %d and %d: %w", len(q), len(out), h1, h1*dk, h1*dv, ErrInvalid)
	}
	l := &c.layers[layer]
	if pos < 0 || pos > l.hi {
		return fmt.Errorf("kv: attend: layer %d position %d not stored (stored up to %d): %w", layer, pos, l.hi, ErrInvalid)
	}
	lo := 0
	if l.window > 0 {
		lo = max(0, pos-l.window+1)
	}
	if lo < l.lo {
		return fmt.Errorf("kv: attend: layer %d position %d needs position %d, already overwritten in the window's ring (store at most Config.Batch positions ahead): %w", layer, pos, lo, ErrInvalid)
	}
	n := pos - lo + 1
	if len(scratch) < n {
		return fmt.Errorf("kv: attend: scratch holds %d floats, position %d sees %d: %w", len(scratch), pos, n, ErrScratch)
	}
	v := span{l: l, start: l.cell(lo), n: n}
	v.n1 = min(n, l.cells-v.start)
	group := p.Heads / c.cfg.KVHeads

	// Heads sharing a KV head go together: with room in scratch for all of
	// their weights, every head's scores are computed before any head's
	// values, so the KV head's keys and then its values are each read while
	// still in cache rather than once per query head. The bits come out the
	// same either way.
	for ha := h0; ha < h1; {
		g := ha / group
		hb := min(h1, (g+1)*group)
		if len(scratch) >= (hb-ha)*n {
			for h := ha; h < hb; h++ {
				c.weights(v, g, q[h*dk:(h+1)*dk], p, scratch[(h-ha)*n:(h-ha+1)*n])
			}
			for h := ha; h < hb; h++ {
				c.mix(v, g, scratch[(h-ha)*n:(h-ha+1)*n], out[h*dv:(h+1)*dv])
			}
		} else {
			for h := ha; h < hb; h++ {
				c.weights(v, g, q[h*dk:(h+1)*dk], p, scratch[:n])
				c.mix(v, g, scratch[:n], out[h*dv:(h+1)*dv])
			}
		}
		ha = hb
	}
	return nil
}

// span is the stretch of a layer's cells one query sees: n positions in
// cells [start, start+n1) and, when a ring wraps, [0, n-n1).
type span struct {
	l            *layer
	start, n1, n int
}

// weights sets w (n floats) to the attention weights of query head qh over
// KV head g.
func (c *Cache) weights(v span, g int, qh []float32, p AttnParams, w []float32) {
	l, dk := v.l, c.cfg.HeadDimK
	base := g * l.cells // row of cell 0 for this KV head
	a, b := base+v.start, base+v.start+v.n1
	wrap := base + v.n - v.n1
	if c.cfg.Type == F16 {
		var qbuf [MaxHeadDim]float32
		qr := qbuf[:dk]
		for i, x := range qh {
			qr[i] = roundFP16(x)
		}
		scoresF16(w[:v.n1], l.k16[a*dk:b*dk], qr)
		scoresF16(w[v.n1:], l.k16[base*dk:wrap*dk], qr)
		softmax(w, p.Scale, p.Softcap, true)
		return
	}
	scoresI8(w[:v.n1], l.k8[a*dk:b*dk], l.ks[a:b], qh)
	scoresI8(w[v.n1:], l.k8[base*dk:wrap*dk], l.ks[base:wrap], qh)
	softmax(w, p.Scale, p.Softcap, false)
}

// mix sets o to the w-weighted sum of KV head g's values.
func (c *Cache) mix(v span, g int, w, o []float32) {
	l, dv := v.l, c.cfg.HeadDimV
	base := g * l.cells
	a, b := base+v.start, base+v.start+v.n1
	wrap := base + v.n - v.n1
	clear(o)
	if c.cfg.Type == F16 {
		valuesF16(o, w[:v.n1], l.v16[a*dv:b*dv])
		valuesF16(o, w[v.n1:], l.v16[base*dv:wrap*dv])
		return
	}
	valuesI8(o, w[:v.n1], l.v8[a*dv:b*dv], l.vs[a:b])
	valuesI8(o, w[v.n1:], l.v8[base*dv:wrap*dv], l.vs[base:wrap])
}

// scoresF16 sets dst[i] to the dot product of key row i of k with q; the
// rows are len(q) long.
func scoresF16(dst []float32, k []uint16, q []float32) {
	d := len(q)
	for i := range dst {
		dst[i] = dotF16F32(k[i*d:(i+1)*d], q)
	}
}

// scoresI8 is scoresF16 for int8 rows with per-row scales.
func scoresI8(dst []float32, k []int8, scales []float32, q []float32) {
	d := len(q)
	scales = scales[:len(dst)]
	for i := range dst {
		dst[i] = dotI8F32(k[i*d:(i+1)*d], q) * scales[i]
	}
}

// valuesF16 adds Σ w[i]·row i of v to o; the rows are len(o) long. Rows go
// two at a time; zero weights (common once F16 rounding flushes tiny ones)
// are skipped, since they add nothing.
func valuesF16(o, w []float32, v []uint16) {
	d := len(o)
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

// valuesI8 is valuesF16 for int8 rows with per-row scales.
func valuesI8(o, w []float32, v []int8, scales []float32) {
	d := len(o)
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

// softmax turns raw K·Q products into attention weights in place:
// s = x·scale, soft-capped when softcap > 0, then exp(s-max)/Σ, with the
// exponentials summed in float64 and scaled by the float32 reciprocal of
// the sum as ggml_soft_max does. round16 rounds the weights to F16, the
// precision llama.cpp multiplies them with V in.
func softmax(s []float32, scale, softcap float32, round16 bool) {
	mx := float32(math.Inf(-1))
	if softcap > 0 {
		inv := 1 / softcap
		for i, x := range s {
			x = softcap * float32(math.Tanh(float64(x*scale*inv)))
			s[i] = x
			mx = max(mx, x)
		}
	} else {
		for i, x := range s {
			x *= scale
			s[i] = x
			mx = max(mx, x)
		}
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
