package kv

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refALiBiSlopes is each of heads query heads' ALiBi slope for maximum
// bias maxBias, as ggml's soft_max derives them: with n the largest power
// of 2 not above heads, 2^(−maxBias·(h+1)/n) for the first n heads and
// the odd powers 2^(−maxBias/2·(2(h−n)+1)/n) past them.
func refALiBiSlopes(heads int, maxBias float64) []float32 {
	n := 1
	for 2*n <= heads {
		n *= 2
	}
	out := make([]float32, heads)
	for h := range out {
		if h < n {
			out[h] = float32(math.Exp2(-maxBias * float64(h+1) / float64(n)))
		} else {
			out[h] = float32(math.Exp2(-maxBias / 2 * float64(2*(h-n)+1) / float64(n)))
		}
	}
	return out
}

// TestAttendALiBi checks ALiBi's bias, −slope·|query − position| on the
// scaled scores, against refAttend in float64: causally (each token up to
// itself), over a whole text with Attend (each token at the last position,
// its own position the Query), with AttendQueries (one head's tokens
// together, the same bits as Attend) and in a windowed layer whose ring
// wraps (the query inside its window), for head counts with and without
// slopes past the largest power of 2 (12: four take m1's odd powers), in
// every cache type. A bias of the key position alone, or of the signed
// distance, would miss the reference on the tokens before the last.
func TestAttendALiBi(t *testing.T) {
	const dk, dv, n = 32, 32, 45
	for _, typ := range []Type{F16, Int8, Int4} {
		for _, hs := range []struct{ heads, kvHeads int }{{1, 1}, {4, 2}, {8, 8}, {12, 4}, {12, 12}} {
			t.Run(fmt.Sprintf("%v/heads%d-kv%d", typ, hs.heads, hs.kvHeads), func(t *testing.T) {
				testAttendALiBi(t, typ, hs.heads, hs.kvHeads, dk, dv, n)
			})
		}
	}
}

func testAttendALiBi(t *testing.T, typ Type, heads, kvHeads, dk, dv, n int) {
	// Layer 1 keeps a window of 16 positions in a ring that wraps: the
	// distances still run from the first position the query sees.
	const window = 16
	c, err := New(Config{Layers: 2, KVHeads: kvHeads, HeadDimK: dk, HeadDimV: dv, Cells: n, Type: typ, Windows: []int{0, window}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(heads), uint64(typ)))
	toks := make([]refToken, n)
	qs := make([][]float32, n)
	// The smallest slopes (12 heads: 2^−8) leave far positions weight;
	// the largest (one head: 2^−8 too; 4: 1/4) mostly the nearest.
	p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(float64(dk))), ALiBi: refALiBiSlopes(heads, 8)}
	tol := 1e-5
	if typ == Int4 {
		tol = 1e-4 // the rotation's float32 sums
	}
	out := make([]float32, heads*dv)
	scratch := make([]float32, heads*n)
	checkFrom := func(what string, i, lo, pos int) {
		t.Helper()
		for h := range heads {
			want, bound := refAttend(toks, lo, pos, qs[i], p, kvHeads, dk, dv, h, typ == F16, typ == F16)
			for j, x := range want {
				if got := out[h*dv+j]; math.Abs(float64(got)-x) > tol+bound[j] {
					t.Fatalf("%s: token %d head %d out[%d] = %v, want %v ± %v", what, i, h, j, got, x, tol+bound[j])
				}
			}
		}
	}
	check := func(what string, i, pos int) { t.Helper(); checkFrom(what, i, 0, pos) }
	for i := range n {
		k, v := randVec(r, kvHeads*dk, 2), randVec(r, kvHeads*dv, 1)
		for l := range 2 {
			if err := c.Store(l, i, k, v); err != nil {
				t.Fatal(err)
			}
		}
		toks[i] = newRefToken(typ, k, v, kvHeads)
		qs[i] = randVec(r, heads*dk, 2)
		// The query sits inside what it sees, not at its end (as in a
		// non-causal symmetric window): the distances run both ways, so
		// counting them from the wrong position would not cancel in the
		// softmax as a shift of every score alike does.
		p.Query = max(0, i-5)
		if err := c.Attend(1, i, qs[i], out, p, 0, heads, scratch); err != nil {
			t.Fatal(err)
		}
		checkFrom("window", i, max(0, i-window+1), i)
	}
	for i := range n {
		p.Query = i
		if err := c.Attend(0, i, qs[i], out, p, 0, heads, scratch); err != nil {
			t.Fatal(err)
		}
		check("causal", i, i)
		if err := c.Attend(0, n-1, qs[i], out, p, 0, heads, scratch); err != nil {
			t.Fatal(err)
		}
		check("whole text", i, n-1)
	}

	// AttendQueries of one head's tokens, in blocks as a non-causal pass
	// gives them, with room for a block together and for one at a time.
	const block = 5
	for _, room := range []int{block * n, n} {
		for h := range heads {
			g := h / (heads / kvHeads)
			for t0 := 0; t0 < n; t0 += block {
				t1 := min(n, t0+block)
				q := make([]float32, 0, (t1-t0)*dk)
				for i := t0; i < t1; i++ {
					q = append(q, qs[i][h*dk:(h+1)*dk]...)
				}
				got := make([]float32, (t1-t0)*dv)
				pq := p
				pq.Query, pq.Head = t0, h
				if err := c.AttendQueries(0, n-1, g, q, got, pq, make([]float32, room)); err != nil {
					t.Fatal(err)
				}
				for i := t0; i < t1; i++ {
					p.Query = i
					if err := c.Attend(0, n-1, qs[i], out, p, 0, heads, scratch); err != nil {
						t.Fatal(err)
					}
					for j := range dv {
						if a, b := got[(i-t0)*dv+j], out[h*dv+j]; math.Float32bits(a) != math.Float32bits(b) {
							t.Fatalf("room %d: token %d head %d out[%d]: %v together, %v alone", room, i, h, j, a, b)
						}
					}
				}
			}
		}
	}
}

// TestAttendALiBiErrors: slopes that do not fit the heads or are not
// numbers, ALiBi beside a soft-cap or sinks, a negative query position,
// and an AttendQueries head outside the KV head are refused.
func TestAttendALiBiErrors(t *testing.T) {
	const heads, kvHeads, dk, n = 4, 2, 32, 8
	c, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: dk, HeadDimV: dk, Cells: n, Type: F16})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		if err := c.Store(0, i, randVec(r, kvHeads*dk, 1), randVec(r, kvHeads*dk, 1)); err != nil {
			t.Fatal(err)
		}
	}
	ok := AttnParams{Heads: heads, Scale: 1, ALiBi: refALiBiSlopes(heads, 8)}
	for _, tc := range []struct {
		name string
		edit func(p *AttnParams)
	}{
		{"three slopes", func(p *AttnParams) { p.ALiBi = p.ALiBi[:3] }},
		{"NaN slope", func(p *AttnParams) { p.ALiBi = []float32{0.5, float32(math.NaN()), 0.1, 0.1} }},
		{"infinite slope", func(p *AttnParams) { p.ALiBi = []float32{0.5, float32(math.Inf(1)), 0.1, 0.1} }},
		{"softcap", func(p *AttnParams) { p.Softcap = 30 }},
		{"sinks", func(p *AttnParams) { p.Sinks = make([]float32, heads) }},
		{"negative query", func(p *AttnParams) { p.Query = -1 }},
	} {
		p := ok
		tc.edit(&p)
		q, out := make([]float32, heads*dk), make([]float32, heads*dk)
		if err := c.Attend(0, n-1, q, out, p, 0, heads, make([]float32, heads*n)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Attend: %v, want ErrInvalid", tc.name, err)
		}
	}
	// One query head cannot share two KV heads.
	one := AttnParams{Heads: 1, Scale: 1, ALiBi: []float32{0.5}}
	if err := c.AttendQueries(0, n-1, 0, make([]float32, dk), make([]float32, dk), one, make([]float32, n)); !errors.Is(err, ErrInvalid) {
		t.Errorf("AttendQueries of one query head over two KV heads: %v, want ErrInvalid", err)
	}
	for _, h := range []int{-1, 2, heads} { // head 2 reads KV head 1, not 0
		p := ok
		p.Head = h
		if err := c.AttendQueries(0, n-1, 0, make([]float32, dk), make([]float32, dk), p, make([]float32, n)); !errors.Is(err, ErrInvalid) {
			t.Errorf("AttendQueries of head %d over KV head 0: %v, want ErrInvalid", h, err)
		}
	}
}

// TestAttendRowsALiBi checks AttendRows, attention over float32 rows
// outside the cache, against refAttend with unrounded keys and values:
// with and without ALiBi, over a whole text (blocks of one head's tokens,
// the same bits as each token alone) and causally (each token over the
// rows up to its own), for a text starting past position 0 (a packed
// pass's second text), over head counts with and without slopes past the
// largest power of 2.
func TestAttendRowsALiBi(t *testing.T) {
	const dk, dv, n, from = 32, 24, 41, 7
	for _, hs := range []struct{ heads, kvHeads int }{{1, 1}, {4, 2}, {8, 8}, {12, 4}, {12, 12}} {
		for _, alibi := range []bool{false, true} {
			t.Run(fmt.Sprintf("heads%d-kv%d/alibi%v", hs.heads, hs.kvHeads, alibi), func(t *testing.T) {
				heads, kvHeads := hs.heads, hs.kvHeads
				r := rand.New(rand.NewPCG(uint64(heads), uint64(kvHeads)))
				kDim, vDim := kvHeads*dk, kvHeads*dv
				stride := heads*dk + kDim + vDim + 3 // q, k, v and a gap, as a pass's rows
				buf := make([]float32, (from+n)*stride)
				toks := make([]refToken, from+n)
				qs := make([][]float32, from+n)
				for i := from; i < from+n; i++ {
					q, k, v := randVec(r, heads*dk, 2), randVec(r, kDim, 2), randVec(r, vDim, 1)
					copy(buf[i*stride:], q)
					copy(buf[i*stride+heads*dk:], k)
					copy(buf[i*stride+heads*dk+kDim:], v)
					toks[i] = refToken{k: k, v: v}
					for _, x := range k {
						toks[i].kc = append(toks[i].kc, float64(x))
					}
					for _, x := range v {
						toks[i].vc = append(toks[i].vc, float64(x))
					}
					qs[i] = q
				}
				p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(dk)), From: from}
				if alibi {
					p.ALiBi = refALiBiSlopes(heads, 8)
				}
				rows := func(g, last int) Rows {
					at := from * stride
					return Rows{K: buf[at+heads*dk+g*dk:], V: buf[at+heads*dk+kDim+g*dv:], Stride: stride, N: last - from + 1, HeadDimK: dk, HeadDimV: dv}
				}
				scratch := make([]float32, 4*n)
				for h := range heads {
					g := h / (heads / kvHeads)
					p.Head = h
					alone := make([]float32, dv)
					for t0 := from; t0 < from+n; t0 += 4 {
						t1 := min(from+n, t0+4)
						var q []float32
						for i := t0; i < t1; i++ {
							q = append(q, qs[i][h*dk:(h+1)*dk]...)
						}
						got := make([]float32, (t1-t0)*dv)
						p.Query = t0
						if err := AttendRows(rows(g, from+n-1), q, got, p, scratch); err != nil {
							t.Fatal(err)
						}
						for i := t0; i < t1; i++ {
							p.Query = i
							want, _ := refAttend(toks, from, from+n-1, qs[i], p, kvHeads, dk, dv, h, false, false)
							if err := AttendRows(rows(g, from+n-1), qs[i][h*dk:(h+1)*dk], alone, p, scratch); err != nil {
								t.Fatal(err)
							}
							for j, x := range want {
								a, b := got[(i-t0)*dv+j], alone[j]
								if math.Abs(float64(a)-x) > 1e-5 || math.Float32bits(a) != math.Float32bits(b) {
									t.Fatalf("token %d head %d out[%d] = %v (%v alone), want %v", i, h, j, a, b, x)
								}
							}
							// Causally: the rows up to the token's own.
							want, _ = refAttend(toks, from, i, qs[i], p, kvHeads, dk, dv, h, false, false)
							if err := AttendRows(rows(g, i), qs[i][h*dk:(h+1)*dk], alone, p, scratch); err != nil {
								t.Fatal(err)
							}
							for j, x := range want {
								if math.Abs(float64(alone[j])-x) > 1e-5 {
									t.Fatalf("causal: token %d head %d out[%d] = %v, want %v", i, h, j, alone[j], x)
								}
							}
						}
					}
				}
			})
		}
	}
}

// TestAttendRowsErrors: rows that do not fit their slices, queries not
// whole, too little scratch and sinks are refused.
func TestAttendRowsErrors(t *testing.T) {
	const dk, n = 8, 5
	buf := make([]float32, n*2*dk)
	ok := Rows{K: buf, V: buf[dk:], Stride: 2 * dk, N: n, HeadDimK: dk, HeadDimV: dk}
	p := AttnParams{Heads: 1, Scale: 1}
	q, out, scratch := make([]float32, dk), make([]float32, dk), make([]float32, n)
	if err := AttendRows(ok, q, out, p, scratch); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		r       Rows
		q, out  []float32
		scratch []float32
		p       AttnParams
		want    error
	}{
		{"six rows", Rows{K: buf, V: buf[dk:], Stride: 2 * dk, N: n + 1, HeadDimK: dk, HeadDimV: dk}, q, out, make([]float32, n+1), p, ErrInvalid},
		{"stride overflowing", Rows{K: buf, V: buf[dk:], Stride: math.MaxInt / 2, N: n, HeadDimK: dk, HeadDimV: dk}, q, out, scratch, p, ErrInvalid},
		{"no rows", Rows{K: buf, V: buf[dk:], Stride: 2 * dk, HeadDimK: dk, HeadDimV: dk}, q, out, scratch, p, ErrInvalid},
		{"no head size", Rows{K: buf, V: buf[dk:], Stride: 2 * dk, N: n, HeadDimV: dk}, q, out, scratch, p, ErrInvalid},
		{"half a query", ok, q[:dk/2], out, scratch, p, ErrInvalid},
		{"two queries, one output", ok, make([]float32, 2*dk), out, make([]float32, 2*n), p, ErrInvalid},
		{"short scratch", ok, q, out, scratch[:n-1], p, ErrScratch},
		{"sinks", ok, q, out, scratch, AttnParams{Heads: 1, Scale: 1, Sinks: []float32{0}}, ErrInvalid},
		{"ALiBi head", ok, q, out, scratch, AttnParams{Heads: 1, Scale: 1, ALiBi: []float32{0.5}, Head: 1}, ErrInvalid},
	} {
		if err := AttendRows(tc.r, tc.q, tc.out, tc.p, tc.scratch); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// BenchmarkAttendALiBi times a block of four tokens of one jina-bert-v2
// base head (64 wide, 12 heads) over a 2048-token text, with and without
// ALiBi's bias: over the pass's float32 rows (AttendRows, as jina-bert-v2
// runs) and over an F16 cache (AttendQueries). The difference is the
// cost of the Go pass that adds the bias between the scores and the
// softmax.
func BenchmarkAttendALiBi(b *testing.B) {
	const heads, dim, n, block = 12, 64, 2048, 4
	r := rand.New(rand.NewPCG(1, 2))
	stride := 3 * heads * dim
	buf := randVec(r, n*stride, 1)
	c, err := New(Config{Layers: 1, KVHeads: heads, HeadDimK: dim, HeadDimV: dim, Cells: n, Type: F16})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.StoreBatch(0, 0, n, buf[heads*dim:], buf[2*heads*dim:], stride, nil); err != nil {
		b.Fatal(err)
	}
	q, out, scratch := randVec(r, block*dim, 1), make([]float32, block*dim), make([]float32, block*n)
	rows := Rows{K: buf[heads*dim:], V: buf[2*heads*dim:], Stride: stride, N: n, HeadDimK: dim, HeadDimV: dim}
	for _, alibi := range []bool{false, true} {
		p := AttnParams{Heads: heads, Scale: 0.125, Query: n / 2}
		if alibi {
			p.ALiBi = refALiBiSlopes(heads, 8)
		}
		b.Run(fmt.Sprintf("rows/alibi%v", alibi), func(b *testing.B) {
			for b.Loop() {
				if err := AttendRows(rows, q, out, p, scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("f16/alibi%v", alibi), func(b *testing.B) {
			for b.Loop() {
				if err := c.AttendQueries(0, n-1, 0, q, out, p, scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
