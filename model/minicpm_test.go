package model

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// MiniCPM4's LongRoPE factors are loaded and chosen by the session's
// context as phi3's: the short ones up to the original context, the long
// ones past it, and the two give different logits.
func TestMiniCPM4LongRope(t *testing.T) {
	pool := ops.NewPool(1)
	defer pool.Close()
	spec := testutil.TinyMiniCPM()
	spec.Context = 1024
	spec.LongRope = &testutil.LongRope{OrigContext: 128, AttnFactor: 1}
	m, _, _ := loadSpec(t, spec)
	if m.RopeLong == nil || m.RopeShort == nil || m.RopeOrigContext != 128 {
		t.Fatalf("LongRoPE not loaded: long %v short %v orig %d", m.RopeLong != nil, m.RopeShort != nil, m.RopeOrigContext)
	}
	for _, tc := range []struct {
		cells int
		want  []float32
	}{{128, m.RopeShort}, {129, m.RopeLong}} {
		st, err := m.NewState(ops.NewExec(pool), StateOptions{Batch: 1, Cache: kv.F16, Cells: tc.cells})
		if err != nil {
			t.Fatal(err)
		}
		if &st.rope.Factors[0] != &tc.want[0] {
			t.Errorf("context %d: wrong LongRoPE factors", tc.cells)
		}
	}
	if slices.Equal(forwardAll(t, m, pool, prompt(12), 12, 128), forwardAll(t, m, pool, prompt(12), 12, 256)) {
		t.Error("long and short factors give the same logits")
	}
}
