package residency

import (
	"fmt"
	"os"
	"sync"
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

// streamSpecs are models with enough layers that a streaming plan keeps
// some resident and streams others.
func streamSpecs() []testutil.ModelSpec {
	llama := testutil.TinyLlama()
	llama.Layers, llama.Embd, llama.FFN = 8, 128, 256
	qwen := testutil.TinyQwen2()
	qwen.Layers, qwen.Embd, qwen.FFN, qwen.WeightType = 6, 256, 512, quant.Q4_K
	gemma := testutil.TinyGemma2()
	gemma.Layers = 7
	return []testutil.ModelSpec{llama, qwen, gemma}
}

// loaded is a model wired as llm.Load wires it: mapped, planned, built,
// its weights' residency started, and a thread pool.
type loaded struct {
	mp   *mem.Mapping
	sh   *memplan.Shape
	m    *model.Model
	w    *Weights
	pool *ops.Pool
	rw   sync.RWMutex // the model's lock: passes read, switches write
}

func load(t *testing.T, path string, r memplan.Request, onPressure func(PressureEvent)) *loaded {
	t.Helper()
	if r.Context == 0 {
		r.Context = 64
	}
	r.Threads, r.Batch = 2, 512
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
		Budget: r.Limit, OnPressure: onPressure, Exclusive: &l.rw})
	if err != nil {
		t.Fatal(err)
	}
	l.pool = ops.NewPool(2)
	t.Cleanup(l.close)
	return l
}

func (l *loaded) close() {
	l.w.StopWatch()
	l.rw.Lock()
	defer l.rw.Unlock()
	if l.pool != nil {
		l.pool.Close()
		l.w.Close()
		l.mp.Close()
		l.pool = nil
	}
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

// eval runs tokens as a session's Eval does, under the model's read lock.
func (s *state) eval(tokens ...int32) ([]float32, error) {
	s.l.rw.RLock()
	defer s.l.rw.RUnlock()
	if err := s.st.Forward(tokens, s.n, s.logits); err != nil {
		return nil, err
	}
	s.n += len(tokens)
	return s.logits, nil
}

// streamingLimit is a memory limit under which the plan for path streams
// about three layers' worth more than the minimum.
func streamingLimit(t *testing.T, path string) int64 {
	t.Helper()
	sh, err := memplan.ReadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := memplan.Make(sh, memplan.Request{Weights: memplan.WeightsStreaming, Limit: 1 << 40, Context: 64, Threads: 2, Batch: 512})
	if err != nil {
		t.Fatal(err)
	}
	base := p.Total - p.ResidentWeights
	return base + sh.ResidentWeights() - 3*sh.LayerBytes[0]
}

// greedyRun evaluates a prompt then 20 greedy tokens and returns the
// logits of every step.
func greedyRun(l *loaded) ([][]float32, error) {
	s, err := l.newState()
	if err != nil {
		return nil, err
	}
	logits, err := s.eval(1, 40, 41, 42, 100, 7)
	if err != nil {
		return nil, err
	}
	var steps [][]float32
	for range 20 {
		steps = append(steps, append([]float32(nil), logits...))
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
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

// evictFile writes the file's pages back and drops them from the page
// cache, reporting whether that worked (not on tmpfs).
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

func TestStreamingMatchesResident(t *testing.T) {
	for _, spec := range streamSpecs() {
		t.Run(spec.Arch, func(t *testing.T) {
			path := testutil.TempModel(t, spec)
			// The streaming model goes first: the resident one reads the whole
			// file ahead, in the background, even after it is closed.
			evicted := evictFile(t, path)
			l := load(t, path, memplan.Request{Weights: memplan.WeightsStreaming, Limit: streamingLimit(t, path)}, nil)
			p := l.w.Plan()
			if p.Weights != memplan.WeightsStreaming || p.KVType != kv.F16 || len(p.Steps) != 0 {
				t.Fatalf("plan: weights %v, KV %v, steps %v; want streaming, F16, no degradation", p.Weights, p.KVType, p.Steps)
			}
			layers := len(l.m.Blocks)
			if n := len(l.w.OnDisk()); n < 2 || n >= layers {
				t.Fatalf("%d of %d layers streamed, want some but not all", n, layers)
			}
			// Loading must leave the streamed layers out of the page cache.
			// (Once tokens run, the kernel's readahead around resident pages
			// may reach into them: in a file this small, 8 MiB of it covers
			// everything, so that is not checked.)
			if evicted && waitResident(l) {
				checkUncached(t, l)
			} else {
				t.Logf("the file system keeps files cached, or reading ahead did not finish; page cache not checked")
			}
			got, err := greedyRun(l)
			if err != nil {
				t.Fatal(err)
			}

			ref := load(t, path, memplan.Request{Weights: memplan.WeightsResident, Limit: 1 << 40}, nil)
			want, err := greedyRun(ref)
			ref.close()
			if err != nil {
				t.Fatal(err)
			}
			if err := compareSteps(got, want); err != nil {
				t.Fatalf("streaming: %v", err)
			}

			// Two sessions on two goroutines share the stream.
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for g := range errs {
				wg.Go(func() {
					got, err := greedyRun(l)
					if err == nil {
						err = compareSteps(got, want)
					}
					errs[g] = err
				})
			}
			wg.Wait()
			for g, err := range errs {
				if err != nil {
					t.Fatalf("concurrent session %d: %v", g, err)
				}
			}
			if err := l.w.source.Err(); err != nil {
				t.Fatalf("stream error: %v", err)
			}
		})
	}
}

// waitResident waits up to 10 s for the resident weights to be read
// ahead, reporting whether they were.
func waitResident(l *loaded) bool {
	for range 1000 {
		all := true
		for _, r := range l.w.ahead {
			if n, err := l.mp.Resident(r.Off, r.Len); err != nil || n != r.Len {
				all = false
			}
		}
		if all {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// checkUncached checks that the streamed layers were never read through
// the mapping: apart from pages shared with their neighbours, none of
// their pages is cached.
func checkUncached(t *testing.T, l *loaded) {
	t.Helper()
	for _, il := range l.w.OnDisk() {
		L := l.m.Blocks[il]
		lo, hi := (L.Start+8191)&^4095, L.End&^4095-4096
		if hi <= lo {
			continue
		}
		if r, err := l.mp.Resident(lo, hi-lo); err != nil || r != 0 {
			t.Errorf("streamed layer %d: %d bytes of [%d, %d) in the page cache (%v)", il, r, lo, hi, err)
		}
	}
}

// Streaming chooses evenly spread layers, as many as the budget demands.
func TestStreamedLayers(t *testing.T) {
	for _, tc := range []struct {
		s, n int
		want string
	}{
		{0, 8, "[]"},
		{1, 8, "[4]"},
		{2, 8, "[2 6]"},
		{3, 8, "[1 4 6]"},
		{8, 8, "[0 1 2 3 4 5 6 7]"},
		{13, 32, "[1 3 6 8 11 13 16 18 20 23 25 28 30]"},
	} {
		if got := fmt.Sprint(spread(tc.s, tc.n)); got != tc.want {
			t.Errorf("spread(%d, %d) = %s, want %s", tc.s, tc.n, got, tc.want)
		}
	}
	path := testutil.TempModel(t, streamSpecs()[0])
	l := load(t, path, memplan.Request{Limit: 1 << 40}, nil)
	sh := l.sh
	var blocks int64
	for _, b := range sh.LayerBytes {
		blocks += b
	}
	nonLayer := sh.ResidentWeights() - blocks
	layer := sh.LayerBytes[0]
	var span int64
	for _, L := range l.m.Blocks {
		span = max(span, L.End-L.Start)
	}
	for resident := range 9 {
		budget := nonLayer + memplan.DiskBuffers*layer + int64(resident)*span
		got := diskLayers(l.m.Blocks, sh.BlockBudget(budget))
		if len(got) != 8-resident {
			t.Errorf("budget for %d resident layers: streamed %v", resident, got)
		}
	}
}

func TestMemoryPressureOption(t *testing.T) {
	path := testutil.TempModel(t, testutil.TinyLlama())
	var events []PressureEvent
	l := load(t, path, memplan.Request{Limit: 1 << 40}, func(e PressureEvent) { events = append(events, e) })
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
	l := load(t, path, memplan.Request{Limit: 1 << 30}, nil)
	lim, err := l.w.headroom()
	if err != nil {
		t.Skipf("no memory figures on this system: %v", err)
	}
	if lim.Available <= 0 || lim.Available > 1<<30 {
		t.Fatalf("headroom %+v, want within (0, 1 GiB]", lim)
	}
}

// TestPressureSwitchesToStreaming drives a pressure report into a model
// whose weights the plan kept resident: it must switch to streaming half of
// its blocks while sessions keep running, with logits unchanged bit for
// bit, and a model loaded WithWeights(WeightsResident) must not switch.
func TestPressureSwitchesToStreaming(t *testing.T) {
	spec := streamSpecs()[0]
	path := testutil.TempModel(t, spec)
	ref := load(t, path, memplan.Request{Limit: 1 << 40}, nil)
	l := load(t, path, memplan.Request{Limit: 1 << 40}, nil)
	l.w.StopWatch()
	rs, err := ref.newState()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := l.newState()
	if err != nil {
		t.Fatal(err)
	}
	step := func(tok ...int32) {
		a, err := rs.eval(tok...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ms.eval(tok...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("after %d tokens: logit %d is %v, resident model %v", ms.n, i, b[i], a[i])
			}
		}
	}
	step(1, 40, 41, 42)
	l.w.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	deadline := time.Now().Add(10 * time.Second)
	for !l.w.switched.Load() {
		if time.Now().After(deadline) {
			t.Fatal("no switch to streaming 10 s after a pressure report")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.rw.RLock()
	p := l.w.Plan()
	l.rw.RUnlock()
	if p.Weights != memplan.WeightsStreaming || len(l.w.OnDisk()) != len(l.m.Blocks)/2 {
		t.Fatalf("after pressure: weights %v, %d of %d blocks streamed", p.Weights, len(l.w.OnDisk()), len(l.m.Blocks))
	}
	for i := range 8 {
		step(int32(50 + i))
	}

	forced := load(t, path, memplan.Request{Weights: memplan.WeightsResident, Limit: 1 << 40}, nil)
	forced.w.StopWatch()
	forced.w.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	time.Sleep(50 * time.Millisecond)
	if forced.w.switched.Load() || forced.w.Plan().Weights != memplan.WeightsResident {
		t.Fatal("a model loaded WithWeights(WeightsResident) switched to streaming")
	}
}
