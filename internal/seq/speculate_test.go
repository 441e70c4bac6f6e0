package seq

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/sampler"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		toks []int32
		n    int
		room int
		want []int32
	}{
		{"latest match", []int32{1, 2, 3, 1, 2, 4, 9, 1, 2}, 2, 3, []int32{4, 9, 1}},
		{"room limits", []int32{1, 2, 3, 4, 5, 1, 2}, 2, 2, []int32{3, 4}},
		{"loop goes on", []int32{7, 1, 2, 1, 2}, 2, 5, []int32{1, 2, 1, 2, 1}},
		{"one token loop", []int32{5, 5, 5}, 2, 4, []int32{5, 5, 5, 5}},
		{"no match", []int32{1, 2, 3, 4}, 2, 3, nil},
		{"too short", []int32{1, 2}, 2, 3, nil},
		{"unigram", []int32{4, 8, 6, 4}, 1, 2, []int32{8, 6}},
		{"no room", []int32{1, 2, 1, 2}, 2, 0, nil},
	} {
		dst := make([]int32, tc.room)
		if got := dst[:lookup(tc.toks, tc.n, dst)]; !slices.Equal(got, tc.want) && len(got)+len(tc.want) > 0 {
			t.Errorf("%s: drafted %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSpeculationStepAllocatesNothing: a speculative step (a lookup, or
// a draft model's catch-up and drafts, and a verification pass)
// allocates nothing once the sequence exists, and its logits stay inside
// the arena the memory plan counts as the activations of a batch
// (model.ScratchBytes): no overflow, for batches that hold many rows and
// few.
func TestSpeculationStepAllocatesNothing(t *testing.T) {
	if testing.Short() && raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	m, pool := stories(t)
	for _, byModel := range []bool{false, true} {
		for _, batch := range []int{512, 16, 3, 1} {
			budget := memplan.NewKVBudget(1<<30, nil)
			cfg := Config{Context: 128, Batch: batch}
			g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 64, Speculate: Lookup{Draft: 8, NGram: 2}}
			if byModel {
				d, err := New(m, ops.NewExec(pool), budget, Config{Context: 128, Batch: 512})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Draft = d
				g.Drafting = Drafting{Draft: 8}
			}
			s, err := New(m, ops.NewExec(pool), budget, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, _, err := s.begin(g); err != nil {
				t.Fatal(err)
			}
			loop := []int32{5, 6, 7, 8, 9, 10, 11, 12, 13}
			prompt := append(append(slices.Clone(loop), loop...), 5)
			if err := s.eval(context.Background(), prompt, nil); err != nil {
				t.Fatal(err)
			}
			drafts := s.drafting(g)
			t.Logf("draft model %v, batch %d: a verification pass of %d tokens fits, %d drafts", byModel, batch, s.fit, drafts)
			if want := min(8, s.fit-1); drafts != max(want, 0) || s.fit > batch {
				t.Fatalf("batch %d: %d rows fit, %d drafts", batch, s.fit, drafts)
			}
			if batch == 512 && drafts != 8 {
				t.Fatalf("a batch of 512 drafts %d, want 8", drafts)
			}
			var spec int
			step := func() {
				tl := tally{}
				if _, err := s.step(context.Background(), 6, drafts, g, &tl); err != nil {
					t.Fatal(err)
				}
				spec = tl.spec
				s.truncate(len(prompt))
			}
			if n := testing.AllocsPerRun(20, step); n != 0 {
				t.Errorf("draft model %v, batch %d: a speculative step allocates %.1f times, want 0", byModel, batch, n)
			}
			if spec != drafts {
				t.Errorf("draft model %v, batch %d: the step drafted %d, want %d", byModel, batch, spec, drafts)
			}
			ar := s.st.Arena()
			if ar.Overflows() != 0 || ar.HighWater() > m.ScratchBytes(min(batch, 128)) {
				t.Errorf("batch %d: the arena overflowed %d times, high water %d of the plan's %d",
					batch, ar.Overflows(), ar.HighWater(), m.ScratchBytes(min(batch, 128)))
			}
			if d := s.dft; d != nil && d.st.Arena().Overflows() != 0 {
				t.Errorf("batch %d: the draft's arena overflowed", batch)
			}
		}
	}
}

func TestTopProb(t *testing.T) {
	inf := float32(math.Inf(-1))
	for _, tc := range []struct {
		name   string
		logits []float32
		id     int32
		p      float32
	}{
		{"two equal", []float32{inf, 5, 5, inf}, 1, 0.5},
		{"one", []float32{inf, 1, inf}, 1, 1},
		// Eleven equal logits: the probability among the top ten.
		{"top ten", []float32{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, 0, 0.1},
		{"none possible", []float32{inf, inf}, 0, 0},
	} {
		id, p := topProb(tc.logits)
		if id != tc.id || math.Abs(float64(p-tc.p)) > 1e-6 {
			t.Errorf("%s: token %d p %v, want %d p %v", tc.name, id, p, tc.id, tc.p)
		}
	}
}

// TestSpeculationOffForConv: a model whose state goes back only to
// checkpoints (lfm2's conv layers) generates without drafts, the same
// tokens.
func TestSpeculationOffForConv(t *testing.T) {
	_, tok, _ := synthetic(t, testutil.TinyLFM2())
	_, open := lfm2Seqs(t, Config{Context: 128, Batch: 8, Vocab: tok})
	g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 16}
	gen := func(g Generation) ([]int32, Usage) {
		s := open()
		prompt := append(ids(9, 1), ids(9, 1)...)
		if err := s.GenerateFrom(context.Background(), prompt, g, func(int32, string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		return s.Tokens(), s.Usage()
	}
	plain, _ := gen(g)
	g.Speculate = Lookup{Draft: 4, NGram: 1}
	spec, u := gen(g)
	if u.DraftTokens != 0 || !slices.Equal(plain, spec) {
		t.Errorf("lfm2 with speculation: %d drafts, same tokens %v", u.DraftTokens, slices.Equal(plain, spec))
	}
}

// TestDraftShiftsLikeItsSequence: when a sequence shifts its context, its
// draft sequence holding the same tokens drops what it drops (its cache
// shifted, not evaluated again) and keeps a prefix of its tokens; a draft
// that holds fewer than the shift drops is left as it is.
func TestDraftShiftsLikeItsSequence(t *testing.T) {
	m, pool := stories(t)
	budget := memplan.NewKVBudget(1<<30, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		held   int // tokens the draft holds before the shift
		shifts int
	}{
		{"same tokens", 20, 1},
		{"fewer than dropped", 6, 0},
	} {
		d, err := New(m, ops.NewExec(pool), budget, Config{Context: 32, Batch: 64})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(m, ops.NewExec(pool), budget, Config{Context: 32, Batch: 64, Shift: true, Keep: 4, Draft: d})
		if err != nil {
			t.Fatal(err)
		}
		first := ids(20, 1)
		if err := s.eval(ctx, first, nil); err != nil {
			t.Fatal(err)
		}
		if err := d.eval(ctx, first[:tc.held], nil); err != nil {
			t.Fatal(err)
		}
		if err := s.eval(ctx, ids(20, 2), nil); err != nil {
			t.Fatal(err)
		}
		want := first[:tc.held] // left as it was
		if tc.shifts > 0 {
			want = s.history[:tc.held-8] // the shift drops 8
		}
		if s.shifts != 1 || d.shifts != tc.shifts || !slices.Equal(d.history, want) {
			t.Errorf("%s: %d and %d shifts; the draft holds %v, the sequence %v", tc.name, s.shifts, d.shifts, d.history, s.history)
		}
		s.Close()
		if d.Stats() != (Stats{}) {
			t.Errorf("%s: the draft is open after its sequence closed", tc.name)
		}
	}
}
