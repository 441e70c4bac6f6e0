package kv

import (
	"fmt"

	"github.com/lowmem/llm/quant"
)

// Rows are keys and values held as float32 rows outside the cache, one
// position a row: position From+j's key is K[j·Stride:][:HeadDimK] and
// its value V[j·Stride:][:HeadDimV], for j in [0,N), From being the
// AttnParams' first position seen. A non-causal pass's own projections
// are such rows: jina-bert-v2 attends over them, as llama.cpp's encoder
// does without a cache, in float32.
type Rows struct {
	K, V               []float32
	Stride, N          int
	HeadDimK, HeadDimV int
}

// AttendRows is AttendQueries over r instead of a cache layer's KV head:
// qs holds HeadDimK floats a query, out receives HeadDimV a query, and
// with p.ALiBi the queries are query head p.Head's at positions p.Query,
// p.Query+1, …. The softmax, the soft-cap and ALiBi's bias are the
// cache's, in float32 with no F16 rounding. The K·Q products are quant's
// float32 tile kernel (quant.TileF32: a call a block of keys and queries, each
// key row read once for the block). scratch must hold a weight a
// position for each query; when it holds HeadDimV floats a position more,
// the values are transposed there once and the weighted sums are tile
// products too (a jina-bert-v2 pass spent most of its attention in them
// as a Go loop), else they are a float32 Go loop. AttendRows does not
// allocate.
func AttendRows(r Rows, qs, out []float32, p AttnParams, scratch []float32) error {
	if err := p.check(); err != nil {
		return err
	}
	if p.Sinks != nil {
		return fmt.Errorf("kv: attend rows: attention sinks in a pass of several queries per head (non-causal): %w", ErrInvalid)
	}
	dk, dv, n := r.HeadDimK, r.HeadDimV, r.N
	if dk <= 0 || dv <= 0 || n <= 0 || r.Stride < 0 {
		return fmt.Errorf("kv: attend rows: %d positions of head sizes %d and %d, stride %d: %w", n, dk, dv, r.Stride, ErrInvalid)
	}
	if !rowsFit(len(r.K), dk, n, r.Stride) || !rowsFit(len(r.V), dv, n, r.Stride) {
		return fmt.Errorf("kv: attend rows: %d rows of stride %d do not fit %d key and %d value floats: %w", n, r.Stride, len(r.K), len(r.V), ErrInvalid)
	}
	nq := len(qs) / dk
	if len(qs) != nq*dk || len(out) != nq*dv {
		return fmt.Errorf("kv: attend rows: %d query and %d output floats are not whole queries of %d and %d: %w", len(qs), len(out), dk, dv, ErrInvalid)
	}
	if p.ALiBi != nil && (p.Head < 0 || p.Head >= p.Heads) {
		return fmt.Errorf("kv: attend rows: query head %d out of [0,%d): %w", p.Head, p.Heads, ErrInvalid)
	}
	if len(scratch) < nq*n {
		return fmt.Errorf("kv: attend rows: scratch holds %d floats, %d queries of %d positions need %d: %w", len(scratch), nq, n, nq*n, ErrScratch)
	}
	w := scratch[:nq*n]
	rowScores(r, qs, nq, w)
	toWeights(w, n, nq, p, queries{h: p.Head, pos: p.Query, tokens: true}, p.From, false)
	if len(scratch) >= (nq+dv)*n {
		rowValuesTiled(r, w, nq, out, scratch[nq*n:(nq+dv)*n])
		return nil
	}
	clear(out)
	for j := range n {
		v := r.V[j*r.Stride : j*r.Stride+dv]
		for i := range nq {
			axpyF32(out[i*dv:(i+1)*dv], w[i*n+j], v)
		}
	}
	return nil
}

// rowTile is the float32 tile product AttendRows' sums go through:
// assembly on AVX2, AVX-512 and NEON, whose one call a tile of keys and
// queries costs less than a dot-product call a pair (a jina-bert-v2 pass
// spent 43 % of its time in dotF32, then in the calls of the F32 dot
// product).
var rowTile, rowTileRows, rowTileCols = quant.TileF32()

// rowScores sets w[i·N+j] to query i's product with key j: keys are the
// tile's weight rows, as they lie in r, queries its activation columns.
func rowScores(r Rows, qs []float32, nq int, w []float32) {
	dk, n := r.HeadDimK, r.N
	tr, tc := rowTileRows, rowTileCols
	for j0 := 0; j0 < n; j0 += tr {
		nr := min(tr, n-j0)
		k := r.K[j0*r.Stride : (j0+nr-1)*r.Stride+dk]
		for i0 := 0; i0 < nq; i0 += tc {
			nc := min(tc, nq-i0)
			rowTile(dk, k, r.Stride, nr, qs[i0*dk:(i0+nc)*dk], dk, nc, w[i0*n+j0:], n)
		}
	}
}

// rowValuesTiled sets out[i·HeadDimV+d] to Σ_j w[i·N+j]·V_j[d] as tile
// products: vt receives the values transposed, a row of N positions for
// each of the HeadDimV dimensions, the tile's weight rows; each query's
// weights are its activation columns.
func rowValuesTiled(r Rows, w []float32, nq int, out, vt []float32) {
	dv, n := r.HeadDimV, r.N
	for j := range n {
		for d, x := range r.V[j*r.Stride : j*r.Stride+dv] {
			vt[d*n+j] = x
		}
	}
	tr, tc := rowTileRows, rowTileCols
	for d0 := 0; d0 < dv; d0 += tr {
		nr := min(tr, dv-d0)
		v := vt[d0*n : (d0+nr)*n]
		for i0 := 0; i0 < nq; i0 += tc {
			nc := min(tc, nq-i0)
			rowTile(n, v, n, nr, w[i0*n:(i0+nc)*n], n, nc, out[i0*dv+d0:], dv)
		}
	}
}

// rowsFit reports whether n rows of d floats, stride apart, fit in size
// floats, without computing (n−1)·stride, which a hostile stride could
// overflow.
func rowsFit(size, d, n, stride int) bool {
	if d > size {
		return false
	}
	return n == 1 || stride == 0 || n-1 <= (size-d)/stride
}

// axpyF32 adds a·x to y (len(x) ≥ len(y)).
func axpyF32(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}
