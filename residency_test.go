package llm_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestDynamicResidency loads a model with memory for every block beside a
// small KV cache: a session starts with every block resident, its cache
// takes memory from blocks as it grows (they are read from disk from then
// on), and Reset brings them back, the logits matching a resident model's
// bit for bit throughout. The resident model keeps the file's layout, as
// a streaming one does: repacked (WithRepack, its default), its X8
// kernels would sum in another order (TestRepackOnOff compares those
// within rounding).
func TestDynamicResidency(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Layers, spec.Embd, spec.FFN, spec.Context = 8, 128, 1024, 1024
	path := testutil.TempModel(t, spec)
	opts := []llm.Option{llm.WithContextSize(1024), llm.WithThreads(2), llm.WithBatchSize(128)}
	ref := load(t, path, append(opts, llm.WithWeights(llm.WeightsResident), llm.WithMemoryLimit(1<<40), llm.WithRepack(false))...)
	rs := session(t, ref)

	p, err := llm.Plan(path, append(opts, llm.WithWeights(llm.WeightsStreaming), llm.WithMemoryLimit(1<<40))...)
	if err != nil {
		t.Fatal(err)
	}
	// Every block, the first 256 cells and the hysteresis (the largest
	// block) with a little to spare: a session that goes back to 256
	// cells has every block back.
	limit := p.Limit - p.Residency.Pool + p.Residency.Weights(0) + p.InitialKV*3/2 + slices.Max(p.Residency.Blocks)
	m := load(t, path, append(opts, llm.WithWeights(llm.WeightsStreaming), llm.WithMemoryLimit(limit))...)
	llm.StopWatch(m) // the limit is far below the pressure threshold
	if p := m.Plan(); !p.Fits || p.KVType != llm.KVF16 || p.Context != 1024 || len(p.Steps) != 0 {
		t.Fatalf("plan %v", p)
	}
	s := session(t, m)
	if r := m.Residency(); r.Blocks != 8 || r.OnDisk != 0 {
		t.Fatalf("after Load: %+v, want 8 blocks, none on disk", r)
	}
	ctx := context.Background()
	ids := randTokens(3, 900, m.Info().VocabSize)
	run := func(what string) {
		t.Helper()
		rs.Reset()
		for i := 0; i < len(ids); i += 300 {
			a := mustEval(t, ctx, rs.EvalAll, ids[i:i+300])
			b, err := s.EvalAll(ctx, ids[i:i+300])
			if err != nil {
				t.Fatalf("%s: %d tokens: %v", what, i+300, err)
			}
			if !slices.Equal(a, b) {
				t.Fatalf("%s: after %d tokens the logits differ from the resident model's", what, s.Len())
			}
		}
		for i := range 5 {
			a, _ := rs.Eval(ctx, ids[i:i+1])
			b, err := s.Eval(ctx, ids[i:i+1])
			if err != nil || !slices.Equal(a, b) {
				t.Fatalf("%s: decode step %d: %v, or logits differ", what, i, err)
			}
		}
	}
	run("growing")
	r := m.Residency()
	if r.OnDisk == 0 || r.Evictions == 0 || r.Loads == 0 || r.BytesRead == 0 {
		t.Fatalf("after 905 tokens: %+v, want blocks read from disk", r)
	}
	s.Reset()
	deadline := time.Now().Add(10 * time.Second)
	for m.Residency().OnDisk != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Reset: %+v, want every block back", m.Residency())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.KVStats(); st.Cells != 256 {
		t.Fatalf("after Reset the cache holds %d cells", st.Cells)
	}
	run("again")
	if r2 := m.Residency(); r2.Restores == 0 || r2.Evictions <= r.Evictions {
		t.Fatalf("second run: %+v after %+v", r2, r)
	}
}
