package model

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// memReader is a SlotReader over an in-memory file: Acquire copies the
// range into the next slot in turn, as a streamer's buffers are filled.
type memReader struct {
	file   []byte
	ranges [][2]int64
	bufs   [][]byte
	next   int
	held   map[int]int // range → slot
	fail   int         // Acquire of this range fails; -1 never
	gets   int
}

func newMemReader(file []byte, m *Model, streamed []int, slots int) *memReader {
	r := &memReader{file: file, held: map[int]int{}, fail: -1}
	var maxLen int64
	for _, il := range streamed {
		L := m.Blocks[il]
		r.ranges = append(r.ranges, [2]int64{L.Start, L.End})
		maxLen = max(maxLen, L.End-L.Start)
	}
	for range slots {
		r.bufs = append(r.bufs, make([]byte, maxLen+7))
	}
	return r
}

func (r *memReader) Slots() int { return len(r.bufs) }

// View places range i 7 bytes into the slot, so that matrices built on it
// are not at the same alignment as in the file.
func (r *memReader) View(i, slot int) []byte {
	n := r.ranges[i][1] - r.ranges[i][0]
	return r.bufs[slot][7 : 7+n]
}

func (r *memReader) Acquire(i int) ([]byte, int, error) {
	if i == r.fail {
		return nil, 0, errors.New("disk on fire")
	}
	slot := r.next % len(r.bufs)
	r.next++
	clear(r.bufs[slot])
	b := r.View(i, slot)
	copy(b, r.file[r.ranges[i][0]:r.ranges[i][1]])
	r.held[i] = slot
	r.gets++
	return b, slot, nil
}

func (r *memReader) Release(i int) {
	if _, ok := r.held[i]; !ok {
		panic(fmt.Sprintf("release of range %d not held", i))
	}
	delete(r.held, i)
}

// loadSpec builds a model over a private copy of the file's bytes.
func loadSpec(t *testing.T, spec testutil.ModelSpec) (*Model, *gguf.File, []byte) {
	t.Helper()
	b, err := testutil.ModelBytes(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(f, b)
	if err != nil {
		t.Fatal(err)
	}
	return m, f, b
}

// greedyLogits runs a prompt then n greedy steps and returns every step's
// logits.
func greedyLogits(t *testing.T, m *Model, pool *ops.Pool, n int) [][]float32 {
	t.Helper()
	st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: 8, Cache: kv.F16, Cells: 64})
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{1, 17, 42, 99, 7}
	out := make([]float32, m.Vocab)
	if err := st.Forward(prompt, 0, out); err != nil {
		t.Fatal(err)
	}
	all := [][]float32{append([]float32(nil), out...)}
	pos := len(prompt)
	for range n {
		best := 0
		for i, v := range out {
			if v > out[best] {
				best = i
			}
		}
		if err := st.Forward([]int32{int32(best)}, pos, out); err != nil {
			t.Fatal(err)
		}
		pos++
		all = append(all, append([]float32(nil), out...))
	}
	return all
}

func sameLogits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	for s := range want {
		for i := range want[s] {
			if got[s][i] != want[s][i] {
				t.Fatalf("%s: step %d logit %d = %v, want %v (resident)", what, s, i, got[s][i], want[s][i])
			}
		}
	}
}

// Streamed layers must give exactly the logits of resident ones, and must
// really be read from the slots: the mapped copy of their bytes is wrecked.
func TestStreamSourceMatchesResident(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Layers = 5
	pool := ops.NewPool(2)
	defer pool.Close()
	ref, _, _ := loadSpec(t, spec)
	want := greedyLogits(t, ref, pool, 12)

	tests := []struct {
		streamed []int
		slots    int
	}{
		{[]int{0, 1, 2, 3, 4}, 2},
		{[]int{1, 3}, 2},
		{[]int{0, 4}, 1},
		{[]int{2}, 3},
		{[]int{0, 2, 3}, 3},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.streamed, tc.slots), func(t *testing.T) {
			m, f, data := loadSpec(t, spec)
			pristine := append([]byte(nil), data...)
			r := newMemReader(pristine, m, tc.streamed, tc.slots)
			src, err := NewStreamSource(m, f, tc.streamed, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, il := range tc.streamed {
				if !src.Streamed(il) {
					t.Fatalf("layer %d not streamed", il)
				}
				L := m.Blocks[il]
				for i := L.Start; i < L.End; i++ {
					data[i] = 0xAA
				}
			}
			m.Source = src
			got := greedyLogits(t, m, pool, 12)
			sameLogits(t, "streamed", got, want)
			if r.gets != 13*len(tc.streamed) {
				t.Fatalf("%d acquires for 13 passes of %d streamed layers", r.gets, len(tc.streamed))
			}
			if len(r.held) != 0 {
				t.Fatalf("ranges %v still held after the passes", r.held)
			}
		})
	}
}

// A failed read leaves the layer to the mapped file: same logits, error
// reported once.
func TestStreamSourceReadError(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Layers = 3
	pool := ops.NewPool(1)
	defer pool.Close()
	ref, _, _ := loadSpec(t, spec)
	want := greedyLogits(t, ref, pool, 4)

	m, f, data := loadSpec(t, spec)
	r := newMemReader(data, m, []int{0, 2}, 2)
	r.fail = 1
	var reported []error
	src, err := NewStreamSource(m, f, []int{0, 2}, r, func(err error) { reported = append(reported, err) })
	if err != nil {
		t.Fatal(err)
	}
	m.Source = src
	sameLogits(t, "after a read error", greedyLogits(t, m, pool, 4), want)
	if len(reported) != 1 || src.Err() == nil {
		t.Fatalf("reported %v, Err() = %v; want one report", reported, src.Err())
	}
	if len(r.held) != 0 {
		t.Fatalf("ranges %v still held", r.held)
	}
}

func TestStreamSourceRejectsBadLayout(t *testing.T) {
	m, f, data := loadSpec(t, testutil.TinyLlama())
	if _, err := NewStreamSource(m, f, []int{0, 0}, newMemReader(data, m, []int{0, 0}, 2), nil); err == nil {
		t.Error("layer listed twice: no error")
	}
	if _, err := NewStreamSource(m, f, []int{5}, newMemReader(data, m, []int{0}, 2), nil); err == nil {
		t.Error("layer 5 of 2: no error")
	}
	r := newMemReader(data, m, []int{0}, 2)
	r.ranges[0][1]-- // one byte short of the layer
	if _, err := NewStreamSource(m, f, []int{0}, r, nil); err == nil {
		t.Error("range shorter than the layer: no error")
	}
}

// Serving a streamed layer allocates nothing.
func TestStreamSourceAllocatesNothing(t *testing.T) {
	m, f, data := loadSpec(t, testutil.TinyLlama())
	r := newMemReader(data, m, []int{1}, 2)
	src, err := NewStreamSource(m, f, []int{1}, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.held = nil // the fake's bookkeeping allocates; keep it out of the count
	fake := &countingReader{memReader: r}
	src.r = fake
	pass := func() {
		src.Begin()
		for il := range m.Blocks {
			if src.Layer(il) == nil {
				t.Fatal("nil layer")
			}
			src.Done(il)
		}
		src.End()
	}
	if n := testing.AllocsPerRun(100, pass); n != 0 {
		t.Fatalf("a pass allocates %.1f times, want 0", n)
	}
}

// countingReader is memReader without its map, which allocates.
type countingReader struct{ *memReader }

func (c *countingReader) Acquire(i int) ([]byte, int, error) {
	slot := c.next % len(c.bufs)
	c.next++
	return c.View(i, slot), slot, nil
}

func (c *countingReader) Release(i int) {}
