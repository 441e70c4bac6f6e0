package kv

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// seqCase is a cache shape with a full and a windowed layer, for tests that
// compare two caches fed the same tokens.
var seqCase = Config{Layers: 2, KVHeads: 2, HeadDimK: 8, HeadDimV: 6, Windows: []int{0, 5}}

// seqCaseFor is seqCase of type typ; Int4 takes head sizes of whole q4_0
// blocks (64: keys and values rotated) and 32 (not rotated).
func seqCaseFor(typ Type) Config {
	cfg := seqCase
	cfg.Type = typ
	if typ == Int4 {
		cfg.HeadDimK, cfg.HeadDimV = 64, 32
	}
	return cfg
}

// token is one token's key, value and query for every layer.
type token struct{ k, v, q [][]float32 }

func randTokens(r *rand.Rand, cfg Config, heads, n int) []token {
	toks := make([]token, n)
	for i := range toks {
		for range cfg.Layers {
			toks[i].k = append(toks[i].k, randVec(r, cfg.KVHeads*cfg.HeadDimK, 1))
			toks[i].v = append(toks[i].v, randVec(r, cfg.KVHeads*cfg.HeadDimV, 1))
			toks[i].q = append(toks[i].q, randVec(r, heads*cfg.HeadDimK, 1))
		}
	}
	return toks
}

// step stores tok at pos in every layer of c and returns every layer's
// attention output for it.
func step(t *testing.T, c *Cache, tok token, pos, heads int) [][]float32 {
	t.Helper()
	p := AttnParams{Heads: heads, Scale: 0.3}
	var outs [][]float32
	for l := range c.cfg.Layers {
		if err := c.Store(l, pos, tok.k[l], tok.v[l]); err != nil {
			t.Fatalf("store layer %d pos %d: %v", l, pos, err)
		}
		out := make([]float32, heads*c.cfg.HeadDimV)
		if err := c.Attend(l, pos, tok.q[l], out, p, 0, heads, make([]float32, c.cfg.Cells*heads)); err != nil {
			t.Fatalf("attend layer %d pos %d: %v", l, pos, err)
		}
		outs = append(outs, out)
	}
	return outs
}

// filled is a cache of seqCase with cells cells holding n random tokens
// drawn from seed, and the tokens.
func filled(t *testing.T, cells int, seed uint64, n int) (*Cache, []token) {
	t.Helper()
	cfg := seqCase
	cfg.Cells = cells
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	toks := randTokens(rand.New(rand.NewPCG(seed, seed+1)), cfg, 2, n)
	for pos, tok := range toks {
		step(t, c, tok, pos, 2)
	}
	return c, toks
}

func TestGrowKeepsEverything(t *testing.T) {
	for _, typ := range []Type{F16, Int8, Int4} {
		t.Run(typ.String(), func(t *testing.T) {
			const n, heads = 40, 4
			cfg := seqCaseFor(typ)
			cfg.Cells = 64
			whole, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Initial = 3
			grown, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if grown.Cells() != 3 || grown.MaxCells() != 64 {
				t.Fatalf("Cells %d MaxCells %d, want 3 and 64", grown.Cells(), grown.MaxCells())
			}
			toks := randTokens(rand.New(rand.NewPCG(1, 2)), cfg, heads, n)
			grows := 0
			for pos, tok := range toks {
				if pos == grown.Cells() {
					if err := grown.Store(0, pos, tok.k[0], tok.v[0]); !errors.Is(err, ErrFull) {
						t.Fatalf("store at capacity %d: err = %v, want ErrFull", pos, err)
					}
					next := min(2*grown.Cells(), grown.MaxCells())
					added, _ := grown.GrowBytes(next)
					before := grown.Bytes()
					if err := grown.Grow(next); err != nil {
						t.Fatal(err)
					}
					grows++
					if grown.Bytes()-before != added {
						t.Errorf("grow to %d added %d bytes, GrowBytes said %d", next, grown.Bytes()-before, added)
					}
				}
				a, b := step(t, whole, tok, pos, heads), step(t, grown, tok, pos, heads)
				for l := range a {
					if !slices.Equal(a[l], b[l]) {
						t.Fatalf("pos %d layer %d: grown cache gives %v, whole cache %v", pos, l, b[l], a[l])
					}
				}
			}
			if grows != 4 { // 3 → 6 → 12 → 24 → 48
				t.Errorf("%d grows, want 4", grows)
			}
			// The windowed layer stopped at its ring of 5 cells.
			cfg.Initial = 48
			same, _ := New(cfg)
			if grown.Bytes() != same.Bytes() || grown.layers[1].cells != 5 {
				t.Errorf("grown to 48 cells: %d bytes (ring %d cells), New with 48: %d", grown.Bytes(), grown.layers[1].cells, same.Bytes())
			}
		})
	}
}

func TestGrowLimits(t *testing.T) {
	cfg := seqCase
	cfg.Cells, cfg.Initial = 16, 4
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Grow(17); !errors.Is(err, ErrFull) {
		t.Errorf("grow past MaxCells: err = %v, want ErrFull", err)
	}
	b := c.Bytes()
	if err := c.Grow(2); err != nil || c.Cells() != 4 || c.Bytes() != b {
		t.Errorf("grow to fewer cells: err %v, %d cells, %d bytes", err, c.Cells(), c.Bytes())
	}
	if added, tr := c.GrowBytes(16); added != c.cfg.layerBytes(0, 12)+c.cfg.layerBytes(1, 1) || tr != c.cfg.layerBytes(0, 4) {
		t.Errorf("GrowBytes(16) = %d, %d", added, tr)
	}
	cfg.Initial = -1
	if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative Initial: err = %v", err)
	}
}

func TestTouch(t *testing.T) {
	for _, typ := range []Type{Int8, Int4} {
		cfg := seqCaseFor(typ)
		cfg.Cells = 3000
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		one := make([]float32, 2*cfg.HeadDimK)
		one[0] = 1
		if err := c.Store(0, 0, one, one[:2*cfg.HeadDimV]); err != nil {
			t.Fatal(err)
		}
		b := c.Bytes()
		c.Touch()
		if c.Len() != 0 || c.Bytes() != b {
			t.Errorf("%v: after Touch: Len %d, Bytes %d (was %d)", typ, c.Len(), c.Bytes(), b)
		}
		// Touch writes one element a page: Int8's one non-zero code is
		// the first element; Int4's stored row is non-zero throughout
		// (zero is code 8), so only its first byte is checked.
		if slices.ContainsFunc(c.layers[0].k8, func(x int8) bool { return x != 0 }) ||
			typ == Int4 && c.layers[0].k4[0] != 0 {
			t.Errorf("%v: Touch left non-zero keys", typ)
		}
	}
}

// TestGrowAllocsNothingAfter checks that Store and Attend stay free of
// allocations on a grown cache.
func TestGrowAllocsNothingAfter(t *testing.T) {
	for _, typ := range []Type{F16, Int8, Int4} {
		cfg := seqCaseFor(typ)
		cfg.Cells, cfg.Initial = 64, 2
		c, _ := New(cfg)
		toks := randTokens(rand.New(rand.NewPCG(3, 4)), cfg, 2, 1)
		if err := c.Grow(40); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 2*cfg.HeadDimV)
		sc := make([]float32, 64)
		pos := 0
		allocs := testing.AllocsPerRun(20, func() {
			for l := range 2 {
				if err := c.Store(l, pos, toks[0].k[l], toks[0].v[l]); err != nil {
					t.Fatal(err)
				}
				if err := c.Attend(l, pos, toks[0].q[l], out, AttnParams{Heads: 2, Scale: 1}, 0, 2, sc); err != nil {
					t.Fatal(err)
				}
			}
			pos++
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per step", typ, allocs)
		}
	}
}
