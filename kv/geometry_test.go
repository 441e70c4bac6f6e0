package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGeometryPerLayer: a cache whose layers have geometries of their own
// (Config.Geometry) stores, attends, shifts and saves each layer exactly as
// a one-layer cache of that layer's geometry does, bit for bit, and its
// Bytes are theirs added up; a saved state is refused by a cache whose
// layers differ.
func TestGeometryPerLayer(t *testing.T) {
	const heads, n = 4, 40
	geo := []Geometry{{KVHeads: 2, HeadDimK: 64, HeadDimV: 64}, {KVHeads: 1, HeadDimK: 128, HeadDimV: 96}, {}}
	windows := []int{0, 6, 0}
	for _, typ := range []Type{F16, Int8, Int4} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := Config{Layers: 3, KVHeads: 4, HeadDimK: 32, HeadDimV: 32, Cells: n, Type: typ,
				Windows: windows, Geometry: geo, Initial: 8, Batch: 1}
			if typ == Int4 {
				cfg.Recent = 4
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			singles := make([]*Cache, cfg.Layers)
			var sum int64
			for i := range singles {
				g := cfg.geometry(i)
				one := cfg
				one.Layers, one.Geometry, one.Windows = 1, nil, []int{windows[i]}
				one.KVHeads, one.HeadDimK, one.HeadDimV = g.KVHeads, g.HeadDimK, g.HeadDimV
				if singles[i], err = New(one); err != nil {
					t.Fatal(err)
				}
				sum += Bytes(one)
			}
			if got := Bytes(cfg); got != sum || c.Bytes() != sum {
				t.Fatalf("Bytes %d (cache %d), want the layers' %d", got, c.Bytes(), sum)
			}
			r := rand.New(rand.NewPCG(3, uint64(typ)))
			vec := func(k int) []float32 {
				x := make([]float32, k)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				return x
			}
			for pos := range n - 4 {
				if err := c.Grow(pos + 1); err != nil {
					t.Fatal(err)
				}
				for i, one := range singles {
					if err := one.Grow(pos + 1); err != nil {
						t.Fatal(err)
					}
					g := cfg.geometry(i)
					k, v := vec(g.KVHeads*g.HeadDimK), vec(g.KVHeads*g.HeadDimV)
					if err := c.Store(i, pos, k, v); err != nil {
						t.Fatal(err)
					}
					if err := one.Store(0, pos, k, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			same := func(what string, a *Cache) {
				t.Helper()
				pos := a.Len() - 1
				for i, one := range singles {
					g := cfg.geometry(i)
					q := vec(heads * g.HeadDimK)
					got, want := make([]float32, heads*g.HeadDimV), make([]float32, heads*g.HeadDimV)
					sc := make([]float32, heads*n)
					p := AttnParams{Heads: heads, Scale: 0.125}
					if err := a.Attend(i, pos, q, got, p, 0, heads, sc); err != nil {
						t.Fatalf("%s: layer %d: %v", what, i, err)
					}
					if err := one.Attend(0, pos, q, want, p, 0, heads, sc); err != nil {
						t.Fatalf("%s: layer %d alone: %v", what, i, err)
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("%s: layer %d output %d is %v, alone %v", what, i, j, got[j], want[j])
						}
					}
				}
			}
			same("stored", c)

			var buf bytes.Buffer
			if _, err := c.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			saved := buf.Bytes()
			back, _ := New(cfg)
			if _, err := back.ReadFrom(bytes.NewReader(saved)); err != nil {
				t.Fatal(err)
			}
			same("restored", back)
			other := cfg
			other.Geometry = []Geometry{geo[1], geo[0], {}}
			o, _ := New(other)
			if _, err := o.ReadFrom(bytes.NewReader(saved)); !errors.Is(err, ErrBadState) {
				t.Errorf("state of other geometries: err = %v, want ErrBadState", err)
			}

			rot := func(rows []float32, delta int) {
				for i := range rows {
					rows[i] = rows[i]*0.5 + float32(delta)*0.01
				}
			}
			if err := c.Shift(3, 10, rot); err != nil {
				t.Fatal(err)
			}
			for _, one := range singles {
				if err := one.Shift(3, 10, rot); err != nil {
					t.Fatal(err)
				}
			}
			same("shifted", c)
		})
	}
}

// TestGeometryInvalid: a Geometry that does not fit the Config is refused
// with an error naming it.
func TestGeometryInvalid(t *testing.T) {
	base := Config{Layers: 2, KVHeads: 2, HeadDimK: 64, HeadDimV: 64, Cells: 8, Type: Int4}
	for _, tc := range []struct {
		geo  []Geometry
		want string
	}{
		{[]Geometry{{}}, "1 Geometry entries for 2 Layers"},
		{[]Geometry{{}, {KVHeads: -1}}, "Geometry[1]"},
		{[]Geometry{{HeadDimK: MaxHeadDim + 1}, {}}, "Geometry[0]'s head sizes"},
		{[]Geometry{{}, {HeadDimV: 48}}, "Geometry[1]'s head sizes 64 and 48 must be multiples of 32"},
	} {
		cfg := base
		cfg.Geometry = tc.geo
		_, err := New(cfg)
		if !errors.Is(err, ErrInvalid) || !bytes.Contains([]byte(fmt.Sprint(err)), []byte(tc.want)) {
			t.Errorf("Geometry %+v: err = %v, want ErrInvalid naming %q", tc.geo, err, tc.want)
		}
	}
}
