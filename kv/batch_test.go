package kv

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
)

// goRunner runs each unit on a goroutine of its own, so that the race
// detector sees StoreBatch's heads stored at the same time.
type goRunner struct{}

func (goRunner) Run(n int, t RangeTask) {
	var wg sync.WaitGroup
	for u := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Do(u, u, u+1)
		}()
	}
	wg.Wait()
}

// serialRunner runs every unit on the caller's goroutine, in one call.
type serialRunner struct{}

func (serialRunner) Run(n int, t RangeTask) { t.Do(0, 0, n) }

// TestStoreBatchMatchesStore: batches stored with StoreBatch, heads in
// parallel, leave a cache whose saved state is byte for byte that of the
// same tokens stored one by one with Store — for each type, a full and a
// sliding-window layer, an Int4 cache's F16 slots overwritten within a
// batch (batches longer than Recent), and a batch re-storing positions.
func TestStoreBatchMatchesStore(t *testing.T) {
	const kvHeads, d, stride = 3, 64, 3*64*2 + 64*4 // fused rows: room for queries too
	for _, typ := range []Type{F16, Int8, Int4} {
		t.Run(typ.String(), func(t *testing.T) {
			cfg := Config{Layers: 2, KVHeads: kvHeads, HeadDimK: d, HeadDimV: d, Cells: 96, Type: typ,
				Windows: []int{0, 40}}
			if typ == Int4 {
				cfg.Recent = 12
			}
			one, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			batch, _ := New(cfg)
			r := rand.New(rand.NewPCG(5, 6))
			// (first position, tokens): a short batch, one longer than
			// Recent, a single token, and a re-store of stored positions.
			for _, b := range [][2]int{{0, 5}, {5, 30}, {35, 1}, {20, 16}} {
				rows := randVec(r, (b[1]-1)*stride+stride, 1)
				k, v := rows[64:], rows[64+kvHeads*d:]
				for layer := range 2 {
					for tk := range b[1] {
						o := tk * stride
						if err := one.Store(layer, b[0]+tk, k[o:o+kvHeads*d], v[o:o+kvHeads*d]); err != nil {
							t.Fatal(err)
						}
					}
					var run Runner = goRunner{}
					if b[1] == 1 {
						run = nil
					}
					if err := batch.StoreBatch(layer, b[0], b[1], k, v, stride, run); err != nil {
						t.Fatal(err)
					}
				}
				var w1, w2 bytes.Buffer
				if _, err := one.WriteTo(&w1); err != nil {
					t.Fatal(err)
				}
				if _, err := batch.WriteTo(&w2); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(w1.Bytes(), w2.Bytes()) {
					t.Fatalf("after storing %d tokens from position %d: saved states differ", b[1], b[0])
				}
			}
		})
	}
}

// TestStoreBatchErrors: what StoreBatch refuses, with the sentinel a
// caller branches on, and that it allocates nothing.
func TestStoreBatchErrors(t *testing.T) {
	c, err := New(Config{Layers: 2, KVHeads: 2, HeadDimK: 32, HeadDimV: 32, Cells: 16, Type: Int4, Windows: []int{0, 8}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]float32, 20*64)
	for _, tc := range []struct {
		name                string
		layer, pos0, n, str int
		k                   []float32
		want                error
	}{
		{"no tokens", 0, 0, 0, 64, buf, ErrInvalid},
		{"layer out of range", 2, 0, 1, 64, buf, ErrInvalid},
		{"past the cells", 0, 10, 7, 64, buf, ErrFull},
		{"skips positions", 0, 1, 2, 64, buf, ErrInvalid},
		{"more tokens than a window's cells", 1, 0, 9, 64, buf, ErrInvalid},
		{"stride shorter than a row", 0, 0, 2, 63, buf, ErrInvalid},
		{"rows past the slice", 0, 0, 4, 64, buf[:3*64+63], ErrInvalid},
	} {
		err := c.StoreBatch(tc.layer, tc.pos0, tc.n, tc.k, tc.k, tc.str, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if n := testing.AllocsPerRun(20, func() {
		if err := c.StoreBatch(0, 0, 8, buf, buf, 64, serialRunner{}); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("StoreBatch allocates %v times per call", n)
	}
}
