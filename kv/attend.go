package kv

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/softmax"
)

// AttnParams are the constants of attention: the model's, and where the
// query's own text starts in the cache.
type AttnParams struct {
	// Heads is the number of query heads; a multiple of KVHeads. Query head
	// h reads KV head h/(Heads/KVHeads).
	Heads int
	// Scale multiplies every K·Q product, usually 1/sqrt(HeadDimK).
	Scale float32
	// Softcap, when positive, squashes each scaled score s to
	// Softcap·tanh(s/Softcap) (Gemma 2). 0 means none.
	Softcap float32
	// From is the first position the query sees; 0, the cache's start,
	// for one text. Several short texts packed into one pass, one after
	// another in the cache, each see only their own positions: a query
	// then gives its own text's first position.
	From int
	// Sinks, when not nil, holds one logit per query head (Heads of them)
	// that joins the head's softmax as a position without a value
	// (gpt-oss's attention sinks): it takes part in the maximum and the
	// sum, so the weights of the positions seen add up to less than 1.
	// Like Softcap's result it is not scaled. Only Attend takes sinks;
	// AttendQueries, which serves non-causal passes, refuses them.
	Sinks []float32
	// ALiBi, when not nil, holds one slope per query head (Heads of them):
	// a linear position bias, as llama.cpp gives jina-bert-v2 (ggml
	// soft_max's slopes times a mask of −|query position − key position|).
	// Head h's scaled score of a position p it sees is lowered by
	// ALiBi[h]·|Query − p| before the softmax, in float32. Neither Softcap
	// nor Sinks goes with it: no model has both.
	ALiBi []float32
	// Query is the query's own position, from which ALiBi measures
	// distances: Attend's pos only bounds what the query sees. With ALiBi,
	// AttendQueries' queries are query head Head's at positions Query,
	// Query+1, … — the tokens of a non-causal pass.
	Query int
	// Head is AttendQueries' query head when it takes ALiBi, which picks
	// the queries' slope.
	Head int
}

// Attend computes attention for query heads [h0,h1) of the token at pos in
// layer: each head's output is the softmax-weighted sum of the values of
// the positions it sees, which are p.From..pos, or the last W of them in a
// layer with window W (with Config.Chunked, those of pos's chunk of W).
// Those positions must have been stored; with chunked prefill the whole
// chunk may be stored first, since Attend never looks
// past pos. pos is only the bound of what the query sees, not where the
// query itself sits (its RoPE is applied before): attending at a batch's
// last position gives every token of the batch all of it, the tokens
// after it too — non-causal attention, as BERT-style encoders have.
//
// q holds the token's query, HeadDimK floats per head (at least h1 heads),
// and out receives HeadDimV floats per head; only heads [h0,h1) of either
// are touched. scratch must hold at least as many floats as positions seen
// (pos+1 always suffices); it is overwritten. Giving it Heads/KVHeads times
// that lets Attend handle the query heads of one KV head together, reading
// the KV head's keys and values once for all of them, which is faster at
// long contexts. Attend does not allocate, and heads are computed
// independently, so the result is the same bits whatever the scratch size
// and however [h0,h1) is split across goroutines. The inner loops are
// assembly on amd64 with AVX2 (or AVX-512), chosen once per process; other
// CPUs, or -tags purego, may round float32 sums differently in the last
// bits.
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
// by the row's scale. With an Int4 cache the query is rotated as the keys
// were (see Int4) into a buffer of Attend's own, q itself is not modified;
// Q and the weights stay float32 (llama.cpp rounds Q to q8_0 blocks there,
// which only adds error), each block's dot product or weighted row is
// multiplied by its scale, and each output head is rotated back when the
// values were rotated.
func (c *Cache) Attend(layer, pos int, q, out []float32, p AttnParams, h0, h1 int, scratch []float32) error {
	if layer < 0 || layer >= len(c.layers) {
		return fmt.Errorf("kv: attend: layer %d out of range [0,%d): %w", layer, len(c.layers), ErrInvalid)
	}
	l := &c.layers[layer]
	if p.Heads <= 0 || p.Heads%l.nh != 0 {
		return fmt.Errorf("kv: attend: %d query heads is not a positive multiple of layer %d's %d KV heads: %w", p.Heads, layer, l.nh, ErrInvalid)
	}
	if h0 < 0 || h0 > h1 || h1 > p.Heads {
		return fmt.Errorf("kv: attend: head range [%d,%d) not within [0,%d): %w", h0, h1, p.Heads, ErrInvalid)
	}
	if err := p.check(); err != nil {
		return err
	}
	dk, dv := l.dk, l.dv
	if h1 > len(q)/dk || h1 > len(out)/dv {
		return fmt.Errorf("kv: attend: q has %d and out %d floats, heads up to %d need %d and %d: %w", len(q), len(out), h1, h1*dk, h1*dv, ErrInvalid)
	}
	v, err := c.seen(layer, pos, p.From, len(scratch))
	if err != nil {
		return err
	}
	group := p.Heads / l.nh

	// Heads sharing a KV head go together: with room in scratch for all of
	// their weights, the kernels take up to four heads per pass over the
	// KV head's keys and then its values, reading each row once for all of
	// them rather than once per query head. The bits come out the same
	// either way: every kernel computes each head as it would alone.
	if p.Sinks != nil && len(p.Sinks) != p.Heads {
		return fmt.Errorf("kv: attend: %d sinks for %d query heads: %w", len(p.Sinks), p.Heads, ErrInvalid)
	}
	for ha := h0; ha < h1; {
		g := ha / group
		hb := min(h1, (g+1)*group)
		c.attendGroup(v, g, q[ha*dk:hb*dk], out[ha*dv:hb*dv], p, queries{h: ha, pos: p.Query}, scratch)
		ha = hb
	}
	return nil
}

// check reports parameters no query can attend with.
func (p *AttnParams) check() error {
	if !(p.Softcap >= 0) {
		return fmt.Errorf("kv: attend: softcap %v is negative: %w", p.Softcap, ErrInvalid)
	}
	for h, x := range p.Sinks {
		if x != x || x > math.MaxFloat32 || x < -math.MaxFloat32 {
			return fmt.Errorf("kv: attend: sink of head %d is %v, not a finite number: %w", h, x, ErrInvalid)
		}
	}
	if p.From < 0 {
		return fmt.Errorf("kv: attend: first position %d is negative: %w", p.From, ErrInvalid)
	}
	if p.ALiBi == nil {
		return nil
	}
	if len(p.ALiBi) != p.Heads {
		return fmt.Errorf("kv: attend: %d ALiBi slopes for %d query heads: %w", len(p.ALiBi), p.Heads, ErrInvalid)
	}
	if p.Softcap > 0 || p.Sinks != nil {
		return fmt.Errorf("kv: attend: ALiBi with a soft-cap or attention sinks: %w", ErrInvalid)
	}
	for h, x := range p.ALiBi {
		if x != x || x > math.MaxFloat32 || x < -math.MaxFloat32 {
			return fmt.Errorf("kv: attend: ALiBi slope of head %d is %v, not a finite number: %w", h, x, ErrInvalid)
		}
	}
	if p.Query < 0 {
		return fmt.Errorf("kv: attend: query position %d is negative: %w", p.Query, ErrInvalid)
	}
	return nil
}

// seen is the span of layer's cells a query at pos whose text starts at
// from sees, after checking that they are stored and that scratch
// (floats) holds one weight each.
func (c *Cache) seen(layer, pos, from, scratch int) (span, error) {
	l := &c.layers[layer]
	if pos < 0 || pos > l.hi {
		return span{}, fmt.Errorf("kv: attend: layer %d position %d not stored (stored up to %d): %w", layer, pos, l.hi, ErrInvalid)
	}
	if from > pos {
		return span{}, fmt.Errorf("kv: attend: layer %d: a query at position %d whose text starts after it, at %d: %w", layer, pos, from, ErrInvalid)
	}
	lo := from
	switch {
	case l.window > 0 && c.cfg.Chunked:
		lo = max(lo, pos-(pos-from)%l.window)
	case l.window > 0:
		lo = max(lo, pos-l.window+1)
	}
	if lo < l.lo {
		return span{}, fmt.Errorf("kv: attend: layer %d position %d needs position %d, already overwritten in the window's ring (store at most Config.Batch positions ahead): %w", layer, pos, lo, ErrInvalid)
	}
	n := pos - lo + 1
	if scratch < n {
		return span{}, fmt.Errorf("kv: attend: scratch holds %d floats, position %d sees %d: %w", scratch, pos, n, ErrScratch)
	}
	v := span{l: l, start: l.cell(lo), n: n, lo: lo}
	v.n1 = min(n, l.cells-v.start)
	return v, nil
}

// AttendQueries is Attend for queries that all see KV head g up to
// position pos: qs holds HeadDimK floats per query and out receives
// HeadDimV per query. They may be the heads that share g, or one head of
// several tokens of a non-causal pass (every token of the batch sees all
// of it), which then share each pass over the KV head's keys and values —
// up to four queries a pass — as a GQA group's heads do in Attend. Each
// query's result is the same bits as Attend of it alone. scratch holds
// (as in Attend) a weight per position seen, for each query to go
// together; with less, they go one at a time. With p.ALiBi the queries
// are query head p.Head's at positions p.Query, p.Query+1, ….
func (c *Cache) AttendQueries(layer, pos, g int, qs, out []float32, p AttnParams, scratch []float32) error {
	if layer < 0 || layer >= len(c.layers) {
		return fmt.Errorf("kv: attend: layer %d out of range [0,%d): %w", layer, len(c.layers), ErrInvalid)
	}
	l := &c.layers[layer]
	if g < 0 || g >= l.nh {
		return fmt.Errorf("kv: attend: KV head %d out of layer %d's range [0,%d): %w", g, layer, l.nh, ErrInvalid)
	}
	if err := p.check(); err != nil {
		return err
	}
	if p.Sinks != nil {
		return fmt.Errorf("kv: attend: attention sinks in a pass of several queries per head (non-causal): %w", ErrInvalid)
	}
	if p.ALiBi != nil && (p.Heads%l.nh != 0 || p.Head < 0 || p.Head >= p.Heads || p.Head/(p.Heads/l.nh) != g) {
		return fmt.Errorf("kv: attend: query head %d is not one of KV head %d's (%d query heads): %w", p.Head, g, p.Heads, ErrInvalid)
	}
	dk, dv := l.dk, l.dv
	nq := len(qs) / dk
	if len(qs) != nq*dk || len(out) != nq*dv {
		return fmt.Errorf("kv: attend: %d query and %d output floats are not whole queries of %d and %d: %w", len(qs), len(out), dk, dv, ErrInvalid)
	}
	v, err := c.seen(layer, pos, p.From, len(scratch))
	if err != nil {
		return err
	}
	c.attendGroup(v, g, qs, out, p, queries{h: p.Head, pos: p.Query, tokens: true}, scratch)
	return nil
}

// queries places attendGroup's queries: query j is head h+j at position
// pos (one token's heads, Attend) or, with tokens, head h at position
// pos+j (one head's tokens, AttendQueries).
type queries struct {
	h, pos int
	tokens bool
}

// at is query j's head and position.
func (a queries) at(j int) (h, pos int) {
	if a.tokens {
		return a.h, a.pos + j
	}
	return a.h + j, a.pos
}

// attendGroup attends queries qs that share KV head g over span v into
// out: together when scratch holds all of their weights, else one at a
// time (the same bits: every kernel computes each query as it would
// alone). at says which head and position each query is, which pick its
// sink or its ALiBi slope and distances.
func (c *Cache) attendGroup(v span, g int, qs, out []float32, p AttnParams, at queries, scratch []float32) {
	dk, dv, n := v.l.dk, v.l.dv, v.n
	nq := len(qs) / dk
	if len(scratch) >= nq*n {
		w := scratch[:nq*n]
		c.weights(v, g, qs, p, at, w)
		c.mix(v, g, w, out)
		return
	}
	for j := range nq {
		h, pos := at.at(j)
		c.weights(v, g, qs[j*dk:(j+1)*dk], p, queries{h: h, pos: pos}, scratch[:n])
		c.mix(v, g, scratch[:n], out[j*dv:(j+1)*dv])
	}
}

// span is the stretch of a layer's cells one query sees: n positions in
// cells [start, start+n1) and, when a ring wraps, [0, n-n1).
type span struct {
	l            *layer
	start, n1, n int
	lo           int // the first position seen
}

// weights sets the attention weights over KV head g of the queries in qs
// (HeadDimK floats each), placed by at: query j's n weights go to
// w[j·n:(j+1)·n].
func (c *Cache) weights(v span, g int, qs []float32, p AttnParams, at queries, w []float32) {
	l, n := v.l, v.n
	dk := l.dk
	base := g * l.cells // row of cell 0 for this KV head
	a, b := base+v.start, base+v.start+v.n1
	wrap := base + v.n - v.n1
	nh := len(qs) / dk
	if c.cfg.Type == F16 {
		// The queries are rounded to F16 four heads at a time, the most one
		// kernel call takes.
		var qbuf [4 * MaxHeadDim]float32
		for j0 := 0; j0 < nh; j0 += 4 {
			j1 := min(j0+4, nh)
			qr := qbuf[:(j1-j0)*dk]
			for i, x := range qs[j0*dk : j1*dk] {
				qr[i] = roundFP16(x)
			}
			wj := w[j0*n : j1*n]
			scoresF16Heads(wj, n, v.n1, l.k16[a*dk:b*dk], qr, dk)
			scoresF16Heads(wj[v.n1:], n, n-v.n1, l.k16[base*dk:wrap*dk], qr, dk)
		}
	} else if c.cfg.Type == Int8 {
		scoresI8Heads(w, n, v.n1, l.k8[a*dk:b*dk], l.ks[a:b], qs, dk)
		scoresI8Heads(w[v.n1:], n, n-v.n1, l.k8[base*dk:wrap*dk], l.ks[base:wrap], qs, dk)
	} else {
		c.scoresInt4(v, g, qs, w)
	}
	toWeights(w, n, nh, p, at, v.lo, c.cfg.Type == F16)
}

// toWeights turns the raw K·Q products of nq queries placed by at, n
// positions from lo each (query j's in w[j·n:(j+1)·n]), into attention
// weights in place: scaled, soft-capped, with sinks or ALiBi's bias as p
// says, through the softmax.
func toWeights(w []float32, n, nq int, p AttnParams, at queries, lo int, round16 bool) {
	for j := range nq {
		wj := w[j*n : (j+1)*n]
		h, pos := at.at(j)
		switch {
		case p.Sinks != nil:
			sinkWeights(wj, p.Scale, p.Sinks[h], round16)
		case p.ALiBi != nil:
			// The bias goes on the scaled scores, so the softmax scales
			// by 1, which changes no bits.
			alibiBias(wj, p.Scale, p.ALiBi[h], pos-lo)
			softmaxF32(wj, 1, round16)
		default:
			attnWeights(wj, p.Scale, p.Softcap, round16)
		}
	}
}

// mix sets each head of o (HeadDimV floats apart) to the weighted sum of KV
// head g's values, head j's weights being w[j·n:(j+1)·n].
func (c *Cache) mix(v span, g int, w, o []float32) {
	l, n := v.l, v.n
	dv := l.dv
	base := g * l.cells
	a, b := base+v.start, base+v.start+v.n1
	wrap := base + v.n - v.n1
	clear(o)
	if c.cfg.Type == F16 {
		valuesF16Heads(o, w, n, v.n1, l.v16[a*dv:b*dv], dv)
		valuesF16Heads(o, w[v.n1:], n, n-v.n1, l.v16[base*dv:wrap*dv], dv)
		return
	}
	if c.cfg.Type == Int4 {
		c.mixInt4(v, g, w, o)
		// The values were rotated before quantizing; the weighted sum is
		// rotated back (the rotation is its own inverse).
		hadamard(o, l.rotV)
		return
	}
	valuesI8Heads(o, w, n, v.n1, l.v8[a*dv:b*dv], l.vs[a:b], dv)
	valuesI8Heads(o, w[v.n1:], n, n-v.n1, l.v8[base*dv:wrap*dv], l.vs[base:wrap], dv)
}

// scoresInt4 is weights' K·Q step for an Int4 cache: the queries are
// rotated as the keys were, four heads at a time into a buffer on the stack
// (the most one kernel call takes), and scored against the q4_0 rows.
func (c *Cache) scoresInt4(v span, g int, qs, w []float32) {
	l, n := v.l, v.n
	dk := l.dk
	rb := q4RowBytes(dk)
	nh := len(qs) / dk
	var qbuf [4 * MaxHeadDim]float32
	for j0 := 0; j0 < nh; j0 += 4 {
		j1 := min(j0+4, nh)
		qr := qbuf[:(j1-j0)*dk]
		copy(qr, qs[j0*dk:j1*dk])
		hadamard(qr, l.rotK)
		wj := w[j0*n : j1*n]
		c.int4Runs(v, g, dk,
			func(off, row, run int) { scoresQ4Heads(wj[off:], n, run, l.k4[row*rb:(row+run)*rb], qr, dk) },
			func(off, row, run int) { scoresF16Heads(wj[off:], n, run, l.rec.rk[row*dk:(row+run)*dk], qr, dk) })
	}
}

// mixInt4 is mix for an Int4 cache: o gets the weighted sums of the
// q4_0 rows and of the positions held in F16.
func (c *Cache) mixInt4(v span, g int, w, o []float32) {
	l, n := v.l, v.n
	dv := l.dv
	rb := q4RowBytes(dv)
	c.int4Runs(v, g, dv,
		func(off, row, run int) { valuesQ4Heads(o, w[off:], n, run, l.v4[row*rb:(row+run)*rb], dv) },
		func(off, row, run int) { valuesF16Heads(o, w[off:], n, run, l.rec.rv[row*dv:(row+run)*dv], dv) })
}

// int4Runs calls q4 for the runs of KV head g's q4_0 rows the span reads
// and f16 for those of its F16 slots (see Config.Recent), in position
// order: off is the run's first position after the span's first, row the
// run's first row in its array.
func (c *Cache) int4Runs(v span, g, d int, q4, f16 func(off, row, run int)) {
	l, pos := v.l, v.lo+v.n-1
	a, b := c.int4Parts(l, v.lo, pos)
	slots := len(l.rec.pos)
	if a > v.lo {
		f16(0, g*slots+v.lo, a-v.lo)
	}
	base, off := g*l.cells, a-v.lo
	l.rows(a, b-a, func(cell, run int) {
		q4(off, base+cell, run)
		off += run
	})
	if b <= pos {
		c.recentRuns(b, pos+1, func(off, slot, run int) { f16(b-v.lo+off, g*slots+slot, run) })
	}
}

// attnWeights turns raw K·Q products into attention weights in place: s =
// x·scale, soft-capped when softcap > 0, then the softmax of softmaxGeneric.
// The soft-cap pass stays in Go (only Gemma 2 uses it); it leaves scaled
// values, so the kernel's own scaling is by 1, which changes no bits.
func attnWeights(s []float32, scale, softcap float32, round16 bool) {
	if softcap > 0 {
		inv := 1 / softcap
		for i, x := range s {
			s[i] = softcap * float32(math.Tanh(float64(x*scale*inv)))
		}
		scale = 1
	}
	softmaxF32(s, scale, round16)
}

// alibiBias scales the raw K·Q products s of the positions seen and
// lowers each by slope times its distance from the query, q positions
// after the first seen (q may lie outside s), as ggml's soft_max adds
// slope·mask to the scaled score. It stays in Go beside the kernels: a
// multiply and a subtract a position, against the scores kernel's
// HeadDimK. Distances count down to the query, then up from it, in
// float32 (exact up to 2^24 positions, far past any context), so the
// loops take no branch or conversion a position; the conversions keep
// each product rounded as ggml rounds it, unfused.
func alibiBias(s []float32, scale, slope float32, q int) {
	before := s[:min(max(q, 0), len(s))]
	d := float32(q)
	for i, x := range before {
		before[i] = float32(x*scale) - float32(slope*d)
		d--
	}
	after := s[len(before):]
	d = float32(len(before) - q)
	for i, x := range after {
		after[i] = float32(x*scale) - float32(slope*d)
		d++
	}
}

// sinkWeights is attnWeights with an attention sink and no soft-cap, in
// ggml_soft_max's order with sinks: the sink joins the maximum, and its
// exponential is added to the float64 sum after the positions'. It stays
// in Go: only gpt-oss has sinks, and its windowed layers see few positions.
func sinkWeights(s []float32, scale, sink float32, round16 bool) {
	normalize(s, softmax.ExpSink(s, scale, sink), round16)
}
