package llm

import (
	"context"
	"errors"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/model"
)

// TestKVGrowthStopsUnderPressure checks that while the memory watcher
// reports pressure a session does not grow its cache: it fails with
// ErrContextFull, or shifts its context when allowed to.
func TestKVGrowthStopsUnderPressure(t *testing.T) {
	m, err := Load(testutil.Testdata(t, "models/stories260K-f32.gguf"), WithContextSize(1024), WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	ids := make([]int32, 300)
	for i := range ids {
		ids[i] = int32(3 + i%500)
	}
	m.ws.pressure.Store(true)
	s, _ := m.NewSession()
	defer s.Close()
	if _, err := s.Eval(ctx, ids); !errors.Is(err, ErrContextFull) {
		t.Fatalf("growing under pressure: err = %v, want ErrContextFull", err)
	}
	sh, _ := m.NewSession(WithContextShift(4))
	defer sh.Close()
	if _, err := sh.Eval(ctx, ids[:200]); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Eval(ctx, ids[200:]); err != nil {
		t.Fatalf("with context shift under pressure: %v", err)
	}
	if st := sh.KVStats(); st.Cells != 256 || st.Shifts != 1 {
		t.Errorf("under pressure with shift: %+v", st)
	}
	m.ws.pressure.Store(false)
	if _, err := s.Eval(ctx, ids); err != nil {
		t.Fatalf("after relief: %v", err)
	}
	if st := s.KVStats(); st.Cells != 512 || st.Grows != 1 {
		t.Errorf("after relief: %+v", st)
	}
}

func TestKVSchedule(t *testing.T) {
	llama8B := &model.Config{Layers: 32, HeadsKV: 8, HeadDimK: 128, HeadDimV: 128}
	// 128 KiB a cell in F16: 1 GiB is 8192 cells.
	if got := kvStepCells(llama8B, KVF16, 1<<30); got != 8192 {
		t.Errorf("1 GiB step of llama-3.1-8b f16: %d cells, want 8192", got)
	}
	if got := kvStepCells(llama8B, KVF16, 100<<20); got != 768 { // 800 cells, in whole 256s
		t.Errorf("100 MiB step: %d cells, want 768", got)
	}
	if got := kvStepCells(llama8B, KVF16, 0); got != kvStepRound {
		t.Errorf("no budget: %d cells, want the minimum %d", got, kvStepRound)
	}
	// Gemma-2: only the global (odd) layers grow past the window.
	gemma := &model.Config{Layers: 42, HeadsKV: 8, HeadDimK: 256, HeadDimV: 256, Window: 4096}
	if got, want := kvCellBytes(gemma, KVF16), int64(21*8*512*2); got != want {
		t.Errorf("gemma-2 cell: %d bytes, want %d", got, want)
	}
	for _, tc := range []struct{ cur, need, limit, step, want int }{
		{256, 257, 131072, 8192, 512},
		{256, 300, 200, 8192, 200},
		{512, 3000, 131072, 8192, 4096},
		{4096, 4097, 131072, 8192, 12288},
		{4096, 30000, 131072, 8192, 36864},
		{12288, 12289, 16000, 8192, 16000},
		{3000, 3001, 131072, 8192, 4096},
	} {
		if got := kvNextCells(tc.cur, tc.need, tc.limit, tc.step); got != tc.want {
			t.Errorf("kvNextCells(%d, %d, %d, %d) = %d, want %d", tc.cur, tc.need, tc.limit, tc.step, got, tc.want)
		}
	}
}
