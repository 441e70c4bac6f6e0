package model

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
)

// memReader is a SlotReader over an in-memory file: Load notes the
// request and Wait copies the range into the slot, as a disk read would
// have filled it meanwhile.
type memReader struct {
	file    []byte
	ranges  [][2]int64
	bufs    [][]byte
	pending []int // per slot: range loading, -1 none
	fail    int   // loads of this range fail; -1 never
	loads   int
}

func newMemReader(file []byte, m *Model, slots int) *memReader {
	r := &memReader{file: file, fail: -1}
	var maxLen int64
	for _, L := range m.Blocks {
		r.ranges = append(r.ranges, [2]int64{L.Start, L.End})
		maxLen = max(maxLen, L.End-L.Start)
	}
	for range slots {
		r.bufs = append(r.bufs, make([]byte, maxLen+7))
		r.pending = append(r.pending, -1)
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

func (r *memReader) Load(i, slot int) error {
	if r.pending[slot] >= 0 {
		return fmt.Errorf("slot %d still loading range %d", slot, r.pending[slot])
	}
	clear(r.bufs[slot])
	r.pending[slot] = i
	r.loads++
	return nil
}

func (r *memReader) Wait(slot int) error {
	i := r.pending[slot]
	if i < 0 {
		return nil
	}
	r.pending[slot] = -1
	if i == r.fail {
		return errors.New("disk on fire")
	}
	copy(r.View(i, slot), r.file[r.ranges[i][0]:r.ranges[i][1]])
	return nil
}

// loadSpec builds a model over a private copy of the file's bytes.
func loadSpec(t *testing.T, spec testutil.ModelSpec) (*Model, *gguf.File, []byte) {
	t.Helper()
	b, err := testutil.ModelBytes(spec)
	f, _ := testutil.Parse(t, b, err)
	m, err := New(f, b)
	if err != nil {
		t.Fatal(err)
	}
	return m, f, b
}

// greedyLogits runs a prompt then n greedy steps and returns every step's
// logits.
// residentLogits loads TinyLlama with layers blocks, all resident, and
// returns its spec, a pool of threads workers closed with the test, and
// the greedy logits of n steps: the reference streaming must match.
func residentLogits(t *testing.T, layers, threads, n int) (testutil.ModelSpec, *ops.Pool, [][]float32) {
	t.Helper()
	spec := testutil.TinyLlama()
	spec.Layers = layers
	pool := ops.NewPool(threads)
	t.Cleanup(pool.Close)
	ref, _, _ := loadSpec(t, spec)
	return spec, pool, greedyLogits(t, ref, pool, n)
}

func greedyLogits(t *testing.T, m *Model, pool *ops.Pool, n int) [][]float32 {
	t.Helper()
	st := newState(t, m, pool, 8, 64)
	prompt := []int32{1, 17, 42, 99, 7}
	out := make([]float32, m.Vocab)
	if err := st.Forward(prompt, 0, out); err != nil {
		t.Fatal(err)
	}
	all := [][]float32{append([]float32(nil), out...)}
	pos := len(prompt)
	for range n {
		if err := st.Forward([]int32{testutil.Argmax(out)}, pos, out); err != nil {
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
func TestDiskSourceMatchesResident(t *testing.T) {
	spec, pool, want := residentLogits(t, 5, 2, 12)

	tests := []struct {
		streamed []int
		slots    int
	}{
		{[]int{0, 1, 2, 3, 4}, 2},
		{[]int{1, 3}, 2},
		{[]int{0, 4}, 1},
		{[]int{2}, 3},
		{[]int{0, 2, 3}, 3},
		{[]int{3, 1, 4}, 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.streamed, tc.slots), func(t *testing.T) {
			m, f, data := loadSpec(t, spec)
			pristine := append([]byte(nil), data...)
			r := newMemReader(pristine, m, tc.slots)
			src, err := NewDiskSource(m, f, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Switch(tc.streamed, nil); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(src.OnDisk()), fmt.Sprint(slices.Sorted(slices.Values(tc.streamed))); got != want {
				t.Fatalf("OnDisk() = %s, want %s", got, want)
			}
			for _, il := range tc.streamed {
				L := m.Blocks[il]
				for i := L.Start; i < L.End; i++ {
					data[i] = 0xAA
				}
			}
			m.Source = src
			got := greedyLogits(t, m, pool, 12)
			sameLogits(t, "streamed", got, want)
			// Every pass reads each streamed block once; the reads the
			// last pass started ahead are for a pass that did not come.
			if n := len(tc.streamed); r.loads != 13*n+min(n, tc.slots) {
				t.Fatalf("%d loads for 13 passes of %d streamed layers and %d slots", r.loads, n, tc.slots)
			}
		})
	}
}

// Switching between passes, to any set of streamed blocks and back to
// none, keeps the logits of the resident model bit for bit.
func TestDiskSourceSwitches(t *testing.T) {
	spec, pool, want := residentLogits(t, 6, 2, 14)

	m, f, data := loadSpec(t, spec)
	r := newMemReader(append([]byte(nil), data...), m, 2)
	src, err := NewDiskSource(m, f, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Source = src
	sets := [][]int{nil, {2}, {2, 4}, {1, 2, 4}, {0, 1, 2, 3, 4, 5}, {1, 2, 4}, {4}, nil, {5}, {0, 5}, {}, {3}}
	st := newState(t, m, pool, 8, 64)
	out := make([]float32, m.Vocab)
	var during int
	for step := range want {
		if err := src.Switch(sets[step%len(sets)], func() { during++ }); err != nil {
			t.Fatal(err)
		}
		var err error
		if step == 0 {
			err = st.Forward([]int32{1, 17, 42, 99, 7}, 0, out)
		} else {
			err = st.Forward([]int32{testutil.Argmax(want[step-1])}, 4+step, out)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i] != want[step][i] {
				t.Fatalf("step %d, streaming %v: logit %d = %v, resident %v", step, sets[step%len(sets)], i, out[i], want[step][i])
			}
		}
	}
	if during != len(want) {
		t.Fatalf("during ran %d times for %d switches", during, len(want))
	}
	for slot, p := range r.pending {
		if p >= 0 && len(src.OnDisk()) == 0 {
			t.Fatalf("slot %d still loading %d after a switch to no streamed block", slot, p)
		}
	}
	if err := src.Switch([]int{6}, nil); err == nil {
		t.Fatal("switch to block 6 of 6: no error")
	}
}

// A failed read leaves the layer to the mapped file: same logits, error
// reported once.
func TestDiskSourceReadError(t *testing.T) {
	spec, pool, want := residentLogits(t, 3, 1, 4)

	m, f, data := loadSpec(t, spec)
	r := newMemReader(data, m, 2)
	r.fail = 2
	var reported []error
	src, err := NewDiskSource(m, f, r, func(err error) { reported = append(reported, err) })
	if err != nil {
		t.Fatal(err)
	}
	src.Switch([]int{0, 2}, nil)
	m.Source = src
	sameLogits(t, "after a read error", greedyLogits(t, m, pool, 4), want)
	if len(reported) != 1 || src.Err() == nil {
		t.Fatalf("reported %v, Err() = %v; want one report", reported, src.Err())
	}
}

func TestDiskSourceRejectsBadLayout(t *testing.T) {
	m, f, data := loadSpec(t, testutil.TinyLlama())
	r := newMemReader(data, m, 2)
	r.ranges[0][1]-- // one byte short of the layer
	if _, err := NewDiskSource(m, f, r, nil); err == nil {
		t.Error("range shorter than the layer: no error")
	}
}

// Serving streamed layers allocates nothing.
func TestDiskSourceAllocatesNothing(t *testing.T) {
	m, f, data := loadSpec(t, testutil.TinyLlama())
	r := newMemReader(data, m, 2)
	src, err := NewDiskSource(m, f, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, streamed := range [][]int{{1}, {0, 1}, nil} {
		src.Switch(streamed, nil)
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
			t.Fatalf("streaming %v: a pass allocates %.1f times, want 0", streamed, n)
		}
	}
}

// lfm2's conv layers stream like any block: with a conv layer and the
// attention layer read from slots (their mapped bytes wrecked), the greedy
// logits are the resident ones; granitehybrid's Mamba-2 layers too, with
// their experts and shared expert, and Gemma 3n's blocks, LAuReL, AltUp
// and per-layer matrices and all, and Gemma 4's, and Nemotron-H's blocks
// of one operator.
func TestDiskSourceLFM2(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyLFM2(), testutil.TinyGraniteHybridMoE(), testutil.TinyGemma3n(),
		testutil.TinyGemma4(), testutil.TinyQwen35MoE(), testutil.TinyQwen35MoEFused(), testutil.TinyQwen3NextSSMIn(), testutil.TinyNemotronH()} {
		t.Run(spec.Variant(), func(t *testing.T) { streamHybrid(t, spec) })
	}
}

func streamHybrid(t *testing.T, spec testutil.ModelSpec) {
	pool := ops.NewPool(2)
	defer pool.Close()
	ref, _, _ := loadSpec(t, spec)
	want := greedyLogits(t, ref, pool, 6)
	m, f, data := loadSpec(t, spec)
	r := newMemReader(append([]byte(nil), data...), m, 2)
	src, err := NewDiskSource(m, f, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	streamed := []int{1, 2}
	if err := src.Switch(streamed, nil); err != nil {
		t.Fatal(err)
	}
	for _, il := range streamed {
		for i := m.Blocks[il].Start; i < m.Blocks[il].End; i++ {
			data[i] = 0xAA
		}
	}
	m.Source = src
	sameLogits(t, "streamed", greedyLogits(t, m, pool, 6), want)
}
