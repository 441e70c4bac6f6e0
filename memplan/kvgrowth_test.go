package memplan

import (
	"testing"

	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

func TestKVSchedule(t *testing.T) {
	llama8B := (&model.Config{Layers: 32, HeadsKV: 8, HeadDimK: 128, HeadDimV: 128}).KVConfig(kv.F16, 131072)
	// 128 KiB a cell in F16: 1 GiB is 8192 cells.
	if got := StepCells(llama8B, 1<<30); got != 8192 {
		t.Errorf("1 GiB step of llama-3.1-8b f16: %d cells, want 8192", got)
	}
	if got := StepCells(llama8B, 100<<20); got != 768 { // 800 cells, in whole 256s
		t.Errorf("100 MiB step: %d cells, want 768", got)
	}
	if got := StepCells(llama8B, 0); got != StepRound {
		t.Errorf("no budget: %d cells, want the minimum %d", got, StepRound)
	}
	// Gemma-2: only the global (odd) layers grow past the window.
	gemma := (&model.Config{Layers: 42, HeadsKV: 8, HeadDimK: 256, HeadDimV: 256, Window: 4096}).KVConfig(kv.F16, 8192)
	if got, want := cellBytes(gemma), int64(21*8*512*2); got != want {
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
		if got := NextCells(tc.cur, tc.need, tc.limit, tc.step); got != tc.want {
			t.Errorf("NextCells(%d, %d, %d, %d) = %d, want %d", tc.cur, tc.need, tc.limit, tc.step, got, tc.want)
		}
	}
}

// TestKVBudget checks the accounting: reservations within the limit, none
// while memory is short, forced ones past it, and releases.
func TestKVBudget(t *testing.T) {
	short := false
	b := NewKVBudget(1000, func() bool { return short })
	if !b.Reserve(600) || b.Reserve(401) || !b.Reserve(400) || b.InUse() != 1000 {
		t.Fatalf("reservations up to the limit: in use %d", b.InUse())
	}
	b.Release(500)
	short = true
	if b.Reserve(1) || !b.Short() {
		t.Fatal("reserved while memory is short")
	}
	b.Force(700)
	if b.InUse() != 1200 || b.Limit() != 1000 {
		t.Fatalf("after a forced reservation: in use %d", b.InUse())
	}
}
