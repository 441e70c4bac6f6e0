package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	const heads = 4
	for _, tv := range []struct {
		typ    Type
		recent int
	}{{F16, 0}, {Int8, 0}, {Int4, 0}, {Int4, 3}} {
		typ := tv.typ
		name := typ.String()
		if tv.recent > 0 {
			name += "+recent"
		}
		for _, tc := range []struct {
			name    string
			n       int
			shift   [2]int // keep, drop; drop 0 = none
			initial int    // of the cache read into
		}{
			{"empty", 0, [2]int{}, 0},
			{"short", 3, [2]int{}, 0},
			{"wrapped ring", 23, [2]int{}, 0},
			{"after shift", 23, [2]int{2, 10}, 0},
			{"into a smaller cache", 23, [2]int{2, 10}, 2},
			// A shift by a drop that is not a multiple of the ring (5 cells)
			// moves the ring's origin: its cells wrap elsewhere than in a
			// fresh cache's ring.
			{"after shift moving the ring", 23, [2]int{2, 7}, 0},
			{"moved ring into a smaller cache", 23, [2]int{2, 9}, 2},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				cfg := seqCaseFor(typ)
				cfg.Cells = 1000
				cfg.Recent = tv.recent
				toks := randTokens(rand.New(rand.NewPCG(11, 12)), cfg, heads, tc.n+1)
				src, _ := New(cfg)
				for pos, tok := range toks[:tc.n] {
					step(t, src, tok, pos, heads)
				}
				if tc.shift[1] > 0 {
					if err := src.Shift(tc.shift[0], tc.shift[1], func(rows []float32, d int) { rotPairs(rows, cfg.HeadDimK, d) }); err != nil {
						t.Fatal(err)
					}
				}
				var buf bytes.Buffer
				n, err := src.WriteTo(&buf)
				if err != nil || n != int64(buf.Len()) {
					t.Fatalf("WriteTo: %d bytes, err %v; buffer has %d", n, err, buf.Len())
				}
				// Only stored rows are written: the header (with Int4's two
				// rotation orders, its Recent and its sinks), 28 bytes per
				// layer, and the rows each layer holds, then an Int4 layer's
				// recent slots.
				rows := int64(src.Len() + min(src.Len(), 5))
				hdr := int64(4 + 20)
				if typ == Int4 {
					hdr += 16
				}
				if want := hdr + 40*2 + rows*int64(cfg.KVHeads)*src.cfg.rowBytes(src.cfg.geometry(0)) + 2*src.cfg.recentBytes(0); n != want {
					t.Errorf("wrote %d bytes, want %d", n, want)
				}
				cfg.Initial = tc.initial
				dst, _ := New(cfg)
				// Something to overwrite.
				step(t, dst, toks[0], 0, heads)
				m, err := dst.ReadFrom(bytes.NewReader(buf.Bytes()))
				if err != nil || m != n {
					t.Fatalf("ReadFrom: %d bytes, err %v", m, err)
				}
				if dst.Len() != src.Len() {
					t.Fatalf("Len %d after ReadFrom, want %d", dst.Len(), src.Len())
				}
				pos := src.Len()
				if pos == dst.Cells() {
					if err := dst.Grow(pos + 1); err != nil {
						t.Fatal(err)
					}
				}
				a, b := step(t, src, toks[tc.n], pos, heads), step(t, dst, toks[tc.n], pos, heads)
				for l := range a {
					if !slices.Equal(a[l], b[l]) {
						t.Errorf("layer %d after round trip: %v, want %v", l, b[l], a[l])
					}
				}
			})
		}
	}
}

func TestStateErrors(t *testing.T) {
	src, _ := filled(t, 64, 13, 9)
	cfg := src.Config()
	var buf bytes.Buffer
	if _, err := src.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	other := func(edit func(*Config)) *Cache {
		c := cfg
		edit(&c)
		cc, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		return cc
	}
	for _, tc := range []struct {
		name string
		dst  *Cache
		data []byte
		want error
	}{
		{"int8 cache", other(func(c *Config) { c.Type = Int8 }), data, ErrBadState},
		{"other head dim", other(func(c *Config) { c.HeadDimK = 10 }), data, ErrBadState},
		{"other window", other(func(c *Config) { c.Windows = []int{0, 6} }), data, ErrBadState},
		{"too few cells", other(func(c *Config) { c.Cells = 8 }), data, ErrBadState},
		{"bad magic", other(func(*Config) {}), append([]byte("XXXX"), data[4:]...), ErrBadState},
		{"truncated header", other(func(*Config) {}), data[:30], io.ErrUnexpectedEOF},
		{"truncated rows", other(func(*Config) {}), data[:len(data)-1], io.ErrUnexpectedEOF},
		{"empty", other(func(*Config) {}), nil, io.ErrUnexpectedEOF},
	} {
		if _, err := tc.dst.ReadFrom(bytes.NewReader(tc.data)); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if tc.dst.Len() != 0 {
			t.Errorf("%s: cache holds %d positions after a failed ReadFrom", tc.name, tc.dst.Len())
		}
	}
	// A position range that is not consistent between layers.
	bad := slices.Clone(data)
	bad[4+20+4] = 3 // layer 0's lo
	if _, err := other(func(*Config) {}).ReadFrom(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) {
		t.Errorf("full layer starting at 3: err = %v", err)
	}
	// A ring origin past the ring (layer 0's record ends with its cells
	// and its offset).
	bad = slices.Clone(data)
	bad[4+20+24] = 200
	if _, err := other(func(*Config) {}).ReadFrom(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) {
		t.Errorf("cell offset 200 in 64 cells: err = %v", err)
	}
}

// TestStateRecentMismatch: a cache keeping another number of recent
// positions in F16 (another plan's, or none) reads the rows and skips the
// slots, which stay empty: attention reads every position from q4_0.
func TestStateRecentMismatch(t *testing.T) {
	for _, saved := range []int{0, 3} {
		src, data := savedInt4(t, saved, 11, 5)
		for _, recent := range []int{0, 3, 5} {
			if recent != saved {
				readsNoSlots(t, fmt.Sprintf("saved with %d, read with %d", saved, recent), src.cfg, recent, data, 11)
			}
		}
	}
}

// savedInt4 is an Int4 cache (seqCaseFor, 1000 cells) with Config.Recent
// recent holding n random tokens, and its saved state.
func savedInt4(t *testing.T, recent, n int, seed uint64) (*Cache, []byte) {
	t.Helper()
	const heads = 4
	cfg := seqCaseFor(Int4)
	cfg.Cells = 1000
	cfg.Recent = recent
	src, _ := New(cfg)
	for pos, tok := range randTokens(rand.New(rand.NewPCG(seed, seed+1)), cfg, heads, n) {
		step(t, src, tok, pos, heads)
	}
	var buf bytes.Buffer
	if _, err := src.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return src, buf.Bytes()
}

// readsNoSlots checks that a cache of cfg with Config.Recent recent reads
// all of data, holds its n positions, and reads none of them from F16.
func readsNoSlots(t *testing.T, what string, cfg Config, recent int, data []byte, n int) {
	t.Helper()
	cfg.Recent = recent
	dst, _ := New(cfg)
	if got, err := dst.ReadFrom(bytes.NewReader(data)); err != nil || got != int64(len(data)) {
		t.Fatalf("%s: ReadFrom read %d of %d bytes: %v", what, got, len(data), err)
	}
	if dst.Len() != n {
		t.Fatalf("%s: Len %d after ReadFrom, want %d", what, dst.Len(), n)
	}
	if a, b := dst.int4Parts(&dst.layers[0], 0, n-1); a != 0 || b != n {
		t.Errorf("%s: reads F16 for 0..%d and %d..%d after ReadFrom, want none", what, a-1, b, n-1)
	}
}

// asKVC4 is the KVC4 stream of a KVC5 one whose header takes hdr bytes:
// each of its layers' records without the geometry KVC5 added (the last
// 12 of its 40 bytes).
func asKVC4(v5 []byte, hdr, layers int) []byte {
	out := append([]byte("KVC4"), v5[4:hdr]...)
	for i := range layers {
		out = append(out, v5[hdr+40*i:hdr+40*i+28]...)
	}
	return append(out, v5[hdr+40*layers:]...)
}

// TestStateReadsKVC3: a KVC3 stream (no sink count in its header; its
// slots, when it has them, begin with 4 sinks) is read, its slots
// skipped when they are not this build's. The stream is made from a
// KVC4 one of a cache without slots: the sink count taken out, and for a
// KVC3 cache with Recent 3, its Recent set and 4+3 empty slots added after
// each layer's rows (read or skipped, depending on this build's sinks).
func TestStateReadsKVC3(t *testing.T) {
	src, v5 := savedInt4(t, 0, 9, 7)
	cfg := src.cfg
	const hdr = 4 + 20 + 12 // magic, dims, rotation orders and Recent; then KVC4's sinks
	v4 := asKVC4(v5, hdr+4, cfg.Layers)
	readsNoSlots(t, "KVC4", cfg, 0, v4, 9)
	if string(v4[:4]) != "KVC4" || binary.LittleEndian.Uint32(v4[hdr:]) != recentSinks {
		t.Fatalf("stream starts %q, sinks %d", v4[:4], binary.LittleEndian.Uint32(v4[hdr:]))
	}
	kvc3 := func(recent int) []byte {
		out := append([]byte("KVC3"), v4[4:hdr-4]...)
		out = binary.LittleEndian.AppendUint32(out, uint32(recent))
		layers := v4[hdr+4 : hdr+4+28*cfg.Layers]
		out = append(out, layers...)
		rest := v4[hdr+4+28*cfg.Layers:]
		for i := range cfg.Layers {
			l := &src.layers[i]
			n := int64(l.hi-l.lo+1) * int64(cfg.KVHeads) * cfg.rowBytes(cfg.geometry(i))
			out = append(out, rest[:n]...)
			rest = rest[n:]
			if recent > 0 {
				slots := v3Sinks + recent
				out = append(out, bytes.Repeat([]byte{0xff}, 4*slots)...) // every tag -1: empty
				out = append(out, make([]byte, 2*slots*cfg.KVHeads*(cfg.HeadDimK+cfg.HeadDimV))...)
			}
		}
		return append(out, rest...)
	}
	for _, tc := range []struct{ saved, recent int }{{0, 0}, {0, 3}, {3, 3}, {3, 0}} {
		readsNoSlots(t, fmt.Sprintf("KVC3 with Recent %d into Recent %d", tc.saved, tc.recent), cfg, tc.recent, kvc3(tc.saved), 9)
	}
}
