package kv

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// rotPairs rotates each dk-long vector of x by pos·θᵢ on adjacent pairs,
// θᵢ = 10000^(-2i/dk): a RoPE for tests.
func rotPairs(x []float32, dk, pos int) {
	for h := 0; h+dk <= len(x); h += dk {
		for i := 0; i < dk; i += 2 {
			a := float64(pos) * math.Pow(10000, -float64(i)/float64(dk))
			c, s := math.Cos(a), math.Sin(a)
			x0, x1 := float64(x[h+i]), float64(x[h+i+1])
			x[h+i] = float32(x0*c - x1*s)
			x[h+i+1] = float32(x0*s + x1*c)
		}
	}
}

// keyRow decodes the key of head h at pos in layer l (for Int4, rotated
// back to the model's basis).
func keyRow(c *Cache, l, h, pos int) []float32 {
	ly := &c.layers[l]
	dk := c.cfg.HeadDimK
	r := h*ly.cells + ly.cell(pos)
	out := make([]float32, dk)
	if c.cfg.Type == Int4 {
		rb := q4RowBytes(dk)
		dequantizeQ4(out, ly.k4[r*rb:(r+1)*rb])
		hadamard(out, ly.rotK)
		return out
	}
	for i := range out {
		if c.cfg.Type == F16 {
			out[i] = f16(ly.k16[r*dk+i])
		} else {
			out[i] = float32(ly.k8[r*dk+i]) * ly.ks[r]
		}
	}
	return out
}

// kept returns the sequence a shift of keep, drop leaves of toks.
func kept(toks []token, keep, drop int) []token {
	return append(slices.Clip(toks[:keep]), toks[keep+drop:]...)
}

// TestShiftMovesRows checks that without rotation the rows moved by Shift
// are exactly those a fresh cache of the kept tokens holds: full layers and
// an unwrapped ring against a fresh cache, a wrapped ring against the
// unshifted cache (its window keeps seeing the latest tokens).
func TestShiftMovesRows(t *testing.T) {
	const heads = 4
	for _, typ := range []Type{F16, Int8, Int4} {
		for _, tc := range []struct {
			name           string
			n, keep, drop  int
			windowWrapped  bool
			initial, cells int
		}{
			{"unwrapped ring", 5, 1, 2, false, 0, 32},
			{"keep none", 5, 0, 2, false, 0, 32},
			{"drop all but keep", 5, 2, 3, false, 0, 32},
			{"wrapped ring", 20, 2, 9, true, 0, 32},
			{"grown, wrapped", 20, 3, 8, true, 4, 32},
		} {
			t.Run(typ.String()+"/"+tc.name, func(t *testing.T) {
				cfg := seqCaseFor(typ)
				cfg.Cells = tc.cells
				toks := randTokens(rand.New(rand.NewPCG(5, 6)), cfg, heads, tc.n+1)
				plain, _ := New(cfg)
				grown := cfg
				grown.Initial = tc.initial
				sh, _ := New(grown)
				for pos, tok := range toks[:tc.n] {
					if pos == sh.Cells() {
						if err := sh.Grow(2 * pos); err != nil {
							t.Fatal(err)
						}
					}
					step(t, sh, tok, pos, heads)
					step(t, plain, tok, pos, heads)
				}
				if err := sh.Shift(tc.keep, tc.drop, nil); err != nil {
					t.Fatal(err)
				}
				np := tc.n - tc.drop
				if sh.Len() != np {
					t.Fatalf("Len after shift %d, want %d", sh.Len(), np)
				}
				fresh, _ := New(cfg)
				for pos, tok := range kept(toks[:tc.n], tc.keep, tc.drop) {
					step(t, fresh, tok, pos, heads)
				}
				next := toks[tc.n]
				got := step(t, sh, next, np, heads)
				want := step(t, fresh, next, np, heads)
				if !slices.Equal(got[0], want[0]) {
					t.Errorf("full layer after shift: %v, fresh cache %v", got[0], want[0])
				}
				if tc.windowWrapped {
					want = step(t, plain, next, tc.n, heads)
				}
				if !slices.Equal(got[1], want[1]) {
					t.Errorf("windowed layer after shift: %v, want %v", got[1], want[1])
				}
			})
		}
	}
}

// TestShiftRotatesKeys checks that moved keys are re-rotated to their new
// positions, within the rounding of the cache's type: every element for F16
// and Int8; for Int4, whose 4-bit codes are coarse, each key's RMS error
// relative to its RMS. An Int4 shift that applied RoPE to the keys in the
// Hadamard basis, without rotating them back first, would be off by about
// the key itself.
func TestShiftRotatesKeys(t *testing.T) {
	for _, typ := range []Type{F16, Int8, Int4} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := seqCaseFor(typ)
			cfg.Cells = 64
			const n, keep, drop = 30, 4, 13
			r := rand.New(rand.NewPCG(7, 8))
			base := make([][][]float32, n) // token, layer → unrotated key
			sh, _ := New(cfg)
			for pos := range n {
				for l := range cfg.Layers {
					k := randVec(r, cfg.KVHeads*cfg.HeadDimK, 1)
					base[pos] = append(base[pos], slices.Clone(k))
					rotPairs(k, cfg.HeadDimK, pos)
					if err := sh.Store(l, pos, k, randVec(r, cfg.KVHeads*cfg.HeadDimV, 1)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var calls int
			rotate := func(rows []float32, delta int) {
				calls++
				if delta != -drop || len(rows)%cfg.HeadDimK != 0 {
					t.Errorf("rotate(%d floats, %d)", len(rows), delta)
				}
				rotPairs(rows, cfg.HeadDimK, delta)
			}
			if err := sh.Shift(keep, drop, rotate); err != nil {
				t.Fatal(err)
			}
			if calls == 0 {
				t.Fatal("rotate never called")
			}
			tol := 2e-3 // a few F16 ulps of values near 1
			if typ == Int8 {
				tol = 0.05 // two int8 roundings of amax/127
			}
			// Int4: one 4-bit rounding of N(0,1) keys in blocks of 32 costs
			// about 0.09 of their RMS (TestInt4Accuracy's data, without
			// outliers); the shift adds a second rounding, ≈ √2 of that on
			// average (0.14 for the worst of these keys).
			const int4RelRMS = 0.18
			var worst float64
			kept := append(slices.Clone(base[:keep]), base[keep+drop:]...)
			// Layer 0 is full: every kept token at its new position. Layer 1's
			// ring (5 cells) wrapped: its last positions renumbered by -drop.
			for l, lo := range []int{0, n - drop - 5} {
				for pos := lo; pos < n-drop; pos++ {
					for h := range cfg.KVHeads {
						want := slices.Clone(kept[pos][l][h*cfg.HeadDimK : (h+1)*cfg.HeadDimK])
						rotPairs(want, cfg.HeadDimK, pos)
						got := keyRow(sh, l, h, pos)
						if typ == Int4 {
							var se, ss float64
							for i := range want {
								e := float64(got[i] - want[i])
								se, ss = se+e*e, ss+float64(want[i])*float64(want[i])
							}
							rel := math.Sqrt(se / ss)
							worst = max(worst, rel)
							if rel > int4RelRMS {
								t.Fatalf("layer %d pos %d head %d: relative RMS error %.3f > %.2f", l, pos, h, rel, int4RelRMS)
							}
							continue
						}
						for i := range want {
							if d := math.Abs(float64(got[i] - want[i])); d > tol {
								t.Fatalf("layer %d pos %d head %d: key %v, want %v", l, pos, h, got, want)
							}
						}
					}
				}
			}
			if typ == Int4 {
				t.Logf("worst relative RMS error of a shifted key: %.3f", worst)
			}
		})
	}
}

func TestShiftErrors(t *testing.T) {
	c, toks := filled(t, 16, 9, 6)
	for _, tc := range []struct{ keep, drop int }{{-1, 2}, {2, -1}, {3, 4}, {0, 7}} {
		if err := c.Shift(tc.keep, tc.drop, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("Shift(%d, %d): err = %v, want ErrInvalid", tc.keep, tc.drop, err)
		}
	}
	if err := c.Shift(2, 0, nil); err != nil || c.Len() != 6 {
		t.Errorf("Shift(2, 0): err %v, Len %d", err, c.Len())
	}
	// Mid-pass (one layer ahead of the other) is refused.
	if err := c.Store(0, 6, toks[0].k[0], toks[0].v[0]); err != nil {
		t.Fatal(err)
	}
	if err := c.Shift(1, 2, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("shift between layers: err = %v", err)
	}
}
