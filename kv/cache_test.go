package kv

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestNewRejectsBadConfig(t *testing.T) {
	good := Config{Layers: 2, KVHeads: 2, HeadDimK: 8, HeadDimV: 8, Cells: 16}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"layers", func(c *Config) { c.Layers = 0 }},
		{"kv heads", func(c *Config) { c.KVHeads = -1 }},
		{"head dim k", func(c *Config) { c.HeadDimK = 0 }},
		{"head dim v", func(c *Config) { c.HeadDimV = 0 }},
		{"head dim too large", func(c *Config) { c.HeadDimK = MaxHeadDim + 1 }},
		{"cells", func(c *Config) { c.Cells = 0 }},
		{"type", func(c *Config) { c.Type = 7 }},
		{"windows length", func(c *Config) { c.Windows = []int{0} }},
		{"negative window", func(c *Config) { c.Windows = []int{0, -4} }},
		{"negative batch", func(c *Config) { c.Batch = -1 }},
		{"overflow", func(c *Config) { c.KVHeads, c.Cells = math.MaxInt/4, math.MaxInt/4 }},
		{"too large", func(c *Config) { c.Layers, c.KVHeads, c.Cells = 1000, 64, 1<<30 }},
		{"max cells", func(c *Config) { c.Cells = math.MaxInt }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
				t.Fatalf("New(%+v) err = %v, want ErrInvalid", cfg, err)
			}
		})
	}
	if _, err := New(good); err != nil {
		t.Fatalf("New(%+v): %v", good, err)
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want int64
	}{
		{"f16", Config{Layers: 2, KVHeads: 2, HeadDimK: 64, HeadDimV: 64, Cells: 128}, 2 * 2 * 2 * 64 * 128 * 2},
		// int8 values plus a float32 scale per token and head for K and V.
		{"int8", Config{Layers: 2, KVHeads: 2, HeadDimK: 64, HeadDimV: 64, Cells: 128, Type: Int8}, 2*2*2*64*128 + 2*2*128*2*4},
		// q4_0 blocks: 18 bytes per 32 elements, scales included.
		{"int4", Config{Layers: 2, KVHeads: 2, HeadDimK: 64, HeadDimV: 64, Cells: 128, Type: Int4}, 2 * 2 * 128 * (2 + 2) * 18},
		{"int4 k and v dims differ", Config{Layers: 1, KVHeads: 4, HeadDimK: 192, HeadDimV: 128, Cells: 10, Type: Int4}, 4 * 10 * (6 + 4) * 18},
		{"k and v dims differ", Config{Layers: 1, KVHeads: 4, HeadDimK: 192, HeadDimV: 128, Cells: 10}, 4 * 10 * (192 + 128) * 2},
		// Layer 0 keeps a ring of 16+4-1 cells however large Cells is.
		{"window", Config{Layers: 2, KVHeads: 2, HeadDimK: 64, HeadDimV: 64, Cells: 1 << 16, Windows: []int{16, 0}, Batch: 4}, 2 * 2 * 64 * 2 * (16 + 3 + 1<<16)},
		{"window above cells", Config{Layers: 1, KVHeads: 1, HeadDimK: 8, HeadDimV: 8, Cells: 10, Windows: []int{4096}}, 2 * 8 * 2 * 10},
	} {
		c, err := New(tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.Bytes(); got != tc.want {
			t.Errorf("%s: Bytes() = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// allocated sums the storage the cache's layers really hold.
func allocated(c *Cache) int64 {
	var n int64
	for i := range c.layers {
		l := &c.layers[i]
		n += 2*int64(len(l.k16)+len(l.v16)) + int64(len(l.k8)+len(l.v8)) + 4*int64(len(l.ks)+len(l.vs)) + int64(len(l.k4)+len(l.v4))
	}
	return n
}

// TestBytesIsTheAllocation checks the size formula (Bytes, GrowBytes) that
// memory plans use without a cache against the slices New and Grow really
// allocate, for every layer kind, type and start size.
func TestBytesIsTheAllocation(t *testing.T) {
	for _, base := range []Config{
		{Layers: 4, KVHeads: 2, HeadDimK: 64, HeadDimV: 64},
		{Layers: 5, KVHeads: 4, HeadDimK: 8, HeadDimV: 8},
		{Layers: 6, KVHeads: 2, HeadDimK: 32, HeadDimV: 16, Windows: []int{16, 0, 16, 0, 16, 0}},
		{Layers: 2, KVHeads: 3, HeadDimK: 8, HeadDimV: 8, Windows: []int{5, 0}, Batch: 4},
	} {
		for _, typ := range []Type{F16, Int8, Int4} {
			if !typ.HeadDims(base.HeadDimK, base.HeadDimV) {
				continue
			}
			for _, cells := range []int{1, 100, 256, 1000} {
				for _, initial := range []int{0, 1, 17, cells} {
					cfg := base
					cfg.Type, cfg.Cells, cfg.Initial = typ, cells, initial
					c, err := New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := Bytes(cfg), allocated(c); got != want || c.Bytes() != want {
						t.Fatalf("%+v: Bytes %d, Cache.Bytes %d, allocated %d", cfg, got, c.Bytes(), want)
					}
					before := allocated(c)
					added, _ := GrowBytes(cfg, c.Cells(), cells)
					if err := c.Grow(cells); err != nil {
						t.Fatal(err)
					}
					if got := allocated(c) - before; got != added {
						t.Fatalf("%+v: growing to %d allocated %d more, GrowBytes says %d", cfg, cells, got, added)
					}
				}
			}
		}
	}
}

func TestConfigIsACopy(t *testing.T) {
	w := []int{0, 8}
	c, err := New(Config{Layers: 2, KVHeads: 1, HeadDimK: 4, HeadDimV: 4, Cells: 32, Windows: w})
	if err != nil {
		t.Fatal(err)
	}
	w[1] = 99
	got := c.Config()
	got.Windows[0] = 77
	if cfg := c.Config(); !slices.Equal(cfg.Windows, []int{0, 8}) || cfg.Cells != 32 || c.Cells() != 32 {
		t.Errorf("Config() = %+v, want Windows [0 8] and Cells 32", cfg)
	}
}

func TestStoreErrors(t *testing.T) {
	c, err := New(Config{Layers: 2, KVHeads: 2, HeadDimK: 4, HeadDimV: 3, Cells: 4})
	if err != nil {
		t.Fatal(err)
	}
	k, v := make([]float32, 8), make([]float32, 6)
	for pos := range 4 {
		if err := c.Store(0, pos, k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name       string
		layer, pos int
		k, v       []float32
		want       error
	}{
		{"full", 0, 4, k, v, ErrFull},
		{"far past end", 0, math.MaxInt / 2, k, v, ErrFull},
		{"negative position", 0, -1, k, v, ErrInvalid},
		{"gap", 1, 1, k, v, ErrInvalid},
		{"layer", 2, 0, k, v, ErrInvalid},
		{"negative layer", -1, 0, k, v, ErrInvalid},
		{"short k", 1, 0, k[:7], v, ErrInvalid},
		{"long v", 1, 0, k, make([]float32, 7), ErrInvalid},
		{"rewrite", 0, 2, k, v, nil},
	} {
		err := c.Store(tc.layer, tc.pos, tc.k, tc.v)
		if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestStoreF16 checks the stored bits and layout [head][cell][dim].
func TestStoreF16(t *testing.T) {
	c, err := New(Config{Layers: 1, KVHeads: 2, HeadDimK: 2, HeadDimV: 1, Cells: 3})
	if err != nil {
		t.Fatal(err)
	}
	for pos := range 3 {
		f := float32(pos)
		if err := c.Store(0, pos, []float32{f, 1 + 0x1p-11, -f, 65520}, []float32{f + 0.5, -f - 0.5}); err != nil {
			t.Fatal(err)
		}
	}
	l := &c.layers[0]
	// 1+2⁻¹¹ is a tie and rounds to even (1); 65520 overflows to +Inf;
	// -0 keeps its sign.
	wantK := []uint16{0x0000, 0x3c00, 0x3c00, 0x3c00, 0x4000, 0x3c00, 0x8000, 0x7c00, 0xbc00, 0x7c00, 0xc000, 0x7c00}
	wantV := []uint16{0x3800, 0x3e00, 0x4100, 0xb800, 0xbe00, 0xc100}
	if !slices.Equal(l.k16, wantK) || !slices.Equal(l.v16, wantV) {
		t.Errorf("keys %04x values %04x, want %04x and %04x", l.k16, l.v16, wantK, wantV)
	}
}

func TestStoreInt8(t *testing.T) {
	c, err := New(Config{Layers: 1, KVHeads: 2, HeadDimK: 4, HeadDimV: 2, Cells: 1, Type: Int8})
	if err != nil {
		t.Fatal(err)
	}
	k := []float32{0.5, -1.27, 1.27, 0.00499, 0, 0, 0, 0}
	v := []float32{-2, 1, 0.25, 0.5}
	if err := c.Store(0, 0, k, v); err != nil {
		t.Fatal(err)
	}
	l := &c.layers[0]
	if want := []int8{50, -127, 127, 0, 0, 0, 0, 0}; !slices.Equal(l.k8, want) {
		t.Errorf("keys %v, want %v", l.k8, want)
	}
	// The scale is refined by least squares for the chosen codes:
	// Σx·q / Σq². Here the codes are exact multiples of 0.01.
	if want := []float32{0.01, 0}; math.Abs(float64(l.ks[0]-want[0])) > 1e-8 || l.ks[1] != 0 {
		t.Errorf("key scales %v, want %v", l.ks, want)
	}
	// 1/(2/127) = 63.5 rounds away from zero.
	if want := []int8{-127, 64, 64, 127}; !slices.Equal(l.v8, want) {
		t.Errorf("values %v, want %v", l.v8, want)
	}
	// Codes (-127, 64) and (64, 127): Σx·q / Σq² = 318/20225 and 79.5/20225.
	if want := []float32{float32(318.0 / 20225), float32(79.5 / 20225)}; !slices.Equal(l.vs, want) {
		t.Errorf("value scales %v, want %v", l.vs, want)
	}
	// Dequantized, every element is within half a step of its input.
	for h := range 2 {
		for i := range 4 {
			x, got := k[h*4+i], float32(l.k8[h*4+i])*l.ks[h]
			if math.Abs(float64(got-x)) > float64(l.ks[h])/2*1.0001 {
				t.Errorf("key %d of head %d: %v dequantizes to %v", i, h, x, got)
			}
		}
	}
}

func TestWindowRing(t *testing.T) {
	// Window 4, batch 1: a ring of 4 cells, cell = pos mod 4.
	c, err := New(Config{Layers: 1, KVHeads: 1, HeadDimK: 1, HeadDimV: 1, Cells: 100, Windows: []int{4}})
	if err != nil {
		t.Fatal(err)
	}
	for pos := range 10 {
		if err := c.Store(0, pos, []float32{0}, []float32{float32(pos)}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []uint16{0x4800, 0x4880, 0x4600, 0x4700}; !slices.Equal(c.layers[0].v16, want) { // 8 9 6 7
		t.Errorf("ring values %04x, want %04x", c.layers[0].v16, want)
	}
	// Equal scores: the output is the mean of the window's values.
	out := make([]float32, 1)
	if err := c.Attend(0, 9, []float32{1}, out, AttnParams{Heads: 1, Scale: 1}, 0, 1, make([]float32, 4)); err != nil {
		t.Fatal(err)
	}
	if out[0] != 7.5 {
		t.Errorf("mean of positions 6..9 = %v, want 7.5", out[0])
	}
	if err := c.Store(0, 5, []float32{0}, []float32{0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("storing dropped position 5: err = %v, want ErrInvalid", err)
	}
}

func TestTruncate(t *testing.T) {
	c, err := New(Config{Layers: 2, KVHeads: 1, HeadDimK: 1, HeadDimV: 1, Cells: 32, Windows: []int{0, 4}})
	if err != nil {
		t.Fatal(err)
	}
	one := []float32{1}
	store := func(l, pos int) error { return c.Store(l, pos, one, one) }
	attend := func(l, pos int) error {
		return c.Attend(l, pos, one, make([]float32, 1), AttnParams{Heads: 1, Scale: 1}, 0, 1, make([]float32, 32))
	}
	for pos := range 10 {
		for l := range 2 {
			if err := store(l, pos); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Truncate(8) // the ring holds 6..7 of the 4..7 position 7 needs
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"full layer keeps 7", attend(0, 7), nil},
		{"full layer forgot 8", attend(0, 8), ErrInvalid},
		{"ring lost 4..5", attend(1, 7), ErrInvalid},
		{"gap after truncate", store(0, 9), ErrInvalid},
		{"store at n", store(0, 8), nil},
	} {
		if tc.want == nil && tc.err != nil || !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	c.Truncate(-3) // as 0: empty
	for l := range 2 {
		if err := attend(l, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("layer %d after Truncate(0): err = %v, want ErrInvalid", l, err)
		}
		if err := store(l, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("layer %d store 1 after Truncate(0): err = %v, want ErrInvalid", l, err)
		}
		for pos := range 6 {
			if err := store(l, pos); err != nil {
				t.Fatal(err)
			}
		}
		if err := attend(l, 5); err != nil {
			t.Errorf("layer %d refilled: %v", l, err)
		}
	}
}
