package expertcache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// moeSpec is a small qwen3moe with enough experts for eviction to matter:
// 3 blocks of 16 experts, 4 per token.
func moeSpec() testutil.ModelSpec {
	s := testutil.TinyQwen3MoE()
	s.Layers, s.Experts, s.ExpertsUsed, s.Context = 3, 16, 4, 512
	return s
}

// writeModel writes spec to a file and loads it from a heap copy of the
// file's bytes (not a mapping: the tests poison and truncate).
func writeModel(t testing.TB, spec testutil.ModelSpec) (string, *model.Model, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "moe.gguf")
	if err := testutil.WriteModelFile(path, spec); err != nil {
		t.Fatal(err)
	}
	m, data := loadModel(t, path)
	return path, m, data
}

// newPool is a pool of n workers that closes with the test.
func newPool(t testing.TB, n int) *ops.Pool {
	pool := ops.NewPool(n)
	t.Cleanup(pool.Close)
	return pool
}

func loadModel(t testing.TB, path string) (*model.Model, []byte) {
	t.Helper()
	f, data := testutil.ReadModel(t, path)
	m, err := model.New(f, data)
	if err != nil {
		t.Fatal(err)
	}
	return m, data
}

// poisonExperts overwrites every expert's bytes in data, so a model over
// data computes garbage unless its experts come from elsewhere.
func poisonExperts(m *model.Model, data []byte) {
	for _, xs := range LayoutOf(m).Experts {
		for _, x := range xs {
			for _, r := range x {
				for i := r.Off; i < r.Off+r.Len; i++ {
					data[i] = 0x55
				}
			}
		}
	}
}

// tokens is a fixed sequence of n token ids.
func tokens(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(1 + (i*37+11)%300)
	}
	return p
}

// runAll runs toks through a fresh state in chunks of batch and returns
// every position's logits.
func runAll(t testing.TB, m *model.Model, pool *ops.Pool, toks []int32, batch int) []float32 {
	t.Helper()
	st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: batch, Cache: kv.F16, Cells: len(toks)})
	if err != nil {
		t.Fatal(err)
	}
	all := make([]float32, len(toks)*m.Vocab)
	for i := 0; i < len(toks); i += batch {
		n := min(len(toks)-i, batch)
		out := all[i*m.Vocab : (i+n)*m.Vocab]
		if n == 1 {
			out = out[:m.Vocab]
		}
		if err := st.Forward(toks[i:i+n], i, out); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// sameLogits fails at the first position whose logits differ in any bit.
func sameLogits(t testing.TB, what string, got, want []float32, vocab int) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: position %d logit %d = %v, want %v (%g off)", what, i/vocab, i%vocab, got[i], want[i], got[i]-want[i])
		}
	}
}

// budgetFor is the budget that buys n slots of a one-class layout (with
// the options New will be given: repacked only when n is every expert).
func budgetFor(t testing.TB, l Layout, n int, opts ...Option) int64 {
	t.Helper()
	all := 0
	for _, xs := range l.Experts {
		all += len(xs)
	}
	cs, _ := classes(l, newSettings(opts).repack && n == all)
	if len(cs) != 1 {
		t.Fatalf("%d classes, want 1", len(cs))
	}
	var experts int
	for _, xs := range l.Experts {
		experts += len(xs)
	}
	b := int64(n)*cs[0].size + tableBytes(n, experts)
	sz, err := Size(l, b, opts...)
	if err != nil || sz.Slots != n {
		t.Fatalf("budget %d: %d slots, %v; want %d", b, sz.Slots, err, n)
	}
	return b
}

func newCache(t testing.TB, m *model.Model, path string, budget int64, opts ...Option) *Cache {
	t.Helper()
	c, err := New(m, path, budget, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// With the cache installed, the logits are bit-identical to the model's
// own over a few hundred tokens, batched and one at a time, for every
// policy and cache size — one slot (every expert read, most deferred),
// a few, and all of them — although the model's own expert bytes are
// garbage: every expert came from the file through the cache. A cache that
// repacks its experts (the default, when it holds them all) matches the
// model with its experts repacked at load, as a resident one has them;
// one that does not (WithRepack(false), or fewer slots), the mapped
// model.
func TestLogitsMatchMapped(t *testing.T) {
	pool := newPool(t, 2)
	path, ref, _ := writeModel(t, moeSpec())
	toks, sizes := tokens(300), []int{1, 3, 6, 48}
	if testing.Short() {
		toks, sizes = toks[:100], []int{1, 6, 48}
	}
	l := LayoutOf(ref)
	want := map[bool]map[int][]float32{false: {}, true: {}}
	for _, batch := range []int{16, 1} {
		want[false][batch] = runAll(t, ref, pool, toks, batch)
	}
	if repackExperts(t, ref) == 0 {
		t.Log("no X8 kernels on this CPU: the default cache holds the file's layout")
	}
	for _, batch := range []int{16, 1} {
		want[true][batch] = runAll(t, ref, pool, toks, batch)
	}
	for _, repack := range []bool{true, false} {
		for _, policy := range []Policy{LFU, LRU} {
			if !repack && policy != LFU {
				continue
			}
			for _, slots := range sizes {
				for _, batch := range []int{16, 1} {
					t.Run(fmt.Sprintf("repack %v/%v/%d slots/batch %d", repack, policy, slots, batch), func(t *testing.T) {
						m, data := loadModel(t, path)
						poisonExperts(m, data)
						c := newCache(t, m, path, budgetFor(t, l, slots, WithRepack(repack)), WithPolicy(policy), WithRepack(repack))
						m.ExpertSource = c
						got := runAll(t, m, pool, toks, batch)
						sameLogits(t, "cached", got, want[repack && slots == 48][batch], m.Vocab)
						if c.Sizing().Repacked != (repack && slots == 48 && len(l.Repack) > 0 && l.Repack[0] != [3]int64{}) {
							t.Errorf("repacked %v with %d slots of 48", c.Sizing().Repacked, slots)
						}
						st := c.Stats()
						if st.Hits+st.Misses != st.Requests || st.Fallbacks != 0 || c.Err() != nil {
							t.Errorf("stats %+v, err %v", st, c.Err())
						}
						if slots == 48 && (st.Evictions != 0 || st.Misses > 48) {
							t.Errorf("a cache of every expert evicted %d and missed %d", st.Evictions, st.Misses)
						}
						if slots < 48 && st.Evictions == 0 {
							t.Errorf("a cache of %d slots never evicted", slots)
						}
						t.Logf("hit rate %.3f, %d misses, %d bytes read, stall %v, direct %v",
							st.HitRate(), st.Misses, st.BytesRead, st.Stall, st.Direct)
					})
				}
			}
		}
	}
}

// repackExperts holds m's expert tensors in the X8 layout, as a resident
// model's are, and returns how many it repacked.
func repackExperts(t testing.TB, m *model.Model) int {
	t.Helper()
	n := 0
	for _, u := range m.Repackable() {
		if len(u.Experts) == 0 {
			continue
		}
		if err := u.Repack(make([]byte, model.RepackedBytes(u.Matrix)), 1<<20, nil, nil); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// The statistics count exactly: each miss reads its expert's three aligned
// windows once, and a cache large enough reads every expert once.
func TestStatsExact(t *testing.T) {
	pool := newPool(t, 1)
	path, m, _ := writeModel(t, moeSpec())
	l := LayoutOf(m)
	c := newCache(t, m, path, budgetFor(t, l, 48))
	m.ExpertSource = c
	runAll(t, m, pool, tokens(40), 8)
	st := c.Stats()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	var bytes, cached int64
	for il, xs := range l.Experts {
		for e, x := range xs {
			if c.t.find(il, e) < 0 {
				continue
			}
			cached++
			for _, r := range x {
				start, end, _ := span(r)
				bytes += min(end, size) - start // the file's last page reads short
			}
		}
	}
	if st.Misses != cached || st.Reads != 3*cached || st.BytesRead != bytes {
		t.Errorf("misses %d, reads %d, bytes %d; want %d, %d, %d", st.Misses, st.Reads, st.BytesRead, cached, 3*cached, bytes)
	}
	passes := int64(5) // 40 tokens in batches of 8
	if st.Fetches != passes*int64(m.Layers) || st.Requests < st.Fetches*int64(m.ExpertsUsed) {
		t.Errorf("%d fetches of %d experts, want %d fetches of at least %d each", st.Fetches, st.Requests, passes*int64(m.Layers), m.ExpertsUsed)
	}
	if st.Slots != 48 || st.Experts != 48 || st.SlotBytes != c.Sizing().SlotBytes {
		t.Errorf("stats sizes %d slots %d experts %d bytes, sizing %+v", st.Slots, st.Experts, st.SlotBytes, c.Sizing())
	}
	// The second time through, everything is cached.
	runAll(t, m, pool, tokens(40), 8)
	st2 := c.Stats().Sub(st)
	if st2.Misses != 0 || st2.BytesRead != 0 || st2.Hits != st2.Requests || st2.HitRate() != 1 {
		t.Errorf("second run: %+v", st2)
	}
	// The slots are the memory Sizing says.
	var mem int64
	for i := range c.t.slots {
		mem += int64(len(c.t.slots[i].buf))
	}
	if mem != c.Sizing().SlotBytes {
		t.Errorf("slots hold %d bytes, sizing says %d", mem, c.Sizing().SlotBytes)
	}
}

// A file cut short under the cache: the reads come up short, the error is
// reported (once, and by Err), and the experts are served from the model's
// own bytes, so the logits stay right; later passes do not read.
func TestTruncatedFile(t *testing.T) {
	pool := newPool(t, 1)
	path, m, _ := writeModel(t, moeSpec())
	toks := tokens(24)
	want := runAll(t, m, pool, toks, 1)
	l := LayoutOf(m)
	var calls int
	var got error
	c := newCache(t, m, path, budgetFor(t, l, 4), WithErrorHandler(func(err error) { calls++; got = err }))
	// Cut into the first expert of the last block's down matrix.
	cut := l.Experts[len(l.Experts)-1][0][2].Off + 10
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	m.ExpertSource = c
	sameLogits(t, "truncated", runAll(t, m, pool, toks, 1), want, m.Vocab)
	err := c.Err()
	if !errors.Is(err, io.ErrUnexpectedEOF) || calls != 1 || got != err {
		t.Fatalf("err %v (handler called %d times with %v), want io.ErrUnexpectedEOF once", err, calls, got)
	}
	st := c.Stats()
	if st.Fallbacks == 0 {
		t.Errorf("no expert served from the model after the error: %+v", st)
	}
	reads := st.Reads
	sameLogits(t, "after the error", runAll(t, m, pool, toks, 1), want, m.Vocab)
	if st := c.Stats(); st.Reads != reads {
		t.Errorf("%d reads after the error", st.Reads-reads)
	}

	// A file already too short is refused at New.
	if _, err := New(m, path, budgetFor(t, l, 4)); !errors.Is(err, ErrBadModel) {
		t.Errorf("New on a truncated file: %v, want ErrBadModel", err)
	}
}

// Bad arguments are errors that name the problem.
func TestNewErrors(t *testing.T) {
	path, m, _ := writeModel(t, moeSpec())
	l := LayoutOf(m)
	sz, err := Size(l, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		m      *model.Model
		path   string
		budget int64
		opts   []Option
		want   error
	}{
		{"budget too small", m, path, sz.MinBudget - 1, nil, ErrBudget},
		{"missing file", m, filepath.Join(t.TempDir(), "none.gguf"), 1 << 20, nil, os.ErrNotExist},
		{"unknown policy", m, path, 1 << 20, []Option{WithPolicy(Policy(9))}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.m, tc.path, tc.budget, tc.opts...)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("%v, want %v", err, tc.want)
			}
		})
	}
	_, dense, _ := writeModel(t, testutil.TinyQwen3())
	if _, err := New(dense, path, 1<<20); !errors.Is(err, ErrNoExperts) {
		t.Errorf("dense model: %v, want ErrNoExperts", err)
	}
	// The minimum budget itself works.
	c, err := New(m, path, sz.MinBudget)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sizing().Slots != 1 {
		t.Errorf("minimum budget: %d slots", c.Sizing().Slots)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// A decode step with the cache installed allocates nothing, misses and
// reads included.
func TestDecodeAllocatesNothing(t *testing.T) {
	pool := newPool(t, 1)
	for _, spec := range []testutil.ModelSpec{moeSpec(), testutil.TinyGemma4MoE()} {
		path, m, _ := writeModel(t, spec)
		c := newCache(t, m, path, budgetFor(t, LayoutOf(m), 5))
		m.ExpertSource = c
		st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: 1, Cache: kv.F16, Cells: 512})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, m.Vocab)
		pos := 0
		toks := tokens(400)
		step := func() {
			if err := st.Forward(toks[pos:pos+1], pos, out); err != nil {
				t.Fatal(err)
			}
			pos++
		}
		step()
		if n := testing.AllocsPerRun(100, step); n != 0 {
			t.Fatalf("%s: a decode step allocates %.1f times, want 0", spec.Arch, n)
		}
		if s := c.Stats(); s.Misses < 100 {
			t.Errorf("%s: only %d misses: the steps did not read", spec.Arch, s.Misses)
		}
	}
}

// Two sessions decoding at once on two goroutines share the cache, with
// Prefetch hints from a third, and both get the mapped model's logits.
func TestConcurrentSessions(t *testing.T) {
	pool := newPool(t, 2)
	path, ref, _ := writeModel(t, moeSpec())
	toks := tokens(120)
	want := runAll(t, ref, pool, toks, 1)
	m, data := loadModel(t, path)
	poisonExperts(m, data)
	c := newCache(t, m, path, budgetFor(t, LayoutOf(m), 6))
	m.ExpertSource = c
	var wg sync.WaitGroup
	got := make([][]float32, 2)
	stop := make(chan struct{})
	wg.Go(func() {
		ids := []int32{0, 3, 5, 9}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c.Prefetch(i%m.Layers, ids)
			ids[i%len(ids)] = int32((i * 7) % m.Experts)
			_ = c.Stats()
		}
	})
	var sessions sync.WaitGroup
	for g := range got {
		sessions.Go(func() { got[g] = runAll(t, m, pool, toks, 1+3*g) })
	}
	sessions.Wait()
	close(stop)
	wg.Wait()
	want4 := runAll(t, ref, pool, toks, 4)
	sameLogits(t, "session 0", got[0], want, m.Vocab)
	sameLogits(t, "session 1", got[1], want4, m.Vocab)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
}

// Prefetch reads ahead what a later Fetch then finds.
func TestPrefetch(t *testing.T) {
	path, m, _ := writeModel(t, moeSpec())
	c := newCache(t, m, path, budgetFor(t, LayoutOf(m), 8, WithRepack(false)), WithRepack(false))
	ids := []int32{1, 4, 7}
	c.Prefetch(2, ids)
	c.Prefetch(2, ids) // already on its way: nothing more
	c.Fetch(2, []int32{1, 2, 4, 7})
	for _, e := range []int{1, 2, 4, 7} {
		x := c.Expert(2, e)
		want := m.Blocks[2].Experts[e]
		if !bytes.Equal(x.Gate.T.Data, want.Gate.T.Data) || !bytes.Equal(x.Down.T.Data, want.Down.T.Data) ||
			!bytes.Equal(x.Up.T.Data, want.Up.T.Data) || x.Ranges != want.Ranges {
			t.Errorf("expert %d: bytes differ from the file's", e)
		}
	}
	c.Release(2)
	st := c.Stats()
	if st.Prefetches != 3 || st.PrefetchHits != 3 || st.Hits != 3 || st.Misses != 1 {
		t.Errorf("stats %+v: want 3 prefetched and found, 1 miss", st)
	}
	// Hints for a block without experts or out of range are ignored.
	c.Prefetch(-1, ids)
	c.Prefetch(99, ids)
	c.Prefetch(0, []int32{-5, 100})
	if st := c.Stats(); st.Prefetches != 3 {
		t.Errorf("bad hints started %d reads", st.Prefetches-3)
	}
}

// Misuse of the protocol serves the model's experts rather than crash:
// an expert not announced, a block other than the fetched one.
func TestProtocolMisuse(t *testing.T) {
	path, m, _ := writeModel(t, moeSpec())
	c := newCache(t, m, path, budgetFor(t, LayoutOf(m), 4))
	c.Fetch(1, []int32{2, 3})
	if x := c.Expert(1, 9); x != &m.Blocks[1].Experts[9] {
		t.Error("unannounced expert not served from the model")
	}
	if x := c.Expert(0, 2); x != &m.Blocks[0].Experts[2] {
		t.Error("expert of another block not served from the model")
	}
	// Out of order still finds the cached ones.
	if x := c.Expert(1, 3); x == &m.Blocks[1].Experts[3] {
		t.Error("expert 3 not from the cache")
	}
	if x := c.Expert(1, 2); x == &m.Blocks[1].Experts[2] {
		t.Error("expert 2 (out of order) not from the cache")
	}
	c.Release(1)
	c.Fetch(0, []int32{3, 99}) // a bad id: the whole block from the model
	if x := c.Expert(0, 3); x != &m.Blocks[0].Experts[3] {
		t.Error("block with a bad id not served from the model")
	}
	c.Release(0)
}

// Held says whether a block's announced experts are all read into slots
// they keep until Release: then a pass may use them together; with fewer
// slots than announced experts some wait, and it is false.
func TestHeld(t *testing.T) {
	path, m, _ := writeModel(t, moeSpec())
	var _ model.HeldExperts = (*Cache)(nil)
	for _, c := range []struct {
		slots int
		ids   []int32
		held  bool
	}{
		{4, []int32{1, 5, 9, 12}, true},
		{4, []int32{1, 5, 9, 12, 14}, false},
		{2, []int32{0, 1, 2}, false},
		{2, []int32{3, 99}, true}, // a bad id: the model's experts, always readable
	} {
		ch := newCache(t, m, path, budgetFor(t, LayoutOf(m), c.slots))
		// The first pass reads them (Held may be false while it does);
		// the second finds what fits cached.
		for pass := range 2 {
			ch.Fetch(1, c.ids)
			if got := ch.Held(1); pass == 1 && got != c.held {
				t.Errorf("%d slots, experts %v: Held %v, want %v", c.slots, c.ids, got, c.held)
			}
			if ch.Held(0) {
				t.Errorf("%d slots: Held(0) true while block 1 is fetched", c.slots)
			}
			for _, e := range c.ids {
				ch.Expert(1, int(e))
			}
			ch.Release(1)
			if ch.Held(1) {
				t.Errorf("%d slots: Held(1) true after Release", c.slots)
			}
		}
	}
}

// The layout read from the tensor table is the loaded model's, with
// separate gate and up experts and with them fused (ffn_gate_up_exps,
// each expert's gate then its up: two ranges of one slice; Qwen 3.5's and
// Gemma 4's), the room each matrix needs to be repacked in a slot too.
func TestFileLayout(t *testing.T) {
	split := testutil.TinyGemma4MoE()
	split.Gemma4.SplitExperts = true
	for _, spec := range []testutil.ModelSpec{moeSpec(), testutil.TinyQwen35MoEFused(), testutil.TinyGemma4MoE(), split} {
		t.Run(spec.Variant(), func(t *testing.T) {
			path, m, _ := writeModel(t, spec)
			f, _ := testutil.ReadModel(t, path)
			got, want := FileLayout(f, m.Layers), LayoutOf(m)
			if len(got.Experts) != len(want.Experts) || !slices.Equal(got.Repack, want.Repack) {
				t.Fatalf("%d blocks, repacking %v; want %d, %v", len(got.Experts), got.Repack, len(want.Experts), want.Repack)
			}
			for il := range want.Experts {
				if len(want.Experts[il]) == 0 || !slices.Equal(got.Experts[il], want.Experts[il]) {
					t.Fatalf("block %d: %v, want %v", il, got.Experts[il], want.Experts[il])
				}
			}
			if l := FileLayout(f, m.Layers+2); len(l.Experts[m.Layers]) != 0 {
				t.Error("a block past the last has experts")
			}
		})
	}
}

// A repacking cache (one that holds every expert) keeps each expert's
// matrices in the X8 layout at the start of their parts of the slot,
// exactly what repacking the file's rows gives, and the matrices it
// serves multiply those bytes; the file's bytes are gone (T.Data nil).
func TestRepackedSlots(t *testing.T) {
	lattice := moeSpec()
	lattice.Embd, lattice.HeadDim, lattice.ExpertFFN = 256, 64, 256
	// The lattice types' X8 layout takes up to 2.9 times the file's bytes:
	// the slot's room for repacking in place grows with it.
	for _, c := range []struct {
		name string
		typ  quant.Type
	}{{"default", 0}, {"IQ2_XS", quant.IQ2_XS}, {"IQ1_S", quant.IQ1_S}} {
		t.Run(c.name, func(t *testing.T) {
			spec := moeSpec()
			if c.typ != 0 {
				spec = lattice
				spec.ExpertType = c.typ
			}
			testRepackedSlots(t, spec)
		})
	}
}

func testRepackedSlots(t *testing.T, spec testutil.ModelSpec) {
	path, m, _ := writeModel(t, spec)
	if got := m.Blocks[1].Experts[0].Gate.T.Type; spec.ExpertType != 0 && got != spec.ExpertType {
		t.Fatalf("experts of %v, want %v", got, spec.ExpertType)
	}
	l := LayoutOf(m)
	if l.Repack[1] == ([3]int64{}) {
		t.Skip("no X8 kernels for the experts on this CPU")
	}
	c := newCache(t, m, path, budgetFor(t, l, 48))
	ids := []int32{0, 3, 9}
	c.Fetch(1, ids)
	for _, e := range ids {
		x := c.Expert(1, int(e))
		sl := &c.t.slots[c.t.find(1, int(e))]
		cl := &c.t.cs[sl.class]
		file := m.Blocks[1].Experts[e]
		off := int64(0)
		for k, w := range [3]*ops.Matrix{x.Gate, x.Up, x.Down} {
			fw := [3]*ops.Matrix{file.Gate, file.Up, file.Down}[k]
			want := make([]byte, quant.X8Bytes(fw.T.Type, fw.Rows, fw.Cols))
			if err := quant.RepackX8(fw.T.Type, want, fw.T.Data, fw.Rows, fw.Cols); err != nil {
				t.Fatal(err)
			}
			if !w.X8() || w.T.Data != nil || !bytes.Equal(sl.buf[off:off+int64(len(want))], want) {
				t.Errorf("expert %d matrix %d: X8 %v, %d file bytes kept, repacked bytes equal %v",
					e, k, w.X8(), len(w.T.Data), bytes.Equal(sl.buf[off:off+int64(len(want))], want))
			}
			off += cl.parts[k]
		}
	}
	c.Release(1)
}
