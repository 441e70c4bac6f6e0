package residency

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// eachStreamModel runs f as a subtest on a file of each of streamSpecs
// (the first only in -short mode).
func eachStreamModel(t *testing.T, f func(t *testing.T, path string)) {
	specs := streamSpecs()
	if testing.Short() {
		specs = specs[:1]
	}
	for _, spec := range specs {
		t.Run(spec.Arch, func(t *testing.T) { f(t, testutil.TempModel(t, spec)) })
	}
}

// streamSpecs are models with enough layers that a streaming plan keeps
// some resident and streams others.
func streamSpecs() []testutil.ModelSpec {
	llama := testutil.TinyLlama()
	llama.Layers, llama.Embd, llama.FFN = 8, 128, 256
	qwen := testutil.TinyQwen2()
	qwen.Layers, qwen.Embd, qwen.FFN, qwen.WeightType = 6, 256, 512, quant.Q4_K
	gemma := testutil.TinyGemma2()
	gemma.Layers = 7
	qwen35 := testutil.TinyQwen35() // delta-net layers streamed with their recurrent state
	qwen35.Layers = 8
	return []testutil.ModelSpec{llama, qwen, gemma, qwen35}
}

// loaded is a model wired as llm.Load wires it: mapped, planned, built,
// its weights' residency started, and a thread pool.
type loaded struct {
	mp   *mem.Mapping
	sh   *memplan.Shape
	m    *model.Model
	w    *Weights
	pool *ops.Pool
	once sync.Once
}

// request is the plan request of the tests: a 64-token context.
func request(w memplan.WeightsMode, limit int64) memplan.Request {
	return memplan.Request{Weights: w, Limit: limit, Context: 64, Threads: 2, Batch: 64}
}

func load(t *testing.T, path string, r memplan.Request, onPressure func(PressureEvent)) *loaded {
	t.Helper()
	l := &loaded{}
	var err error
	if l.mp, err = mem.Map(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Read(l.mp.ReaderAt(), l.mp.Size())
	if err != nil {
		t.Fatal(err)
	}
	if l.sh, err = memplan.ShapeOf(f, l.mp.Size()); err != nil {
		t.Fatal(err)
	}
	p, err := memplan.Make(l.sh, r)
	if err != nil || !p.Fits {
		t.Fatalf("plan: %v %+v", err, p)
	}
	AdviseBeforeLoad(l.mp, p)
	if l.m, err = model.New(f, l.mp.Bytes()); err != nil {
		t.Fatal(err)
	}
	l.w, err = Start(Config{Mapping: l.mp, Model: l.m, File: f, Shape: l.sh, Plan: p, Auto: r.Weights == memplan.WeightsAuto,
		Budget: r.Limit, OnPressure: onPressure})
	if err != nil {
		t.Fatal(err)
	}
	// The test limits are far below the watcher's pressure threshold:
	// tests drive onPressure by hand.
	l.w.StopWatch()
	l.pool = ops.NewPool(2)
	t.Cleanup(l.close)
	return l
}

func (l *loaded) close() {
	l.once.Do(func() {
		l.w.StopWatch()
		l.pool.Close()
		l.w.Close()
		l.mp.Close()
	})
}

// limitFor is the memory limit under which the model at path, planned as
// r asks, reads exactly n blocks from disk (the first n of the order)
// while its KV caches hold kv bytes.
func limitFor(t *testing.T, path string, r memplan.Request, n int, kv int64) int64 {
	t.Helper()
	sh, err := memplan.ReadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Limit = 1 << 40
	p, err := memplan.Make(sh, r)
	if err != nil {
		t.Fatal(err)
	}
	outside := r.Limit - p.Residency.Pool // every other component
	return outside + p.Residency.Weights(n) + kv
}

// state is a sequence of the model, and the logits of its last token.
type state struct {
	l      *loaded
	st     *model.State
	logits []float32
	n      int
}

func (l *loaded) newState() (*state, error) {
	st, err := l.m.NewState(ops.NewExec(l.pool), model.StateOptions{Batch: 64, Cache: kv.F16, Cells: 64})
	return &state{l: l, st: st, logits: make([]float32, l.m.Vocab)}, err
}

func (s *state) eval(tokens ...int32) ([]float32, error) {
	if err := s.st.Forward(tokens, s.n, s.logits); err != nil {
		return nil, err
	}
	s.n += len(tokens)
	return s.logits, nil
}

// greedyRun evaluates a prompt then 20 greedy tokens and returns the
// logits of every step; between steps it calls between (if not nil).
func greedyRun(l *loaded, between func(step int)) ([][]float32, error) {
	s, err := l.newState()
	if err != nil {
		return nil, err
	}
	logits, err := s.eval(1, 40, 41, 42, 100, 7)
	if err != nil {
		return nil, err
	}
	var steps [][]float32
	for step := range 20 {
		steps = append(steps, append([]float32(nil), logits...))
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		if between != nil {
			between(step)
		}
		if logits, err = s.eval(int32(best)); err != nil {
			return nil, err
		}
	}
	return append(steps, append([]float32(nil), logits...)), nil
}

func compareSteps(got, want [][]float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d steps, want %d", len(got), len(want))
	}
	for s := range want {
		for i := range want[s] {
			if got[s][i] != want[s][i] {
				return fmt.Errorf("step %d logit %d = %v, resident %v", s, i, got[s][i], want[s][i])
			}
		}
	}
	return nil
}

// reference is the logits of the all-resident model in the file's layout,
// its experts alone repacked when experts is set (as an expert cache
// holds them).
func reference(t *testing.T, path string, experts bool) [][]float32 {
	t.Helper()
	ref := load(t, path, request(memplan.WeightsResident, 1<<40), nil)
	for _, u := range ref.m.Repackable() {
		if experts && len(u.Experts) > 0 {
			if err := u.Repack(make([]byte, model.RepackedBytes(u.Matrix)), 1<<20, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := greedyRun(ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref.close()
	return want
}

// evictFile drops the file's pages from the page cache, reporting whether
// that worked (not on tmpfs).
func evictFile(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	dropPageCache(f)
	m, err := mem.Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r, err := m.Resident(0, m.Size())
	return err == nil && r == 0
}

// waitAhead waits up to 10 s for the parts of the file Start read ahead
// to be in the page cache: a read-ahead still in flight when a block
// leaves memory would put its pages back.
func waitAhead(t *testing.T, l *loaded) {
	t.Helper()
	for range 1000 {
		all := true
		for _, r := range l.w.ahead {
			if n, err := l.mp.Resident(r.Off, r.Len); err != nil || n != r.Len {
				all = false
			}
		}
		if all {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Log("the read-ahead did not finish in 10 s")
}

// uncached reports whether the streamed blocks' pages are out of the page
// cache (apart from pages shared with their neighbours), waiting up to 3 s
// for the read-ahead of resident blocks to finish and the mover's sweep of
// what readahead put into the others.
func uncached(l *loaded) error {
	var err error
	for range 300 {
		err = nil
		for _, il := range l.w.OnDisk() {
			L := l.m.Blocks[il]
			lo, hi := (L.Start+4095)&^4095, L.End&^4095
			if hi <= lo {
				continue
			}
			if r, rerr := l.mp.Resident(lo, hi-lo); rerr != nil || r != 0 {
				err = fmt.Errorf("streamed block %d: %d bytes of [%d, %d) in the page cache (%v)", il, r, lo, hi, rerr)
			}
		}
		if err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

func TestStreamingMatchesResident(t *testing.T) {
	eachStreamModel(t, func(t *testing.T, path string) {
		// The streaming model goes first: a resident one reads the
		// whole file ahead, in the background, even after it is closed.
		evicted := evictFile(t, path)
		r := request(memplan.WeightsStreaming, 0)
		r.Limit = limitFor(t, path, r, 3, kv.Bytes((&l0(t, path).Config).KVConfig(kv.F16, 64)))
		l := load(t, path, r, nil)
		if p := l.w.Plan(); p.Weights != memplan.WeightsStreaming || p.KVType != kv.F16 || len(p.Steps) != 0 {
			t.Fatalf("plan: weights %v, KV %v, steps %v; want streaming, F16, no degradation", p.Weights, p.KVType, p.Steps)
		}
		// Before any session: the blocks that do not fit beside an
		// empty cache, three with a full one.
		order := memplan.DiskOrder(len(l.m.Blocks))
		n0, _ := l.w.res.OnDisk(0)
		if got, want := l.w.OnDisk(), slices.Sorted(slices.Values(order[:n0])); !slices.Equal(got, want) {
			t.Fatalf("streamed at start %v, want %v", got, want)
		}
		if evicted {
			waitAhead(t, l)
		}
		l.w.KVBudget().Force(kv.Bytes((&l.m.Config).KVConfig(kv.F16, 64)))
		if got, want := l.w.OnDisk(), slices.Sorted(slices.Values(order[:3])); !slices.Equal(got, want) {
			t.Fatalf("streamed with a full cache %v, want %v", got, want)
		}
		if evicted {
			if err := uncached(l); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Logf("the file system keeps files cached; page cache not checked")
		}
		got, err := greedyRun(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := reference(t, path, false)
		if err := compareSteps(got, want); err != nil {
			t.Fatalf("streaming: %v", err)
		}
		// Two sessions on two goroutines share the reads.
		for g, err := range <-concurrentRuns(l, want, 2, nil) {
			if err != nil {
				t.Fatalf("concurrent session %d: %v", g, err)
			}
		}
		if err := l.w.source.Err(); err != nil {
			t.Fatalf("read error: %v", err)
		}
		if st := l.w.Stats(); st.OnDisk != 3 || st.Loads < 3*21 || st.BytesRead == 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// concurrentRuns runs n greedy sessions of l, each on its goroutine and
// compared with want, and again while again (nil: never) says so; the
// channel yields their errors once all are done.
func concurrentRuns(l *loaded, want [][]float32, n int, again func() bool) <-chan []error {
	errs := make([]error, n)
	done := make(chan []error, 1)
	var wg sync.WaitGroup
	for g := range errs {
		wg.Go(func() {
			for {
				got, err := greedyRun(l, nil)
				if err == nil {
					err = compareSteps(got, want)
				}
				errs[g] = err
				if err != nil || again == nil || !again() {
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		done <- errs
	}()
	return done
}

// l0 is the model at path, for its configuration.
func l0(t *testing.T, path string) *model.Model {
	t.Helper()
	f, data := testutil.ReadModel(t, path)
	m, err := model.New(f, data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitOnDisk waits up to 10 s for the blocks read from disk to be want.
func waitOnDisk(t *testing.T, w *Weights, want []int) {
	t.Helper()
	var got []int
	for range 1000 {
		if got = w.OnDisk(); slices.Equal(got, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("blocks on disk %v, want %v", got, want)
}

// TestResidencyFollowsKV checks the decisions exactly: as the KV caches
// reserve bytes, the fewest blocks that leave room for them move to disk,
// in DiskOrder, their pages released; as the caches give bytes back,
// the blocks come back in reverse order while each fits with one block to
// spare (the hysteresis), and the last ones all at once, the read buffers
// given back first, once every block fits.
func TestResidencyFollowsKV(t *testing.T) {
	spec := streamSpecs()[0]
	path := testutil.TempModel(t, spec)
	evicted := evictFile(t, path)
	r := request(memplan.WeightsStreaming, 0)
	sh, err := memplan.ReadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	var h int64 // the hysteresis: the largest block
	for il := range sh.BlockRanges {
		h = max(h, sh.BlockMemory(il))
	}
	// Room for every block and base bytes of KV.
	base := 1000 + h
	r.Limit = limitFor(t, path, r, 0, base)
	l := load(t, path, r, nil)
	res := l.w.res
	order := res.Order
	if want := []int{4, 0, 2, 6, 1, 3, 5, 7}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if res.Buffers <= res.Blocks[order[0]] || slices.Max(res.Blocks) != h {
		t.Fatalf("buffers %d for blocks of %v", res.Buffers, res.Blocks)
	}
	b := l.w.KVBudget()
	onDisk := func(n int) []int { return slices.Sorted(slices.Values(order[:n])) }
	check := func(what string, n int) {
		t.Helper()
		if got := l.w.OnDisk(); !slices.Equal(got, onDisk(n)) {
			t.Fatalf("%s: blocks on disk %v, want %v", what, got, onDisk(n))
		}
		if got, want := l.w.Room(b.InUse()), res.Pool-res.Weights(n)-b.InUse(); n > 0 && got != want {
			t.Fatalf("%s: room %d, want %d", what, got, want)
		}
		if evicted {
			if err := uncached(l); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	if evicted {
		waitAhead(t, l)
	}
	check("start", 0)
	if !b.Reserve(base) {
		t.Fatal("KV that fits beside every block refused")
	}
	check("base bytes of KV", 0)
	// One byte more: the first block out is not enough, its buffers cost
	// more than it frees. Blocks go until the buffers are paid for.
	need := 0
	for n := 1; n <= len(order); n++ {
		if res.Weights(n)+base+1 <= res.Pool {
			need = n
			break
		}
	}
	if need < 2 {
		t.Fatalf("%d blocks pay for the buffers; the test wants more than one", need)
	}
	if !b.Reserve(1) {
		t.Fatal("one more byte refused")
	}
	check("one byte more", need)
	// Then one block per block's worth of KV.
	room := l.w.Room(b.InUse())
	if !b.Reserve(room) {
		t.Fatal("the room left refused")
	}
	check("room used up", need)
	if !b.Reserve(1) {
		t.Fatal("one byte past the room refused")
	}
	check("one byte past the room", need+1)
	if !b.Reserve(res.Blocks[order[need]] - 1) {
		t.Fatal("the block's worth refused")
	}
	check("the block's worth", need+1)
	if !b.Reserve(1) {
		t.Fatal("one more byte refused")
	}
	check("one more byte", need+2)
	// Everything out; then nothing more.
	if max := res.MaxKV(); !b.Reserve(max-b.InUse()) || b.Reserve(1) {
		t.Fatalf("reserving up to MaxKV %d and one past it", max)
	}
	check("every block on disk", len(order))
	if st := l.w.Stats(); st.Evictions != int64(len(order)) || st.Restores != 0 {
		t.Fatalf("stats %+v", st)
	}

	// Giving back the largest block's worth brings none back; twice that
	// brings one.
	b.Release(h)
	time.Sleep(50 * time.Millisecond)
	check("a block's worth released", len(order))
	b.Release(h)
	waitOnDisk(t, l.w, onDisk(len(order)-1))
	// Down to base bytes of KV: blocks come back while one more and the
	// buffers fit with a block to spare; not all of them.
	b.Release(b.InUse() - base)
	stuck := len(order)
	for stuck > 0 && res.Weights(stuck-1)+base+h+map[bool]int64{true: res.Buffers}[stuck == 1] <= res.Pool {
		stuck--
	}
	if stuck == 0 || stuck == len(order) {
		t.Fatalf("%d blocks stay on disk; the test wants some, not all", stuck)
	}
	waitOnDisk(t, l.w, onDisk(stuck))
	time.Sleep(50 * time.Millisecond)
	check("base bytes of KV again", stuck)
	// A block's worth less: every block fits with one to spare, and all
	// come back at once.
	b.Release(h)
	waitOnDisk(t, l.w, nil)
	if st := l.w.Stats(); st.Evictions != int64(len(order)) || st.Restores != int64(len(order)) {
		t.Fatalf("stats %+v", st)
	}
	for _, L := range l.m.Blocks {
		lo, hi := (L.Start+4095)&^4095, L.End&^4095
		if n, err := l.mp.Resident(lo, hi-lo); err == nil && n != hi-lo {
			t.Fatalf("a block back in memory has %d of %d bytes cached", n, hi-lo)
		}
	}
	l.w.mu.Lock()
	buffers := l.w.buffers
	l.w.mu.Unlock()
	if buffers {
		t.Fatal("read buffers held with every block resident")
	}
}

// Switching between passes, while sessions generate on two goroutines and
// the KV budget swings between all blocks resident and all on disk, keeps
// the logits of the resident model bit for bit.
func TestSwitchingKeepsLogits(t *testing.T) {
	eachStreamModel(t, func(t *testing.T, path string) {
		want := reference(t, path, false)
		r := request(memplan.WeightsAuto, 0)
		r.Limit = limitFor(t, path, r, 0, 1000)
		l := load(t, path, r, nil)
		b := l.w.KVBudget()
		maxKV := l.w.res.MaxKV()
		steps := []int64{1000, maxKV / 3, maxKV, 0, maxKV / 2, maxKV, 500, maxKV * 2 / 3}
		// The sessions run again until blocks have both left memory and
		// come back while they ran (or 30 s have passed), so a fast machine
		// cannot finish them before the budget has moved anything.
		var switched atomic.Bool
		runs := concurrentRuns(l, want, 2, func() bool { return !switched.Load() })
		deadline := time.Now().Add(30 * time.Second)
		var held int64
		moves := 0
		var errs []error
	swing:
		for i := 0; ; i++ {
			select {
			case errs = <-runs:
				break swing
			default:
			}
			if st := l.w.Stats(); (st.Evictions > 0 && st.Restores > 0 && i >= len(steps)) || time.Now().After(deadline) {
				switched.Store(true)
			}
			target := steps[i%len(steps)]
			if target > held {
				if b.Reserve(target - held) {
					held = target
				}
			} else {
				b.Release(held - target)
				held = target
			}
			moves++
			time.Sleep(time.Millisecond)
		}
		for g, err := range errs {
			if err != nil {
				t.Fatalf("session %d: %v", g, err)
			}
		}
		st := l.w.Stats()
		t.Logf("%d budget moves, %d evictions, %d restores, %d blocks read", moves, st.Evictions, st.Restores, st.Loads)
		if st.Evictions == 0 {
			t.Fatal("no block left memory")
		}
	})
}

// A decode step allocates nothing, whether blocks are resident or read
// from disk.
func TestDecodeAllocatesNothing(t *testing.T) {
	path := testutil.TempModel(t, streamSpecs()[0])
	r := request(memplan.WeightsStreaming, 0)
	r.Limit = limitFor(t, path, r, 0, 1000)
	l := load(t, path, r, nil)
	s, err := l.newState()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eval(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	for _, kvBytes := range []int64{1000, l.w.res.MaxKV()} {
		b := l.w.KVBudget()
		b.Release(b.InUse())
		if !b.Reserve(kvBytes) {
			t.Fatal("reserve refused")
		}
		waitOnDisk(t, l.w, func() []int {
			n, _ := l.w.res.OnDisk(kvBytes)
			return slices.Sorted(slices.Values(l.w.res.Order[:n]))
		}())
		step := func() {
			s.n = 3
			if err := s.st.Forward([]int32{5}, s.n, s.logits); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if n := testing.AllocsPerRun(20, step); n != 0 {
			t.Fatalf("%d blocks on disk: a decode step allocates %.1f times, want 0", len(l.w.OnDisk()), n)
		}
	}
}

func TestMemoryPressureOption(t *testing.T) {
	path := testutil.TempModel(t, testutil.TinyLlama())
	var events []PressureEvent
	l := load(t, path, request(memplan.WeightsAuto, 1<<40), func(e PressureEvent) { events = append(events, e) })
	// The watcher polls every 500 ms; drive it by hand instead.
	l.w.StopWatch()
	l.w.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	if !l.w.Short() {
		t.Fatal("Short false after a pressure report")
	}
	l.w.onPressure(mem.Pressure{Available: 900 << 20, Total: 1 << 30, Relieved: true})
	if l.w.Short() {
		t.Fatal("Short true after relief")
	}
	if len(events) != 2 || events[0].Available != 10<<20 || events[0].Limit != 1<<30 || events[0].Action == "" {
		t.Fatalf("events %+v", events)
	}
}

// With an explicit budget, headroom is what the process's anonymous memory
// leaves of it.
func TestHeadroomWithExplicitBudget(t *testing.T) {
	path := testutil.TempModel(t, testutil.TinyLlama())
	l := load(t, path, request(memplan.WeightsAuto, 1<<30), nil)
	lim, err := l.w.headroom()
	if err != nil {
		t.Skipf("no memory figures on this system: %v", err)
	}
	if lim.Available <= 0 || lim.Available > 1<<30 {
		t.Fatalf("headroom %+v, want within (0, 1 GiB]", lim)
	}
}

// TestPressureMovesBlocks drives pressure reports into a model whose
// blocks are all resident: half of them move to disk while a session keeps
// running, with logits unchanged bit for bit; when pressure ends they come
// back. A model loaded WithWeights(WeightsResident) never moves.
func TestPressureMovesBlocks(t *testing.T) {
	spec := streamSpecs()[0]
	path := testutil.TempModel(t, spec)
	want := reference(t, path, false)
	l := load(t, path, request(memplan.WeightsAuto, 1<<40), nil)
	l.w.StopWatch()
	n := len(l.m.Blocks)
	got, err := greedyRun(l, func(step int) {
		switch step {
		case 5:
			l.w.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
			if len(l.w.OnDisk()) != n/2 {
				t.Errorf("after pressure: %d of %d blocks on disk, want half", len(l.w.OnDisk()), n)
			}
		case 8:
			l.w.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "psi"})
			if len(l.w.OnDisk()) != n/2+n/4 {
				t.Errorf("after more pressure: %d of %d blocks on disk, want %d", len(l.w.OnDisk()), n, n/2+n/4)
			}
		case 12:
			l.w.onPressure(mem.Pressure{Available: 900 << 20, Total: 1 << 30, Relieved: true})
			waitOnDisk(t, l.w, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := compareSteps(got, want); err != nil {
		t.Fatal(err)
	}
	if p := l.w.Plan(); p.Weights != memplan.WeightsStreaming || len(p.Steps) == 0 {
		t.Fatalf("plan after pressure: %v %v", p.Weights, p.Steps)
	}

	forced := load(t, path, request(memplan.WeightsResident, 1<<40), nil)
	forced.w.StopWatch()
	forced.w.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	if len(forced.w.OnDisk()) != 0 || forced.w.Plan().Weights != memplan.WeightsResident || forced.m.Source != nil {
		t.Fatal("a model loaded WithWeights(WeightsResident) moved blocks to disk")
	}
}

// A mixture-of-experts model whose experts do not fit reads them from disk
// into an expert cache sized by the plan; no block moves, the expert
// tensors' pages are out of the page cache, and the logits are the
// resident model's. With Request.Repack and room for every expert the
// cache holds them in the X8 layout, and the logits are those of the
// resident model with its experts repacked.
func TestExpertsFromDisk(t *testing.T) {
	// gpt-oss: its experts' biases stay with the block, copied at load;
	// lfm2moe: its layer 0 has no experts, the others a selection bias;
	// nemotron_h_moe: experts without a gate. Every decoder with experts
	// in testutil's registry, and qwen3moe once more at 4 layers.
	qwen := testutil.TinyQwen3MoE()
	qwen.Layers = 4
	dense := func(s testutil.ModelSpec) bool { return s.Experts == 0 }
	for _, spec := range append(slices.DeleteFunc(testutil.TinyDecoders(), dense), qwen) {
		for _, repack := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/repack=%v", spec.Variant(), repack), func(t *testing.T) {
				testExpertsFromDisk(t, spec, repack)
			})
		}
	}
}

// TestSmallThinkerExpertsFromDisk is TestExpertsFromDisk for smallthinker,
// whose router reads the layer's input from before attention: the copy
// of it must survive the pass's attention and reach the experts read from
// disk.
func TestSmallThinkerExpertsFromDisk(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinySmallThinker(), testutil.TinySmallThinkerSWA()} {
		for _, repack := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/layers=%d/repack=%v", spec.Variant(), spec.Layers, repack), func(t *testing.T) {
				testExpertsFromDisk(t, spec, repack)
			})
		}
	}
}

func testExpertsFromDisk(t *testing.T, spec testutil.ModelSpec, repack bool) {
	path := testutil.TempModel(t, spec)
	// The streaming model goes first: a resident one reads the whole file
	// ahead, in the background, even after it is closed.
	evicted := evictFile(t, path)
	sh, err := memplan.ReadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	r := request(memplan.WeightsAuto, 0)
	r.Limit = 1 << 40
	p, err := memplan.Make(sh, r)
	if err != nil {
		t.Fatal(err)
	}
	r.Repack = repack
	// A third of the experts' bytes beside everything else; with repack,
	// streaming with room for every expert, which a cache repacks only
	// then (expertcache.WithRepack).
	r.Limit = p.Total - sh.Experts()*2/3
	if repack {
		r.Weights, r.Limit = memplan.WeightsStreaming, 1<<40
	}
	l := load(t, path, r, nil)
	res := l.w.Plan().Residency
	if l.w.experts == nil || res.Experts <= 0 || (!repack && res.Experts >= sh.Experts()) || l.m.ExpertSource == nil {
		t.Fatalf("expert cache installed %v, budget %d of %d", l.w.experts != nil, res.Experts, sh.Experts())
	}
	if sz := l.w.experts.Sizing(); sz.Bytes() > res.Experts {
		t.Fatalf("cache of %d bytes for a budget of %d", sz.Bytes(), res.Experts)
	}
	if want := repack && sh.ExpertsX8(); l.w.Plan().RepackExperts != want || l.w.experts.Sizing().Repacked != want {
		t.Fatalf("RepackExperts %v, the cache's %v, want %v (asked %v, X8 kernels %v)",
			l.w.Plan().RepackExperts, l.w.experts.Sizing().Repacked, want, repack, sh.ExpertsX8())
	}
	// In a file this small (read_ahead_kb is often several MiB) the
	// readahead around any fault reaches the experts; the sweep drops
	// them. The mover runs it once a second (uncached waits for that in
	// the tests of whole blocks); here it is called directly, so that
	// thirty-odd models do not each wait out a tick.
	if evicted {
		waitAhead(t, l)
		f, _ := testutil.ReadModel(t, path)
		var err error
		for range 300 {
			l.w.sweep()
			if err = expertsUncached(l, f); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := greedyRun(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := compareSteps(got, reference(t, path, repack)); err != nil {
		t.Fatal(err)
	}
	st := l.w.Stats()
	if st.OnDisk != 0 || st.Experts.Requests == 0 || st.Experts.Misses == 0 || st.BytesRead == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// expertsUncached reports whether the expert tensors' pages are out of
// the page cache (apart from pages shared with other tensors).
func expertsUncached(l *loaded, f *gguf.File) error {
	for _, ti := range f.Tensors {
		if !memplan.IsExpertTensor(ti.Name) {
			continue
		}
		lo, hi := (ti.Offset+4095)&^4095, (ti.Offset+ti.Size)&^4095
		if n, err := l.mp.Resident(lo, hi-lo); hi > lo && (err != nil || n != 0) {
			return fmt.Errorf("%s: %d bytes cached (%v)", ti.Name, n, err)
		}
	}
	return nil
}
