package llm_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestDraftModelExact: with a draft model (WithDraftModel) the output,
// the tokens the session holds, its logits, log-probabilities and usage
// are those of plain generation in every case TestSpeculationExact runs,
// bit for bit where the target's batched passes give its one-token
// passes' logits: for a draft of the same weights (which, greedy, must
// have every draft kept), one that agrees often (stories260K in F16 for
// its F32 target), a draft of other weights that disagrees (testutil's
// llama of another seed and depth), and a draft whose context is shorter
// than the session's (it stops drafting there).
func TestDraftModelExact(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s testutil.ModelSpec) string {
		p := filepath.Join(dir, name)
		if err := testutil.WriteModelFile(p, s); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tiny := testutil.TinyLlama()
	tiny.WeightType = 0 // F32: batched passes as exact as one-token ones
	other := tiny
	other.Seed, other.Layers = 11, 1
	tinyPath, otherPath := write("tiny.gguf", tiny), write("other.gguf", other)
	stories := testutil.Testdata(t, "models/stories260K-f32.gguf")
	opts := []llm.Option{llm.WithThreads(2), llm.WithContextSize(256)}
	for _, tc := range []struct {
		name          string
		target, draft string
		draftOpts     []llm.Option
		same          bool // the draft's weights are the target's
	}{
		{"stories self", stories, stories, nil, true},
		{"stories f16", stories, testutil.Testdata(t, "models/stories260K-f16.gguf"), nil, false},
		{"stories f16 context 96", stories, testutil.Testdata(t, "models/stories260K-f16.gguf"), []llm.Option{llm.WithContextSize(96)}, false},
		{"tiny self", tinyPath, tinyPath, nil, true},
		{"tiny other", tinyPath, otherPath, nil, false},
	} {
		m := load(t, tc.target, opts...)
		d := load(t, tc.draft, append(opts, tc.draftOpts...)...)
		exact := batchesExact(t, m)
		file := filepath.Base(tc.target)
		drafted, refused := 0, 0
		for _, c := range speculationCases() {
			gopts, ok := c.on(file)
			if !ok {
				continue
			}
			plain := generate(t, m, repetitive, c.brk, gopts...)
			// PMin 0 drafts whatever the draft's confidence (the tiny
			// random models are never sure); 0.3 stops drafts early.
			drafts := []llm.Drafting{{Draft: 6}, {Draft: 3, MinDraft: 2, PMin: 0.3}, llm.DefaultDrafting()}
			if raceEnabled {
				// The race detector needs the threads of one setting, not
				// the arithmetic of three (the other stages check those).
				drafts = drafts[:1]
			}
			for _, dr := range drafts {
				s := session(t, m, llm.WithDraftModel(d))
				spec := generateIn(t, s, repetitive, c.brk, append(gopts, llm.WithDrafting(dr))...)
				u := spec.usage
				drafted += u.DraftTokens
				refused += u.DraftTokens - u.AcceptedTokens
				name := tc.name + " " + c.name
				checkSpeculation(t, m, name, exact, plain, spec)
				// A draft of the target's weights drafts the target's
				// greedy tokens: only the one at an end may be unkept.
				if exact && tc.same && c.name == "greedy" && u.DraftTokens-u.AcceptedTokens > 1 {
					t.Errorf("%s %+v: %d of %d drafts of the same weights refused", name, dr, u.DraftTokens-u.AcceptedTokens, u.DraftTokens)
				}
			}
		}
		t.Logf("%s: %d drafted, %d refused", tc.name, drafted, refused)
		if drafted == 0 || !tc.same && refused == 0 {
			t.Errorf("%s: %d drafted, %d refused: a path went untested", tc.name, drafted, refused)
		}
	}
}

// TestDraftModelRefused: a draft whose vocabulary llama.cpp would refuse
// (another tokenizer model, sizes over 128 apart, a token's text), an
// embedding model, or conv layers on either side fail NewSession and Load
// with ErrInvalidOption naming the difference; a nil draft is none.
func TestDraftModelRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s testutil.ModelSpec) string {
		p := filepath.Join(dir, name+".gguf")
		if err := testutil.WriteModelFile(p, s); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tiny := testutil.TinyLlama()
	v400 := tiny
	v400.Vocab = 400
	stories := testutil.Testdata(t, "models/stories260K-f32.gguf")
	for _, tc := range []struct {
		name, target, draft, want string
	}{
		{"tokenizer model", stories, testutil.Testdata(t, "models/tiny-qwen3-q4_k_m.gguf"), "tokenizer is gpt2"},
		{"size", stories, write("tiny", tiny), "more than 128 apart"},
		{"token text", stories, write("v400", v400), "token 259 is"},
		{"embedding model", write("bert", testutil.TinyBert()), write("bert", testutil.TinyBert()), "embedding model"},
		{"conv target", write("lfm2", testutil.TinyLFM2()), write("tiny", tiny), "lfm2 has conv"},
		{"conv draft", write("tiny", tiny), write("lfm2", testutil.TinyLFM2()), "lfm2 has conv"},
		{"recurrent target", write("rwkv7", testutil.TinyRWKV7()), write("tiny", tiny), "rwkv7 has conv or recurrent"},
	} {
		m := load(t, tc.target, llm.WithThreads(1))
		d := load(t, tc.draft, llm.WithThreads(1))
		_, err := m.NewSession(llm.WithDraftModel(d))
		if !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewSession: %v, want ErrInvalidOption naming %q", tc.name, err, tc.want)
		}
		if _, err := llm.Load(tc.target, llm.WithThreads(1), llm.WithDraftModel(d)); !errors.Is(err, llm.ErrInvalidOption) {
			t.Errorf("%s: Load: %v, want ErrInvalidOption", tc.name, err)
		}
	}
	m := loadStories(t)
	s := session(t, m, llm.WithDraftModel(nil))
	if _, err := s.Generate(context.Background(), "Once", llm.MaxTokens(4)); err != nil {
		t.Errorf("a nil draft model: %v", err)
	}
	if _, err := s.Generate(context.Background(), "Once", llm.WithDrafting(llm.Drafting{Draft: 2, PMin: 1.5})); !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), "PMin") {
		t.Errorf("PMin 1.5: %v, want ErrInvalidOption naming PMin", err)
	}
}

// TestDraftModelClosed: a draft model closed during a generation leaves
// the session generating the same text without drafts; a session closed
// during one ends it with ErrClosed, its draft session with it; a closed
// draft model makes no sessions (ErrClosed).
func TestDraftModelClosed(t *testing.T) {
	m := loadStories(t, llm.WithContextSize(256))
	ctx := context.Background()
	opts := []llm.GenerateOption{llm.MaxTokens(60), llm.Temperature(0), llm.WithDrafting(llm.Drafting{Draft: 4})}
	plain, err := session(t, m).Generate(ctx, "Once upon a time", opts...)
	if err != nil {
		t.Fatal(err)
	}
	d := loadStories(t, llm.WithContextSize(256))
	s := session(t, m, llm.WithDraftModel(d))
	var b strings.Builder
	n := 0
	for tok, err := range s.Stream(ctx, "Once upon a time", opts...) {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(tok.Text)
		if n++; n == 10 {
			d.Close()
		}
	}
	u := s.Usage()
	if !batchesExact(t, m) {
		plain = b.String() // the texts may differ in a near tie
	}
	if b.String() != plain || u.DraftTokens == 0 || u.DraftTokens > 4*10 {
		t.Errorf("draft closed after 10 tokens: %q, %d drafted; want %q, drafts before the close only", b.String(), u.DraftTokens, plain)
	}

	d = loadStories(t, llm.WithContextSize(256))
	s = session(t, m, llm.WithDraftModel(d))
	n = 0
	for _, err = range s.Stream(ctx, "Once upon a time", opts...) {
		if n++; n == 10 {
			s.Close()
		}
	}
	if !errors.Is(err, llm.ErrClosed) {
		t.Errorf("session closed during generation: %v, want ErrClosed", err)
	}
	if _, err := d.NewSession(); err != nil {
		t.Errorf("the draft model after its session closed: %v", err)
	}
	d.Close()
	if _, err := m.NewSession(llm.WithDraftModel(d)); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("a session of a closed draft model: %v, want ErrClosed", err)
	}
}

// TestDraftModelAtLoad: WithDraftModel given to Load drafts for every
// session (NewSession's nil turns it off), and leaves embedding, which
// generates nothing, without a draft session.
func TestDraftModelAtLoad(t *testing.T) {
	d := loadStories(t)
	m := loadStories(t, llm.WithDraftModel(d))
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		opts  []llm.SessionOption
		draft bool
	}{
		{"Load's draft", nil, true},
		{"NewSession's nil", []llm.SessionOption{llm.WithDraftModel(nil)}, false},
	} {
		s := session(t, m, tc.opts...)
		if _, err := s.Generate(ctx, "Once upon a time", llm.MaxTokens(20), llm.Temperature(0)); err != nil {
			t.Fatal(err)
		}
		if u := s.Usage(); (u.DraftTokens > 0) != tc.draft {
			t.Errorf("%s: %d drafted, want drafts %v", tc.name, u.DraftTokens, tc.draft)
		}
	}
	if _, err := m.Embed(ctx, []string{"a cat", "a dog"}); err != nil {
		t.Errorf("Embed with a draft model: %v", err)
	}
}
