package seq

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

// stories is the stories260K test model and a thread pool to run it.
func stories(t *testing.T) (*model.Model, *ops.Pool) {
	t.Helper()
	m, err := model.New(testutil.ReadModel(t, testutil.Testdata(t, "models/stories260K-f32.gguf")))
	if err != nil {
		t.Fatal(err)
	}
	pool := ops.NewPool(1)
	t.Cleanup(pool.Close)
	return m, pool
}

// TestKVGrowthStopsUnderPressure checks that while the budget reports
// memory short a sequence does not grow its cache: it fails with
// kv.ErrFull, or shifts its context when allowed to.
func TestKVGrowthStopsUnderPressure(t *testing.T) {
	m, pool := stories(t)
	short := true
	budget := memplan.NewKVBudget(1<<30, func() bool { return short })
	ctx := context.Background()
	ids := make([]int32, 300)
	for i := range ids {
		ids[i] = int32(3 + i%500)
	}
	s, err := New(m, ops.NewExec(pool), budget, Config{Context: 1024, Batch: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Eval(ctx, ids); !errors.Is(err, kv.ErrFull) {
		t.Fatalf("growing under pressure: err = %v, want kv.ErrFull", err)
	}
	sh, err := New(m, ops.NewExec(pool), budget, Config{Context: 1024, Batch: 512, Shift: true, Keep: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if _, err := sh.Eval(ctx, ids[:200]); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Eval(ctx, ids[200:]); err != nil {
		t.Fatalf("with context shift under pressure: %v", err)
	}
	if st := sh.Stats(); st.Cells != 256 || st.Shifts != 1 {
		t.Errorf("under pressure with shift: %+v", st)
	}
	short = false
	if _, err := s.Eval(ctx, ids); err != nil {
		t.Fatalf("after relief: %v", err)
	}
	if st := s.Stats(); st.Cells != 512 || st.Grows != 1 {
		t.Errorf("after relief: %+v", st)
	}
}

// TestTruncateReusesPrefix checks that truncating to a shared prefix and
// evaluating only what differs gives the logits a fresh evaluation gives,
// and that a closed sequence refuses work.
func TestTruncateReusesPrefix(t *testing.T) {
	m, pool := stories(t)
	budget := memplan.NewKVBudget(1<<30, nil)
	ctx := context.Background()
	open := func() *Seq {
		s, err := New(m, ops.NewExec(pool), budget, Config{Context: 64, Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	eval := func(s *Seq, tokens []int32) []float32 {
		logits, err := s.Eval(ctx, tokens)
		if err != nil {
			t.Fatal(err)
		}
		return logits
	}
	a := []int32{1, 40, 41, 42, 43, 44}
	b := []int32{1, 40, 41, 50, 51}
	s, fresh := open(), open()
	eval(s, a)
	s.Truncate(3)
	got := eval(s, b[3:])
	if !slices.Equal(s.Tokens(), b) {
		t.Fatalf("tokens %v, want %v", s.Tokens(), b)
	}
	if !slices.Equal(got, eval(fresh, b)) {
		t.Fatal("logits after reusing a prefix differ from a fresh evaluation")
	}
	fresh.Close()
	s.Close()
	s.Close()
	s.Reset()
	if _, err := s.Eval(ctx, b); !errors.Is(err, ErrClosed) {
		t.Fatalf("Eval after Close: err = %v, want ErrClosed", err)
	}
	if budget.InUse() != 0 {
		t.Fatalf("closed sequences still hold %d bytes of the budget", budget.InUse())
	}
}
