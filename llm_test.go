package llm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
)

func loadStories(t *testing.T, opts ...llm.Option) *llm.Model {
	t.Helper()
	m, err := llm.Load(testutil.Testdata(t, "models/stories260K-f32.gguf"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestDecodeAllocatesNothing(t *testing.T) {
	if testing.Short() && raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	// KVInt4 needs head sizes of whole q4_0 blocks: tiny-llama's 64
	// (rotated keys and values), not stories260K's 8.
	for _, kvt := range []llm.KVType{llm.KVF16, llm.KVInt8, llm.KVInt4} {
		t.Run(kvt.String(), func(t *testing.T) {
			opts := []llm.Option{llm.WithThreads(2), llm.WithContextSize(512), llm.WithKVType(kvt)}
			var m *llm.Model
			if kvt == llm.KVInt4 {
				var err error
				if m, err = llm.Load(testutil.Testdata(t, "models/tiny-llama-q4_k_m.gguf"), opts...); err != nil {
					t.Fatal(err)
				}
				defer m.Close()
			} else {
				m = loadStories(t, opts...)
			}
			s, err := m.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			ids, _ := m.Tokenize("Once upon a time")
			if _, err := s.Eval(ctx, ids); err != nil {
				t.Fatal(err)
			}
			tok := []int32{42}
			allocs := testing.AllocsPerRun(50, func() {
				if _, err := s.Eval(ctx, tok); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("decode step allocates %.1f times, want 0", allocs)
			}
		})
	}
}

func TestPromptLongerThanContext(t *testing.T) {
	m := loadStories(t, llm.WithContextSize(16))
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := make([]int32, 17)
	for i := range ids {
		ids[i] = int32(i + 3)
	}
	if _, err := s.Eval(context.Background(), ids); !errors.Is(err, llm.ErrContextFull) {
		t.Fatalf("17 tokens into 16: err = %v, want ErrContextFull", err)
	}
	if s.Len() != 0 {
		t.Fatalf("failed eval left %d tokens in the session", s.Len())
	}
	if _, err := s.Eval(context.Background(), ids[:16]); err != nil {
		t.Fatalf("16 tokens into 16: %v", err)
	}
	_, err = s.Generate(context.Background(), "more text that does not fit", llm.MaxTokens(4))
	if !errors.Is(err, llm.ErrContextFull) {
		t.Fatalf("generate past the context: err = %v, want ErrContextFull", err)
	}
}

func TestBadTokens(t *testing.T) {
	m := loadStories(t)
	s, _ := m.NewSession()
	defer s.Close()
	for _, ids := range [][]int32{{-1}, {512}, {1, 2, 1 << 30}} {
		if _, err := s.Eval(context.Background(), ids); !errors.Is(err, llm.ErrBadToken) {
			t.Errorf("Eval(%v): err = %v, want ErrBadToken", ids, err)
		}
	}
	if _, err := s.Eval(context.Background(), nil); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("Eval(nil): err = %v, want ErrInvalidOption", err)
	}
	if _, err := m.Detokenize([]int32{600}); !errors.Is(err, llm.ErrBadToken) {
		t.Errorf("Detokenize(600): err = %v", err)
	}
}

func TestInvalidOptions(t *testing.T) {
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	for name, o := range map[string]llm.Option{
		"context 0":  llm.WithContextSize(0),
		"threads -1": llm.WithThreads(-1),
		"kv type 7":  llm.WithKVType(7),
		"batch 0":    llm.WithBatchSize(0),
		"memory -1":  llm.WithMemoryLimit(-1),
	} {
		if _, err := llm.Load(path, o); !errors.Is(err, llm.ErrInvalidOption) {
			t.Errorf("%s: err = %v, want ErrInvalidOption", name, err)
		}
	}
	m := loadStories(t)
	s, _ := m.NewSession()
	defer s.Close()
	for name, o := range map[string]llm.GenerateOption{
		"top-p 0":        llm.TopP(0),
		"top-p 1.5":      llm.TopP(1.5),
		"temperature -1": llm.Temperature(-1),
		"top-k -1":       llm.TopK(-1),
		"min-p 2":        llm.MinP(2),
		"repeat 0":       llm.RepeatPenalty(0),
		"max tokens 0":   llm.MaxTokens(0),
		"empty stop":     llm.Stop(""),
	} {
		if _, err := s.Generate(context.Background(), "Once", o); !errors.Is(err, llm.ErrInvalidOption) {
			t.Errorf("%s: err = %v, want ErrInvalidOption", name, err)
		}
	}
	if _, err := m.NewSession(llm.WithContextSize(-5)); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("session context -5: err = %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(testutil.Testdata(t, "models/stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownArch := func() []byte {
		w := gguf.NewWriter()
		w.AddKV("general.architecture", "mamba")
		p := filepath.Join(dir, "mamba.gguf")
		f, _ := os.Create(p)
		defer f.Close()
		if _, err := w.WriteTo(f); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		return b
	}()
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"truncated header", src[:100], llm.ErrBadModel},
		{"truncated data", src[:len(src)-1000], llm.ErrBadModel},
		{"not gguf", []byte("this is not a model file at all, just some text"), llm.ErrBadModel},
		{"unknown architecture", unknownArch, llm.ErrUnsupportedArch},
	}
	for _, c := range cases {
		if _, err := llm.Load(write(c.name, c.data)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := llm.Load(filepath.Join(dir, "missing.gguf")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestClosedModel(t *testing.T) {
	m, err := llm.Load(testutil.Testdata(t, "models/stories260K-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.NewSession()
	m.Close()
	if _, err := s.Eval(context.Background(), []int32{1}); !errors.Is(err, llm.ErrClosed) {
		t.Fatalf("eval after model close: %v", err)
	}
	if _, err := m.NewSession(); !errors.Is(err, llm.ErrClosed) {
		t.Fatalf("session after close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// TestSessionsConcurrent runs sessions of one model on several goroutines
// and checks each gets the same greedy text as a lone session.
func TestSessionsConcurrent(t *testing.T) {
	m := loadStories(t, llm.WithThreads(2))
	gen := func() (string, error) {
		s, err := m.NewSession()
		if err != nil {
			return "", err
		}
		defer s.Close()
		return s.Generate(context.Background(), "Once upon a time", llm.MaxTokens(16), llm.Temperature(0))
	}
	want, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]string, 4)
	errs := make([]error, 4)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = gen() })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != want {
			t.Errorf("session %d: %q, %v; want %q", i, got[i], errs[i], want)
		}
	}
}

// TestStreamGreedyMatchesGolden checks Stream's greedy tokens against
// llama.cpp's continuation, up to the first low-margin step.
func TestStreamGreedyMatchesGolden(t *testing.T) {
	g := loadGolden(t, "stories260K-f32.P3.json")
	m := loadStories(t)
	s, _ := m.NewSession()
	defer s.Close()
	var ids []int32
	for tok, err := range s.Stream(context.Background(), g.Prompt, llm.MaxTokens(32), llm.Temperature(0)) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tok.ID)
	}
	for k, want := range g.Greedy.Tokens {
		if g.Greedy.Margins[k] < 0.5 {
			break
		}
		if k >= len(ids) || ids[k] != want {
			t.Fatalf("step %d: got %v, llama.cpp %d", k, ids, want)
		}
	}
	text, err := m.Detokenize(ids)
	if err != nil || text == "" {
		t.Fatalf("detokenize: %q %v", text, err)
	}
}

func TestSeedReproducible(t *testing.T) {
	m := loadStories(t)
	gen := func(seed uint64) string {
		s, _ := m.NewSession()
		defer s.Close()
		out, err := s.Generate(context.Background(), "Once upon a time", llm.MaxTokens(24), llm.Temperature(1), llm.TopK(0), llm.MinP(0), llm.Seed(seed))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := gen(1), gen(1), gen(2)
	if a != b {
		t.Fatalf("same seed, different text: %q vs %q", a, b)
	}
	if a == c {
		t.Fatalf("seeds 1 and 2 gave the same 24 tokens: %q", a)
	}
}
