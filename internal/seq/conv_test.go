package seq

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/sampler"
)

// lfm2Seqs returns TinyLFM2 and a maker of its sequences.
func lfm2Seqs(t *testing.T, cfg Config) (*model.Model, func() *Seq) {
	t.Helper()
	return hybridSeqs(t, testutil.TinyLFM2(), cfg)
}

// hybridSeqs returns the model of spec (lfm2 or lfm2moe) and a maker of
// its sequences.
func hybridSeqs(t *testing.T, spec testutil.ModelSpec, cfg Config) (*model.Model, func() *Seq) {
	t.Helper()
	m, _, pool := synthetic(t, spec)
	budget := memplan.NewKVBudget(1<<30, nil)
	return m, func() *Seq {
		s, err := New(m, ops.NewExec(pool), budget, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
}

// evalOK is Eval that fails the test on an error, returning a copy of the
// logits.
func evalOK(t *testing.T, s *Seq, tokens []int32) []float32 {
	t.Helper()
	logits, err := s.Eval(context.Background(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(logits)
}

// A rewound LFM2 session continues as a fresh one fed the same tokens, bit
// for bit: to a checkpoint (a pass's end), between checkpoints (the state
// goes back to the one before and the tokens after it are evaluated
// again), into the prompt after decoding, to 0, and after a failed call;
// LFM2-MoE's too, its experts adding the same numbers whatever the batch;
// and Granite 4.0-H's Mamba-2 state (conv and scan), dense and with
// experts, and with a state so large that it keeps only two checkpoints
// (most rewinds then evaluate from the start); and Qwen 3.5's delta-net
// state.
func TestConvRewindMatchesFresh(t *testing.T) {
	big := testutil.TinyGraniteHybrid()
	big.SSMState = 4096
	for _, spec := range append(testutil.TinyRecurrent(), big) {
		name := spec.Arch
		if spec.Experts > 0 && spec.Arch == "granitehybrid" {
			name += "/experts"
		}
		if spec.SSMState == big.SSMState {
			name += "/big"
		}
		t.Run(name, func(t *testing.T) { convRewind(t, spec) })
	}
}

func convRewind(t *testing.T, spec testutil.ModelSpec) {
	m, open := hybridSeqs(t, spec, Config{Context: 128, Batch: 4})
	limit := model.Checkpoints(&m.Config)
	if spec.SSMState == 4096 && limit != 2 {
		t.Fatalf("a state of %d bytes keeps %d checkpoints, want 2", model.ConvStateBytes(&m.Config), limit)
	}
	prompt, more := ids(22, 1), ids(9, 2)
	for _, n := range []int{22, 20, 13, 6, 1, 0, 25, 30} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := open()
			evalOK(t, s, prompt[:10]) // passes end at 4, 8, 10
			evalOK(t, s, prompt[10:]) // … 14, 18, 22
			for _, tok := range more[:8] {
				evalOK(t, s, []int32{tok}) // 23 … 30: one a step
			}
			held := append(slices.Clone(prompt), more[:8]...)
			s.Truncate(n)
			if s.Len() != n {
				t.Fatalf("Len %d after Truncate(%d)", s.Len(), n)
			}
			if _, err := s.Eval(context.Background(), []int32{-1}); err == nil {
				t.Fatal("a token out of the vocabulary was evaluated")
			}
			tail := []int32{7, 8, 9, 10, 11}
			got := evalOK(t, s, tail)
			want := evalOK(t, open(), append(held[:n:n], tail...))
			if !slices.Equal(got, want) {
				t.Fatalf("after Truncate(%d): logits differ from a fresh session's", n)
			}
			if cs := s.st.Conv(); cs.At != s.Len() || len(cs.Marks) > limit {
				t.Fatalf("conv state at %d with %d checkpoints for %d tokens", cs.At, len(cs.Marks), s.Len())
			}
		})
	}
}

// The checkpoints thin out into the past: after many decode steps the
// newest stay one step apart and the oldest reach back towards the start.
func TestConvCheckpointsSpread(t *testing.T) {
	_, open := lfm2Seqs(t, Config{Context: 256, Batch: 8})
	s := open()
	evalOK(t, s, ids(40, 1))
	for i := range 150 {
		evalOK(t, s, []int32{int32(3 + i%200)})
	}
	marks := s.st.Conv().Marks
	if len(marks) != 16 || marks[15] != 190 || marks[14] != 189 || marks[0] > 64 {
		t.Fatalf("checkpoints %v", marks)
	}
}

// A saved LFM2 session restores its conv state and checkpoints: the
// restored one continues, and rewinds, as the original does; a Granite
// 4.0-H session its Mamba-2 state alike, and a Qwen 3.5 session its
// delta-net state.
func TestConvSaveRestore(t *testing.T) {
	for _, spec := range testutil.TinyRecurrent() {
		t.Run(spec.Arch, func(t *testing.T) { convSaveRestore(t, spec) })
	}
}

// restored is b after restoring a's saved state into it.
func restored(t *testing.T, a, b *Seq, id snapshot.Model) *Seq {
	t.Helper()
	var buf bytes.Buffer
	if err := a.Save(&buf, id); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(&buf, id); err != nil {
		t.Fatal(err)
	}
	return b
}

func convSaveRestore(t *testing.T, spec testutil.ModelSpec) {
	m, open := hybridSeqs(t, spec, Config{Context: 128, Batch: 4})
	id := snapshot.Model{Arch: m.Arch, Dims: [9]uint32{6: uint32(m.Vocab)}}
	a := open()
	evalOK(t, a, ids(17, 1))
	evalOK(t, a, []int32{5})
	a.Truncate(15) // pending: 12 is the checkpoint; Save evaluates again
	b := restored(t, a, open(), id)
	if !slices.Equal(a.Tokens(), b.Tokens()) || !slices.Equal(a.Logits(), b.Logits()) {
		t.Fatal("restored tokens or logits differ")
	}
	if !slices.Equal(a.st.Conv().Marks, b.st.Conv().Marks) || !slices.Equal(a.st.Conv().Cur, b.st.Conv().Cur) {
		t.Fatal("restored conv state differs")
	}
	tail := []int32{9, 10, 11}
	if !slices.Equal(evalOK(t, a, tail), evalOK(t, b, tail)) {
		t.Fatal("a restored session continues otherwise")
	}
	a.Truncate(9)
	b.Truncate(9)
	if !slices.Equal(evalOK(t, a, tail), evalOK(t, b, tail)) {
		t.Fatal("a restored session rewinds otherwise")
	}
}

// An LFM2 session's cache grows from its first 256 cells as others do
// (the conv layers hold no cells), shifts its context (the conv state
// carries on), and gives the logits of a preallocated session; a Granite
// 4.0-H session's and a Qwen 3.5 session's too.
func TestConvGrowAndShift(t *testing.T) {
	for _, spec := range testutil.TinyRecurrent() {
		t.Run(spec.Arch, func(t *testing.T) { convGrowAndShift(t, spec) })
	}
}

func convGrowAndShift(t *testing.T, spec testutil.ModelSpec) {
	_, open := hybridSeqs(t, spec, Config{Context: 600, Batch: 64})
	_, openPre := hybridSeqs(t, spec, Config{Context: 600, Batch: 64, Preallocate: true})
	toks := ids(300, 3)
	s, pre := open(), openPre()
	got, want := evalOK(t, s, toks), evalOK(t, pre, toks)
	if st := s.Stats(); st.Grows != 1 || st.Cells != 512 {
		t.Errorf("stats %+v, want one growth to 512 cells", st)
	}
	if !slices.Equal(got, want) {
		t.Error("logits after growth differ from a preallocated session's")
	}
	_, openShift := hybridSeqs(t, spec, Config{Context: 64, Batch: 8, Shift: true, Keep: 4})
	sh := openShift()
	for i := 0; i < 100; i += 10 {
		evalOK(t, sh, ids(10, i))
	}
	if st := sh.Stats(); st.Shifts == 0 || sh.st.Conv().At != sh.Len() || sh.Len() > 64 {
		t.Errorf("after shifting: %+v, conv state at %d for %d tokens", st, sh.st.Conv().At, sh.Len())
	}
	for _, p := range sh.st.Conv().Marks {
		if p > sh.Len() {
			t.Errorf("checkpoint at %d past the %d tokens held", p, sh.Len())
		}
	}
	sh.Truncate(sh.Len() - 3)
	evalOK(t, sh, []int32{4, 5, 6})
}

// A generation that a stop string ends settles by rewinding: the LFM2
// session then holds the text yielded, and its conv state follows those
// tokens, so what it evaluates next gives a fresh session's logits.
func TestConvSettleAfterStop(t *testing.T) {
	m, tok, pool := synthetic(t, testutil.TinyLFM2())
	budget := memplan.NewKVBudget(1<<30, nil)
	ctx := context.Background()
	open := func() *Seq {
		s, err := New(m, ops.NewExec(pool), budget, Config{Context: 128, Batch: 8, Vocab: tok})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 16}
	g.Temperature = 0
	gen := func(s *Seq) string {
		var text strings.Builder
		if err := s.GenerateFrom(ctx, ids(9, 1), g, func(_ int32, piece string) bool {
			text.WriteString(piece)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return text.String()
	}
	full := gen(open())
	if len(full) < 8 {
		t.Fatalf("generated %q: too short to cut", full)
	}
	g.Stop = []string{full[len(full)/2 : len(full)/2+2]}
	s := open()
	cut := gen(s)
	if !strings.HasPrefix(full, cut) || len(cut) >= len(full) {
		t.Fatalf("stopped text %q is not a cut of %q", cut, full)
	}
	held := s.Tokens()
	t.Logf("held %d tokens after generating %q, cut to %q", len(held), full, cut)
	if len(held) >= 9+16 {
		t.Fatalf("held %d tokens: nothing was rewound", len(held))
	}
	got := evalOK(t, s, []int32{5})
	want := evalOK(t, open(), append(held, 5))
	if !slices.Equal(got, want) {
		t.Fatal("after settling, the logits differ from a fresh session's")
	}
}
