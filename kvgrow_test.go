package llm_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// randTokens returns n token ids in [3, vocab), reproducibly.
func randTokens(seed uint64, n, vocab int) []int32 {
	r := rand.New(rand.NewPCG(seed, 1))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(3 + r.IntN(vocab-3))
	}
	return ids
}

// debugLog returns a logger that records every message, Debug included.
func debugLog() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

// TestKVGrowsOnDemand checks that a session declared with a long context
// starts with 256 cells, grows by doubling as tokens arrive, logs and
// counts each growth, and computes exactly what a preallocated session does.
func TestKVGrowsOnDemand(t *testing.T) {
	for _, kvt := range []llm.KVType{llm.KVF16, llm.KVInt8} {
		t.Run(kvt.String(), func(t *testing.T) {
			logger, logs := debugLog()
			m := loadStories(t, llm.WithContextSize(2048), llm.WithKVType(kvt), llm.WithThreads(2), llm.WithLogger(logger))
			grow := session(t, m)
			pre, err := m.NewSession(llm.WithKVPreallocate())
			if err != nil {
				t.Fatal(err)
			}
			defer pre.Close()

			st := grow.KVStats()
			if st.Cells != 256 || st.MaxCells != 2048 || st.Used != 0 || st.Grows != 0 || st.Preallocated {
				t.Fatalf("new session: %+v", st)
			}
			if p := m.Plan(); st.Bytes != p.InitialKV {
				t.Errorf("starting KV %d bytes, plan says %d", st.Bytes, p.InitialKV)
			}
			full := pre.KVStats()
			if full.Cells != 2048 || !full.Preallocated || full.Bytes <= st.Bytes*7 {
				t.Fatalf("preallocated session: %+v", full)
			}

			ctx := context.Background()
			ids := randTokens(1, 1100, m.Info().VocabSize)
			// A prompt in batches, then single tokens across a growth boundary.
			for _, part := range [][]int32{ids[:300], ids[300:511], ids[511:512], ids[512:513], ids[513:1100]} {
				a := mustEval(t, ctx, grow.EvalAll, part)
				b := mustEval(t, ctx, pre.EvalAll, part)
				if !slices.Equal(a, b) {
					t.Fatalf("after %d tokens: growing and preallocated sessions differ", grow.Len())
				}
			}
			st = grow.KVStats()
			if st.Cells != 2048 || st.Used != 1100 || st.Grows != 3 || st.Bytes != full.Bytes {
				t.Errorf("after 1100 tokens: %+v, want 2048 cells, 3 grows, %d bytes", st, full.Bytes)
			}
			if n := strings.Count(logs.String(), "KV cache grew"); n != 3 {
				t.Errorf("%d growth messages logged, want 3:\n%s", n, logs)
			}
			// Reset gives back what the cache grew by (resident weights may
			// take it); the preallocated cache keeps its memory.
			grow.Reset()
			if st := grow.KVStats(); st.Cells != 256 || st.Used != 0 || st.Bytes != m.Plan().InitialKV {
				t.Errorf("after Reset: %+v, want 256 cells of %d bytes", st, m.Plan().InitialKV)
			}
			pre.Reset()
			if st := pre.KVStats(); st.Cells != 2048 || st.Used != 0 {
				t.Errorf("preallocated, after Reset: %+v", st)
			}
			if _, err := grow.Eval(ctx, ids[:600]); err != nil {
				t.Fatalf("growing again after Reset: %v", err)
			}
		})
	}
}

func TestKVPreallocatePlan(t *testing.T) {
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	grow, err := llm.Plan(path, llm.WithContextSize(4096), llm.WithMemoryLimit(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	pre, err := llm.Plan(path, llm.WithContextSize(4096), llm.WithMemoryLimit(1<<30), llm.WithKVPreallocate())
	if err != nil {
		t.Fatal(err)
	}
	comp := func(p llm.MemoryPlan, name string) (llm.Component, bool) {
		for _, c := range p.Components {
			if c.Name == name {
				return c, true
			}
		}
		return llm.Component{}, false
	}
	gkv, _ := comp(grow, "kv cache")
	pkv, _ := comp(pre, "kv cache")
	if gkv.Bytes != pkv.Bytes || pre.InitialKV != pkv.Bytes || grow.InitialKV*16 != gkv.Bytes {
		t.Errorf("kv %d/%d bytes, initial %d/%d", gkv.Bytes, pkv.Bytes, grow.InitialKV, pre.InitialKV)
	}
	if !strings.Contains(gkv.Note, "starts at 256 cells") || !strings.Contains(pkv.Note, "WithKVPreallocate") {
		t.Errorf("notes: %q, %q", gkv.Note, pkv.Note)
	}
	// Growing needs one old layer beside the new cache: at most a layer
	// of 4095 cells (the last growth may be small), a 5-layer model.
	if r, ok := comp(grow, "kv resize"); !ok || r.Bytes != gkv.Bytes/5/4096*4095 {
		t.Errorf("kv resize component %+v (ok %v), want %d bytes", r, ok, gkv.Bytes/5/4096*4095)
	}
	if _, ok := comp(pre, "kv resize"); ok || pre.Total >= grow.Total {
		t.Errorf("preallocated plan has a resize component or is not smaller: %d vs %d", pre.Total, grow.Total)
	}
}

// TestKVGrowthBudget gives the model just the memory its plan needs for a
// 512-token context and checks that a session declared with more cannot
// grow past it: ErrContextFull, or a context shift when enabled. The
// weights must stay resident here; otherwise the cache would grow by
// moving blocks to disk (residency's tests).
func TestKVGrowthBudget(t *testing.T) {
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	opts := []llm.Option{llm.WithContextSize(512), llm.WithThreads(2), llm.WithWeights(llm.WeightsResident)}
	p, err := llm.Plan(path, append(opts, llm.WithMemoryLimit(1<<30))...)
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := debugLog()
	m := load(t, path, append(opts, llm.WithMemoryLimit(p.Total), llm.WithLogger(logger))...)
	// A budget this tight is below the watcher's 64 MiB pressure threshold:
	// its first poll, 500 ms on, would pause all growth. This test is about
	// the budget alone.
	llm.StopWatch(m)
	ctx := context.Background()
	ids := randTokens(2, 700, m.Info().VocabSize)

	s, err := m.NewSession(llm.WithContextSize(4096))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(ctx, ids[:512]); err != nil {
		t.Fatalf("512 tokens within the budget: %v", err)
	}
	if _, err := s.Eval(ctx, ids[512:513]); !errors.Is(err, llm.ErrContextFull) {
		t.Fatalf("growing past the budget: err = %v, want ErrContextFull", err)
	}
	if st := s.KVStats(); st.Cells != 512 || st.Used != 512 {
		t.Errorf("after the refused growth: %+v", st)
	}
	// A second session cannot take the budget the first one holds.
	if _, err := m.NewSession(llm.WithKVPreallocate()); !errors.Is(err, llm.ErrOutOfMemoryBudget) {
		t.Errorf("preallocating beside a full session: err = %v, want ErrOutOfMemoryBudget", err)
	}
	s.Close()

	sh, err := m.NewSession(llm.WithContextSize(4096), llm.WithContextShift(8))
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if _, err := sh.Eval(ctx, ids); err != nil {
		t.Fatalf("700 tokens with context shift: %v", err)
	}
	if st := sh.KVStats(); st.Cells != 512 || st.Shifts == 0 || st.Used > 512 {
		t.Errorf("with shift: %+v", st)
	}
	if !strings.Contains(logs.String(), "shifting the context instead") {
		t.Errorf("no warning about shifting instead of growing:\n%s", logs)
	}
}
