package kv

import (
	"fmt"
	"unsafe"

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
// cache's, in float32 with no F16 rounding; the K·Q products are
// quant's F32 dot product (assembly where the CPU has it) and the
// weighted sum of values a float32 Go loop, each row read once for all of
// the queries. scratch must hold a weight a position for each
// query. AttendRows does not allocate.
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
	for j := range n {
		k := r.K[j*r.Stride : j*r.Stride+dk]
		for i := range nq {
			w[i*n+j] = rowDot(qs[i*dk:(i+1)*dk], k)
		}
	}
	toWeights(w, n, nq, p, queries{h: p.Head, pos: p.Query, tokens: true}, p.From, false)
	clear(out)
	for j := range n {
		v := r.V[j*r.Stride : j*r.Stride+dv]
		for i := range nq {
			axpyF32(out[i*dv:(i+1)*dv], w[i*n+j], v)
		}
	}
	return nil
}

// rowDot is AttendRows' K·Q product: quant's fastest F32 dot product
// when it is assembly (AVX2, AVX-512, NEON: a jina-bert-v2 pass spent
// 43 % of its time in dotF32), else dotF32, faster than quant's pure-Go
// one, which decodes bytes.
var rowDot = pickRowDot()

func pickRowDot() func(a, b []float32) float32 {
	ks := quant.Kernels(quant.F32)
	if len(ks) < 2 {
		return dotF32
	}
	dot := ks[len(ks)-1].Dot
	return func(a, b []float32) float32 {
		return dot(len(a), f32Bytes(a), f32Bytes(b[:len(a)]))
	}
}

// f32Bytes is x's memory as bytes, the rows quant's dot products read
// (little-endian float32, as every architecture kv runs on stores them).
func f32Bytes(x []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x))
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

// dotF32 is Σ a·b in float32 (len(b) ≥ len(a)), in four independent sums
// so that the products do not wait on one another.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
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
