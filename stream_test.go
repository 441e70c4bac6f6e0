package llm

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/mem"
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

// streamingLimit is a memory limit under which the plan for path streams
// about three layers' worth more than the minimum.
func streamingLimit(t *testing.T, path string) int64 {
	t.Helper()
	p, err := Plan(path, WithWeights(WeightsStreaming), WithMemoryLimit(1<<40), WithContextSize(64))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := readShape(path)
	if err != nil {
		t.Fatal(err)
	}
	base := p.Total - p.ResidentWeights
	return base + sh.residentWeights() - 3*sh.layerBytes[0]
}

// greedyRun evaluates a prompt then 20 greedy tokens and returns the
// logits of every step.
func greedyRun(m *Model) ([][]float32, error) {
	s, err := m.NewSession()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx := context.Background()
	logits, err := s.Eval(ctx, []int32{1, 40, 41, 42, 100, 7})
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
		if logits, err = s.Eval(ctx, []int32{int32(best)}); err != nil {
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
			path := writeSpec(t, spec)
			opts := []Option{WithThreads(2), WithContextSize(64)}
			// The streaming model goes first: the resident one reads the whole
			// file ahead, in the background, even after it is closed.
			evicted := evictFile(t, path)
			m, err := Load(path, append(opts, WithWeights(WeightsStreaming), WithMemoryLimit(streamingLimit(t, path)))...)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			p := m.Plan()
			if p.Weights != WeightsStreaming || p.KVType != KVF16 || len(p.Steps) != 0 {
				t.Fatalf("plan: weights %v, KV %v, steps %v; want streaming, F16, no degradation", p.Weights, p.KVType, p.Steps)
			}
			layers := m.Info().Layers
			if n := len(m.ws.streamed); n < 2 || n >= layers {
				t.Fatalf("%d of %d layers streamed, want some but not all", n, layers)
			}
			// Loading must leave the streamed layers out of the page cache.
			// (Once tokens run, the kernel's readahead around resident pages
			// may reach into them: in a file this small, 8 MiB of it covers
			// everything, so that is not checked.)
			if evicted && waitResident(m) {
				checkUncached(t, m)
			} else {
				t.Logf("the file system keeps files cached, or reading ahead did not finish; page cache not checked")
			}
			got, err := greedyRun(m)
			if err != nil {
				t.Fatal(err)
			}

			ref, err := Load(path, append(opts, WithWeights(WeightsResident))...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := greedyRun(ref)
			ref.Close()
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
					got, err := greedyRun(m)
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
			if err := m.ws.source.Err(); err != nil {
				t.Fatalf("stream error: %v", err)
			}

		})
	}
}

// waitResident waits up to 10 s for the resident weights to be read
// ahead, reporting whether they were.
func waitResident(m *Model) bool {
	for range 1000 {
		all := true
		for _, r := range m.ws.ahead {
			if n, err := m.mapping.Resident(r.Off, r.Len); err != nil || n != r.Len {
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
func checkUncached(t *testing.T, m *Model) {
	t.Helper()
	for _, il := range m.ws.streamed {
		L := m.m.Blocks[il]
		lo, hi := (L.Start+8191)&^4095, L.End&^4095-4096
		if hi <= lo {
			continue
		}
		if r, err := m.mapping.Resident(lo, hi-lo); err != nil || r != 0 {
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
	path := writeSpec(t, streamSpecs()[0])
	sh, err := readShape(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(path, WithContextSize(64))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	nonLayer := sh.residentWeights() - sum(sh.layerBytes)
	layer := sh.layerBytes[0]
	var span int64
	for _, L := range m.m.Blocks {
		span = max(span, L.End-L.Start)
	}
	for resident := range 9 {
		budget := nonLayer + streamBuffers*layer + int64(resident)*span
		got := streamedLayers(sh, m.m, budget)
		if len(got) != 8-resident {
			t.Errorf("budget for %d resident layers: streamed %v", resident, got)
		}
	}
}

func TestMemoryPressureOption(t *testing.T) {
	path := writeSpec(t, testutil.TinyLlama())
	var events []PressureEvent
	m, err := Load(path, WithMemoryPressure(func(e PressureEvent) { events = append(events, e) }))
	if err != nil {
		t.Fatal(err)
	}
	// The watcher polls every 500 ms; drive it by hand instead.
	m.stopWatch()
	m.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	if !m.underPressure() {
		t.Fatal("underPressure false after a pressure report")
	}
	m.onPressure(mem.Pressure{Available: 900 << 20, Total: 1 << 30, Relieved: true})
	if m.underPressure() {
		t.Fatal("underPressure true after relief")
	}
	if len(events) != 2 || events[0].Available != 10<<20 || events[0].Limit != 1<<30 || events[0].Action == "" {
		t.Fatalf("events %+v", events)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// With an explicit budget, headroom is what the process's anonymous memory
// leaves of it.
func TestHeadroomWithExplicitBudget(t *testing.T) {
	path := writeSpec(t, testutil.TinyLlama())
	m, err := Load(path, WithMemoryLimit(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lim, err := m.headroom()
	if err != nil {
		t.Skipf("no memory figures on this system: %v", err)
	}
	if lim.Available <= 0 || lim.Available > 1<<30 {
		t.Fatalf("headroom %+v, want within (0, 1 GiB]", lim)
	}
}

func TestStreamingDecodeAllocatesNothing(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	path := writeSpec(t, streamSpecs()[0])
	m, err := Load(path, WithThreads(2), WithContextSize(64), WithWeights(WeightsStreaming), WithMemoryLimit(streamingLimit(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.ws.streamed) == 0 {
		t.Fatal("no layer streamed")
	}
	m.stopWatch() // its polls allocate, on their own goroutine
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Eval(ctx, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	tok := []int32{42}
	if n := testing.AllocsPerRun(30, func() {
		if _, err := s.Eval(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("a streamed decode step allocates %.1f times, want 0", n)
	}
}

// TestPressureSwitchesToStreaming drives a pressure report into a model
// whose weights the plan kept resident: it must switch to streaming half of
// its blocks while sessions keep running, with logits unchanged bit for
// bit, and a model loaded WithWeights(WeightsResident) must not switch.
func TestPressureSwitchesToStreaming(t *testing.T) {
	spec := streamSpecs()[0]
	path := writeSpec(t, spec)
	ref, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.stopWatch()
	ctx := context.Background()
	rs, _ := ref.NewSession()
	ms, _ := m.NewSession()
	defer rs.Close()
	defer ms.Close()
	toks := []int32{1, 40, 41, 42}
	step := func(tok []int32) {
		a, err := rs.Eval(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ms.Eval(ctx, tok)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("after %d tokens: logit %d is %v, resident model %v", ms.Len(), i, b[i], a[i])
			}
		}
	}
	step(toks)
	m.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	deadline := time.Now().Add(10 * time.Second)
	for !m.ws.switched.Load() {
		if time.Now().After(deadline) {
			t.Fatal("no switch to streaming 10 s after a pressure report")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p := m.Plan(); p.Weights != WeightsStreaming || len(m.ws.streamed) != len(m.m.Blocks)/2 {
		t.Fatalf("after pressure: weights %v, %d of %d blocks streamed", p.Weights, len(m.ws.streamed), len(m.m.Blocks))
	}
	for i := range 8 {
		step([]int32{int32(50 + i)})
	}

	forced, err := Load(path, WithWeights(WeightsResident))
	if err != nil {
		t.Fatal(err)
	}
	defer forced.Close()
	forced.stopWatch()
	forced.onPressure(mem.Pressure{Available: 10 << 20, Total: 1 << 30, Threshold: 64 << 20, Reason: "headroom"})
	time.Sleep(50 * time.Millisecond)
	if forced.ws.switched.Load() || forced.Plan().Weights != WeightsResident {
		t.Fatal("a model loaded WithWeights(WeightsResident) switched to streaming")
	}
}
