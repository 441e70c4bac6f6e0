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

// TestNextCells checks the growth schedule: doubling up to DoubleUpTo,
// then by whole steps, never past the limit. A small step caps the
// doubling too: when the budget leaves little, the cache grows by what is
// left, not to twice its size.
func TestNextCells(t *testing.T) {
	for _, tc := range []struct{ cur, need, limit, step, want int }{
		{256, 257, 131072, 8192, 512},
		{256, 300, 200, 8192, 200},
		{512, 3000, 131072, 8192, 4096},
		{4096, 4097, 131072, 8192, 12288},
		{4096, 30000, 131072, 8192, 36864},
		{12288, 12289, 16000, 8192, 16000},
		{3000, 3001, 131072, 8192, 4096},
		{256, 257, 131072, 256, 512}, // small steps from here on
		{2048, 2049, 131072, 256, 2304},
		{2048, 2600, 131072, 256, 2816},
		{1024, 1025, 131072, 512, 1536},
		{4096, 4097, 8192, 256, 4352},
	} {
		if got := NextCells(tc.cur, tc.need, tc.limit, tc.step); got != tc.want {
			t.Errorf("NextCells(%d, %d, %d, %d) = %d, want %d", tc.cur, tc.need, tc.limit, tc.step, got, tc.want)
		}
	}
}

// GrowTarget's step comes from the bytes left: the whole context when they
// suffice, else what they buy, at least StepRound cells.
func TestGrowTarget(t *testing.T) {
	gemma := (&model.Config{Layers: 42, HeadsKV: 8, HeadDimK: 256, HeadDimV: 256, Window: 4096}).KVConfig(kv.Int4, 8192)
	for _, tc := range []struct {
		name string
		left int64
		want int
	}{
		{"2 GiB left", 2 << 30, 8192},
		// 10 MiB / (21 layers × 8 heads × 288 bytes) = 216 cells, at least 256.
		{"10 MiB left", 10 << 20, 4352},
		{"nothing left", -5, 4352},
	} {
		if got := GrowTarget(gemma, 4096, 4097, tc.left); got != tc.want {
			t.Errorf("GrowTarget with %s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// fakeWeights records what a KVBudget asks of the weights it shares with.
type fakeWeights struct {
	free    int64 // bytes of KV that fit without moving blocks
	movable int64 // bytes blocks can give up
	yields  []int64
	regains int
}

func (f *fakeWeights) Yield(kv int64) bool {
	f.yields = append(f.yields, kv)
	if kv > f.free {
		give := min(kv-f.free, f.movable)
		f.free += give
		f.movable -= give
	}
	return kv <= f.free
}
func (f *fakeWeights) Room(kv int64) int64 { return f.free - kv }
func (f *fakeWeights) Regain()             { f.regains++ }

// A budget shared with weights asks them to yield when a reservation does
// not fit beside them, tells them when caches shrink, and grows by Room.
func TestKVBudgetSharesWithWeights(t *testing.T) {
	w := &fakeWeights{free: 100, movable: 300}
	b := NewKVBudget(1000, nil)
	b.Share(w)
	if b.Room() != 100 {
		t.Fatalf("room %d, want 100", b.Room())
	}
	if !b.Reserve(80) || b.InUse() != 80 || b.Room() != 20 {
		t.Fatalf("reserve within the room: in use %d, room %d", b.InUse(), b.Room())
	}
	if !b.Reserve(200) || w.free != 280 || b.Room() != 0 {
		t.Fatalf("reserve past the room: free %d, room %d", w.free, b.Room())
	}
	if b.Reserve(200) || b.InUse() != 280 {
		t.Fatalf("reserve past what the weights can give: in use %d", b.InUse())
	}
	b.Force(50)
	if b.InUse() != 330 || w.yields[len(w.yields)-1] != 330 {
		t.Fatalf("force: in use %d, yields %v", b.InUse(), w.yields)
	}
	b.Release(30)
	if w.regains != 1 || b.InUse() != 300 {
		t.Fatalf("release: regains %d, in use %d", w.regains, b.InUse())
	}
	var held int64
	b.Hold(func(kv int64) { held = kv })
	if held != 300 {
		t.Fatalf("Hold saw %d", held)
	}
	if b.Room() > b.Limit()-b.InUse() {
		t.Fatal("room beyond the limit")
	}
}
