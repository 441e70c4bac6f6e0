package kv

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestAttendMatchesReference(t *testing.T) {
	const (
		heads   = 8
		kvHeads = 2
		dk      = 32
		dv      = 24
		cells   = 301
		window  = 64
	)
	// gpt-oss's sinks: below, around and above the scores (of order 1).
	sinks := []float32{-3, 0.5, 4, -0.25, 1, 2, -1, 6}
	for _, typ := range []Type{F16, Int8} {
		for _, win := range []int{0, window} {
			for _, extra := range []struct {
				name string
				p    AttnParams
			}{{"plain", AttnParams{}}, {"softcap2", AttnParams{Softcap: 2}}, {"sinks", AttnParams{Sinks: sinks}}} {
				for _, batch := range []int{1, 16} {
					name := fmt.Sprintf("%v/window%d/%s/batch%d", typ, win, extra.name, batch)
					t.Run(name, func(t *testing.T) {
						testAttendReference(t, typ, win, extra.p, batch, heads, kvHeads, dk, dv, cells, 0)
					})
				}
			}
		}
	}
}

// testAttendReference runs Attend over a two-layer cache and compares every
// output with refAttend over the rows the cache holds. recent is the Int4
// cache's Config.Recent: positions then come from F16 (refRecentRow) where
// the cache still holds them so, which a batch of stores can cut short.
// p gives the soft-cap or the sinks; testAttendReference sets its heads
// and scale.
func testAttendReference(t *testing.T, typ Type, win int, p AttnParams, batch, heads, kvHeads, dk, dv, cells, recent int) {
	// Layer 0 is full; layer 1 uses win (full too when win is 0), so both
	// kinds share one cache as they do in Gemma 2.
	c, err := New(Config{Layers: 2, KVHeads: kvHeads, HeadDimK: dk, HeadDimV: dv, Cells: cells, Type: typ, Windows: []int{0, win}, Batch: batch, Recent: recent})
	if err != nil {
		t.Fatal(err)
	}
	recent = c.recent // at most an eighth of the cells
	r := rand.New(rand.NewPCG(uint64(win), uint64(batch)))
	p.Heads, p.Scale = heads, float32(1/math.Sqrt(float64(dk)))
	const tol = 1e-5 // float32 accumulation; F16 weight rounding is in the bound
	toks := make([]refToken, cells)
	f16s := make([]refToken, cells) // with recent: the rows as F16 slots hold them
	seen := make([]refToken, cells)
	qs := make([][]float32, cells)
	scratch := make([]float32, cells)
	out := make([]float32, heads*dv)
	split := make([]float32, heads*dv)
	for chunk := 0; chunk < cells; chunk += batch {
		end := min(chunk+batch, cells)
		for pos := chunk; pos < end; pos++ {
			toks[pos] = newRefToken(typ, randVec(r, kvHeads*dk, 2), randVec(r, kvHeads*dv, 1), kvHeads)
			if recent > 0 {
				f16s[pos] = newRecentRefToken(toks[pos].k, toks[pos].v, kvHeads)
			}
			qs[pos] = randVec(r, heads*dk, 2)
			for l := range 2 {
				if err := c.Store(l, pos, toks[pos].k, toks[pos].v); err != nil {
					t.Fatal(err)
				}
			}
		}
		for pos := chunk; pos < end; pos++ {
			// Every position is stored, but checking them all against the
			// reference makes -race slow; a spread including the first few,
			// the window edge and the last ones covers the cases.
			if pos > 8 && pos%7 != 0 && pos < cells-2 && (pos < 62 || pos > 66) {
				continue
			}
			for l, w := range []int{0, win} {
				lo := 0
				if w > 0 {
					lo = max(0, pos-w+1)
				}
				if err := c.Attend(l, pos, qs[pos], out, p, 0, heads, scratch[:pos-lo+1]); err != nil {
					t.Fatalf("layer %d pos %d: %v", l, pos, err)
				}
				copy(seen, toks)
				if recent > 0 {
					// The sinks, and the newest positions whose slots the
					// chunk's later stores have not taken.
					for i := lo; i <= pos; i++ {
						if i < recentSinks || i > pos-recent && i > end-1-recent {
							seen[i] = f16s[i]
						}
					}
				}
				for h := range heads {
					want, bound := refAttend(seen, lo, pos, qs[pos], p, kvHeads, dk, dv, h, typ == F16, typ == F16)
					for j, x := range want {
						if got := out[h*dv+j]; math.Abs(float64(got)-x) > tol+bound[j] {
							t.Fatalf("layer %d pos %d head %d out[%d] = %v, want %v ± %v", l, pos, h, j, got, x, tol+bound[j])
						}
					}
				}
				// Splitting the head range must give the same bits. The call
				// above had exactly the scratch one head needs; these have
				// room for whole groups of heads while pos is small, so the
				// grouped order is checked against the per-head one.
				clear(split)
				if err := c.Attend(l, pos, qs[pos], split, p, 0, 3, scratch); err != nil {
					t.Fatal(err)
				}
				if err := c.Attend(l, pos, qs[pos], split, p, 3, heads, scratch); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out, split) {
					t.Fatalf("layer %d pos %d: heads [0,3)+[3,%d) differ from [0,%d)", l, pos, heads, heads)
				}
			}
		}
	}
}

// TestAttendRoundsQueryToF16 uses a query element whose F16 rounding moves
// the one weight the output exposes by several F16 ulps.
func TestAttendRoundsQueryToF16(t *testing.T) {
	c, err := New(Config{Layers: 1, KVHeads: 1, HeadDimK: 4, HeadDimV: 1, Cells: 2})
	if err != nil {
		t.Fatal(err)
	}
	toks := []refToken{
		newRefToken(F16, []float32{8, 0, 0, 0}, []float32{0}, 1),
		newRefToken(F16, []float32{0, 0, 0, 0}, []float32{1}, 1),
	}
	for pos, tk := range toks {
		if err := c.Store(0, pos, tk.k, tk.v); err != nil {
			t.Fatal(err)
		}
	}
	q := []float32{1 + 0x1p-11 + 0x1p-13, 0, 0, 0} // F16: 1+2⁻¹⁰
	p := AttnParams{Heads: 1, Scale: 1}
	out := make([]float32, 1)
	if err := c.Attend(0, 1, q, out, p, 0, 1, make([]float32, 2)); err != nil {
		t.Fatal(err)
	}
	w, _ := refAttend(toks, 0, 1, q, p, 1, 4, 1, 0, true, true)
	u, _ := refAttend(toks, 0, 1, q, p, 1, 4, 1, 0, false, true)
	want, unrounded := float32(w[0]), float32(u[0])
	if want == unrounded {
		t.Fatalf("test case does not separate rounded from unrounded Q (%v)", want)
	}
	if out[0] != want {
		t.Errorf("out = %v, want %v (unrounded Q would give %v)", out[0], want, unrounded)
	}
}

// TestAttendRoundsWeightsToF16 reads the weights back through one-hot
// values: each output element is exactly one weight.
func TestAttendRoundsWeightsToF16(t *testing.T) {
	const n = 40
	c, err := New(Config{Layers: 1, KVHeads: 1, HeadDimK: 8, HeadDimV: n, Cells: n})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	toks := make([]refToken, n)
	for pos := range toks {
		v := make([]float32, n)
		v[pos] = 1
		toks[pos] = newRefToken(F16, randVec(r, 8, 1), v, 1)
		if err := c.Store(0, pos, toks[pos].k, v); err != nil {
			t.Fatal(err)
		}
	}
	q := randVec(r, 8, 1)
	p := AttnParams{Heads: 1, Scale: 0.5}
	out := make([]float32, n)
	if err := c.Attend(0, n-1, q, out, p, 0, 1, make([]float32, n)); err != nil {
		t.Fatal(err)
	}
	want, _ := refAttend(toks, 0, n-1, q, p, 1, 8, n, 0, true, false)
	var sum float64
	for i, w := range out {
		if roundFP16(w) != w {
			t.Errorf("weight %d = %v is not an F16 value", i, w)
		}
		if math.Abs(float64(w)-want[i]) > math.Abs(want[i])*0x1p-11 {
			t.Errorf("weight %d = %v, want %v within half an F16 ulp", i, w, want[i])
		}
		sum += float64(w)
	}
	if math.Abs(sum-1) > n*0x1p-11 {
		t.Errorf("weights sum to %v", sum)
	}
}

func TestAttendErrors(t *testing.T) {
	newCache := func(t *testing.T, win, batch, stored int) *Cache {
		c, err := New(Config{Layers: 1, KVHeads: 2, HeadDimK: 4, HeadDimV: 4, Cells: 16, Windows: []int{win}, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		for pos := range stored {
			if err := c.Store(0, pos, make([]float32, 8), make([]float32, 8)); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	p := AttnParams{Heads: 4, Scale: 1}
	q, out, scratch := make([]float32, 16), make([]float32, 16), make([]float32, 16)
	for _, tc := range []struct {
		name               string
		win, batch, stored int
		layer, pos, h0, h1 int
		p                  AttnParams
		q, out, scratch    []float32
		want               error
	}{
		{name: "ok", stored: 5, pos: 4, h1: 4, p: p, q: q, out: out, scratch: scratch},
		{name: "scratch", stored: 5, pos: 4, h1: 4, p: p, q: q, out: out, scratch: scratch[:4], want: ErrScratch},
		{name: "window scratch", win: 3, stored: 10, pos: 9, h1: 4, p: p, q: q, out: out, scratch: scratch[:3]},
		{name: "not stored", stored: 5, pos: 5, h1: 4, p: p, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "negative pos", stored: 5, pos: -1, h1: 4, p: p, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "layer", stored: 5, layer: 1, pos: 4, h1: 4, p: p, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "heads not multiple", stored: 5, pos: 4, h1: 3, p: AttnParams{Heads: 3}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "head range", stored: 5, pos: 4, h0: 2, h1: 5, p: p, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "reversed range", stored: 5, pos: 4, h0: 3, h1: 2, p: p, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "short q", stored: 5, pos: 4, h1: 4, p: p, q: q[:15], out: out, scratch: scratch, want: ErrInvalid},
		{name: "short out", stored: 5, pos: 4, h1: 4, p: p, q: q, out: out[:12], scratch: scratch, want: ErrInvalid},
		{name: "short q partial range ok", stored: 5, pos: 4, h1: 2, p: p, q: q[:8], out: out[:8], scratch: scratch},
		{name: "absurd heads", stored: 5, pos: 4, h1: math.MaxInt / 4, p: AttnParams{Heads: math.MaxInt / 2}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "negative softcap", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Softcap: -1}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "from", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, From: 2}, q: q, out: out, scratch: scratch[:3]},
		{name: "from at pos", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, From: 4}, q: q, out: out, scratch: scratch[:1]},
		{name: "from past pos", stored: 5, pos: 3, h1: 4, p: AttnParams{Heads: 4, Scale: 1, From: 4}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "sinks", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, Sinks: []float32{1, 2, 3, 4}}, q: q, out: out, scratch: scratch},
		{name: "sinks short", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, Sinks: []float32{1, 2, 3}}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "sink NaN", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, Sinks: []float32{1, float32(math.NaN()), 3, 4}}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "sink infinite", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, Sinks: []float32{1, 2, float32(math.Inf(1)), 4}}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "negative from", stored: 5, pos: 4, h1: 4, p: AttnParams{Heads: 4, Scale: 1, From: -1}, q: q, out: out, scratch: scratch, want: ErrInvalid},
		// Ring of 4 cells holds 6..9; position 5 would need 2..5.
		{name: "overwritten", win: 4, batch: 1, stored: 10, pos: 5, h1: 4, p: p, q: q, out: out, scratch: scratch, want: ErrInvalid},
		{name: "window ok", win: 4, batch: 1, stored: 10, pos: 9, h1: 4, p: p, q: q, out: out, scratch: scratch},
		// Batch 4: ring of 7 holds 3..9; position 6 needs 3..6.
		{name: "batched window ok", win: 4, batch: 4, stored: 10, pos: 6, h1: 4, p: p, q: q, out: out, scratch: scratch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, tc.win, tc.batch, tc.stored)
			err := c.Attend(tc.layer, tc.pos, tc.q, tc.out, tc.p, tc.h0, tc.h1, tc.scratch)
			if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestAttendConcurrentHeads runs two goroutines on disjoint head ranges, as
// a thread pool does; -race checks that they share nothing they write.
func TestAttendConcurrentHeads(t *testing.T) {
	c, err := New(Config{Layers: 1, KVHeads: 2, HeadDimK: 16, HeadDimV: 16, Cells: 32})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	for pos := range 32 {
		if err := c.Store(0, pos, randVec(r, 32, 1), randVec(r, 32, 1)); err != nil {
			t.Fatal(err)
		}
	}
	q := randVec(r, 8*16, 1)
	p := AttnParams{Heads: 8, Scale: 0.25}
	want := make([]float32, 8*16)
	if err := c.Attend(0, 31, q, want, p, 0, 8, make([]float32, 32)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 8*16)
	errs := make(chan error, 2)
	for _, hr := range [][2]int{{0, 5}, {5, 8}} {
		go func() {
			errs <- c.Attend(0, 31, q, got, p, hr[0], hr[1], make([]float32, 4*32))
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("concurrent halves differ from one call")
	}
}

func TestAttendAllocs(t *testing.T) {
	for _, typ := range []Type{F16, Int8, Int4} {
		cfg := Config{Layers: 1, KVHeads: 2, HeadDimK: 64, HeadDimV: 64, Cells: 1024, Type: typ, Windows: []int{16}}
		if typ == Int4 {
			cfg.Recent = 8 // the F16 slots' runs are closures
		}
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		k, v := randVec(r, 128, 1), randVec(r, 128, 1)
		q, out, scratch := randVec(r, 8*64, 1), make([]float32, 8*64), make([]float32, 64)
		p := AttnParams{Heads: 8, Scale: 0.125, Softcap: 50}
		pos := 0
		if a := testing.AllocsPerRun(100, func() {
			if err := c.Store(0, pos, k, v); err != nil {
				t.Fatal(err)
			}
			pos++
		}); a != 0 {
			t.Errorf("%v: Store allocates %v times", typ, a)
		}
		if a := testing.AllocsPerRun(100, func() {
			if err := c.Attend(0, pos-1, q, out, p, 0, 8, scratch); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%v: Attend allocates %v times", typ, a)
		}
	}
}

// BenchmarkAttend attends with every head of one layer at the last of ctx
// positions, in the shapes of an 8B Llama (32 query heads, 8 KV heads,
// head dim 128: four query heads a KV head) and of Gemma-2-9B (16, 8, 256:
// two). "min-scratch" passes the ctx floats the contract requires,
// "group-scratch" room for a KV head's query heads at once. The "-cold"
// shapes attend with 24 layers in turn, whose caches (0.2 GB and more) do
// not stay in the CPU's caches between visits, as in a model's decode,
// where the weights read between two visits evict them.
func BenchmarkAttend(b *testing.B) {
	for _, s := range []struct {
		name                        string
		layers, heads, kvHeads, dim int
	}{{"llama8b", 1, 32, 8, 128}, {"llama8b-cold", 24, 32, 8, 128}, {"gemma2", 1, 16, 8, 256}, {"gemma2-cold", 24, 16, 8, 256}} {
		for _, typ := range []Type{F16, Int8, Int4} {
			for _, ctx := range []int{512, 4096} {
				benchAttend(b, s.name, s.layers, s.heads, s.kvHeads, s.dim, typ, ctx)
			}
		}
	}
}

func benchAttend(b *testing.B, shape string, layers, heads, kvHeads, dim int, typ Type, ctx int) {
	c, err := New(Config{Layers: layers, KVHeads: kvHeads, HeadDimK: dim, HeadDimV: dim, Cells: ctx, Type: typ})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	k, v := make([]float32, kvHeads*dim), make([]float32, kvHeads*dim)
	for pos := range ctx {
		for i := range k {
			k[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for l := range layers {
			if err := c.Store(l, pos, k, v); err != nil {
				b.Fatal(err)
			}
		}
	}
	q, out := randVec(r, heads*dim, 1), make([]float32, heads*dim)
	p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(float64(dim)))}
	for _, sc := range []struct {
		name string
		n    int
	}{{"min-scratch", ctx}, {"group-scratch", heads / kvHeads * ctx}} {
		scratch := make([]float32, sc.n)
		b.Run(fmt.Sprintf("%s/%v/ctx%d/%s", shape, typ, ctx, sc.name), func(b *testing.B) {
			l := 0
			for b.Loop() {
				if err := c.Attend(l, ctx-1, q, out, p, 0, heads, scratch); err != nil {
					b.Fatal(err)
				}
				l = (l + 1) % layers
			}
		})
	}
}

// Attend's bound need not be the query's own position: a token of a
// stored batch attending at the batch's last position sees every token of
// it, those after it too — the non-causal attention of model's encoders,
// which is only this choice of pos. Each query gets the reference's
// attention over the whole batch, the first token's as the last's.
func TestAttendWholeBatch(t *testing.T) {
	const heads, kvHeads, dk, dv, n = 4, 2, 32, 32, 13
	for _, typ := range []Type{F16, Int8, Int4} {
		t.Run(typ.String(), func(t *testing.T) {
			c, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: dk, HeadDimV: dv, Cells: 16, Type: typ})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, uint64(typ)))
			stride := kvHeads * (dk + dv) // one token's k then v, side by side
			rows := make([]float32, n*stride)
			toks := make([]refToken, n)
			qs := make([][]float32, n)
			for i := range n {
				k, v := randVec(r, kvHeads*dk, 2), randVec(r, kvHeads*dv, 1)
				copy(rows[i*stride:], k)
				copy(rows[i*stride+kvHeads*dk:], v)
				toks[i] = newRefToken(typ, k, v, kvHeads)
				qs[i] = randVec(r, heads*dk, 2)
			}
			if err := c.StoreBatch(0, 0, n, rows, rows[kvHeads*dk:], stride, nil); err != nil {
				t.Fatal(err)
			}
			p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(dk))}
			out := make([]float32, heads*dv)
			scratch := make([]float32, heads*n)
			tol := 1e-5
			if typ == Int4 {
				tol = 1e-4 // the rotation's float32 sums
			}
			for i := range n {
				if err := c.Attend(0, n-1, qs[i], out, p, 0, heads, scratch); err != nil {
					t.Fatal(err)
				}
				for h := range heads {
					want, bound := refAttend(toks, 0, n-1, qs[i], p, kvHeads, dk, dv, h, typ == F16, typ == F16)
					for j, x := range want {
						if got := out[h*dv+j]; math.Abs(float64(got)-x) > tol+bound[j] {
							t.Fatalf("token %d head %d out[%d] = %v, want %v ± %v", i, h, j, got, x, tol+bound[j])
						}
					}
				}
			}

			// AttendQueries of one head's queries of several tokens gives
			// each the bits Attend gives it alone, with room for all of
			// them together or for one at a time.
			for _, room := range []int{5 * n, n} {
				for h := range heads {
					g := h / (heads / kvHeads)
					for t0 := 0; t0 < n; t0 += 5 {
						t1 := min(n, t0+5)
						q := make([]float32, 0, (t1-t0)*dk)
						for i := t0; i < t1; i++ {
							q = append(q, qs[i][h*dk:(h+1)*dk]...)
						}
						got := make([]float32, (t1-t0)*dv)
						if err := c.AttendQueries(0, n-1, g, q, got, p, make([]float32, room)); err != nil {
							t.Fatal(err)
						}
						for i := t0; i < t1; i++ {
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
			for _, bad := range []struct {
				g      int
				q, out []float32
			}{{-1, make([]float32, dk), make([]float32, dv)}, {kvHeads, make([]float32, dk), make([]float32, dv)},
				{0, make([]float32, dk+1), make([]float32, dv)}, {0, make([]float32, 2*dk), make([]float32, dv)}} {
				if err := c.AttendQueries(0, n-1, bad.g, bad.q, bad.out, p, scratch); !errors.Is(err, ErrInvalid) {
					t.Errorf("KV head %d, %d query and %d output floats: %v, want ErrInvalid", bad.g, len(bad.q), len(bad.out), err)
				}
			}
			ps := p
			ps.Sinks = make([]float32, p.Heads)
			if err := c.AttendQueries(0, n-1, 0, make([]float32, dk), make([]float32, dv), ps, scratch); !errors.Is(err, ErrInvalid) {
				t.Errorf("sinks in a non-causal pass: %v, want ErrInvalid", err)
			}
		})
	}
}

// TestAttendFrom packs a text after another in the cache: attending from
// its first position gives, causally and over the whole text, the bits
// the text gives alone at the cache's start (F16 and Int8 rows are
// stored each for itself; Int4 keeps its first positions in F16, so a
// text moved past them is not stored alike).
func TestAttendFrom(t *testing.T) {
	const heads, kvHeads, dk, dv, before, n = 4, 2, 32, 32, 7, 11
	for _, typ := range []Type{F16, Int8} {
		t.Run(typ.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, uint64(typ)))
			alone, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: dk, HeadDimV: dv, Cells: n, Type: typ})
			if err != nil {
				t.Fatal(err)
			}
			packed, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: dk, HeadDimV: dv, Cells: before + n, Type: typ})
			if err != nil {
				t.Fatal(err)
			}
			for pos := range before {
				if err := packed.Store(0, pos, randVec(r, kvHeads*dk, 2), randVec(r, kvHeads*dv, 1)); err != nil {
					t.Fatal(err)
				}
			}
			qs := make([][]float32, n)
			for i := range n {
				k, v := randVec(r, kvHeads*dk, 2), randVec(r, kvHeads*dv, 1)
				if err := alone.Store(0, i, k, v); err != nil {
					t.Fatal(err)
				}
				if err := packed.Store(0, before+i, k, v); err != nil {
					t.Fatal(err)
				}
				qs[i] = randVec(r, heads*dk, 2)
			}
			p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(dk))}
			pp := p
			pp.From = before
			a, b := make([]float32, heads*dv), make([]float32, heads*dv)
			scratch := make([]float32, heads*(before+n))
			for _, whole := range []bool{false, true} {
				for i := range n {
					pos := i
					if whole {
						pos = n - 1
					}
					if err := alone.Attend(0, pos, qs[i], a, p, 0, heads, scratch); err != nil {
						t.Fatal(err)
					}
					if err := packed.Attend(0, before+pos, qs[i], b, pp, 0, heads, scratch); err != nil {
						t.Fatal(err)
					}
					for j := range a {
						if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
							t.Fatalf("whole %v: token %d out[%d]: %v packed, %v alone", whole, i, j, b[j], a[j])
						}
					}
				}
				g := make([]float32, 0, n*dk)
				for i := range n {
					g = append(g, qs[i][:dk]...)
				}
				ga, gb := make([]float32, n*dv), make([]float32, n*dv)
				if err := alone.AttendQueries(0, n-1, 0, g, ga, p, scratch); err != nil {
					t.Fatal(err)
				}
				if err := packed.AttendQueries(0, before+n-1, 0, g, gb, pp, scratch); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ga, gb) {
					t.Fatal("AttendQueries: packed and alone differ")
				}
			}
		})
	}
}
