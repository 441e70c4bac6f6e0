package llm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/sampler"
)

func loadStories(t *testing.T, opts ...llm.Option) *llm.Model {
	t.Helper()
	return load(t, testutil.Testdata(t, "models/stories260K-f32.gguf"), opts...)
}

// load loads the model at path; it closes when the test ends.
func load(tb testing.TB, path string, opts ...llm.Option) *llm.Model {
	tb.Helper()
	m, err := llm.Load(path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// session opens a session of m; it closes when the test ends.
func session(tb testing.TB, m *llm.Model, opts ...llm.SessionOption) *llm.Session {
	tb.Helper()
	s, err := m.NewSession(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// loadLeast loads path under the least memory limit the plan allows with
// opts (for streamed weights, every block read from disk); the model
// closes when the test ends. It returns the least plan too.
func loadLeast(tb testing.TB, path string, opts ...llm.Option) (*llm.Model, llm.MemoryPlan) {
	tb.Helper()
	least, err := llm.Plan(path, append(opts, llm.WithMemoryLimit(1), llm.WithStrictMemory())...)
	if err != nil {
		tb.Fatal(err)
	}
	return load(tb, path, append(opts, llm.WithMemoryLimit(least.Total))...), least
}

// mustEval returns eval's logits for ids (a Session's Eval or EvalAll),
// failing the test on an error.
func mustEval(tb testing.TB, ctx context.Context, eval func(context.Context, []int32) ([]float32, error), ids []int32) []float32 {
	tb.Helper()
	z, err := eval(ctx, ids)
	if err != nil {
		tb.Fatal(err)
	}
	return z
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
				m = load(t, testutil.Testdata(t, "models/tiny-llama-q4_k_m.gguf"), opts...)
			} else {
				m = loadStories(t, opts...)
			}
			s := session(t, m)
			ctx := context.Background()
			ids, _ := m.Tokenize("Once upon a time")
			if _, err := s.Eval(ctx, ids); err != nil {
				t.Fatal(err)
			}
			checkDecodeAllocs(t, s, 50, "decode step")
		})
	}
}

// checkDecodeAllocs fails the test if a one-token Eval on s allocates,
// averaged over runs runs; what names the step in the message.
func checkDecodeAllocs(t *testing.T, s *llm.Session, runs int, what string) {
	t.Helper()
	ctx := context.Background()
	tok := []int32{42}
	if n := testing.AllocsPerRun(runs, func() {
		if _, err := s.Eval(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%s allocates %.1f times, want 0", what, n)
	}
}

func TestPromptLongerThanContext(t *testing.T) {
	m := loadStories(t, llm.WithContextSize(16))
	s := session(t, m)
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
	_, err := s.Generate(context.Background(), "more text that does not fit", llm.MaxTokens(4))
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
		_, err := llm.Load(path, o)
		if !errors.Is(err, llm.ErrInvalidOption) {
			t.Errorf("%s: err = %v, want ErrInvalidOption", name, err)
		}
		// The root's own options speak as the root, never as the sampler.
		if msg := fmt.Sprint(err); !strings.HasPrefix(msg, "llm: ") || strings.Contains(msg, "sampler") {
			t.Errorf("%s: message %q, want it to start with \"llm: \" and not name the sampler", name, msg)
		}
		if errors.Is(err, sampler.ErrInvalidOption) {
			t.Errorf("%s: a load option error matches sampler.ErrInvalidOption", name)
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
		_, err := s.Generate(context.Background(), "Once", o)
		if !errors.Is(err, llm.ErrInvalidOption) || !strings.HasPrefix(fmt.Sprint(err), "llm: ") {
			t.Errorf("%s: err = %v, want ErrInvalidOption, said by llm", name, err)
		}
	}
	// A sampling value the sampler refuses matches the sampler's sentinel
	// as well as the root's, and its message names the sampler's field.
	if _, err := s.Generate(context.Background(), "Once", llm.TopP(0)); !errors.Is(err, sampler.ErrInvalidOption) || !strings.Contains(err.Error(), "top_p") {
		t.Errorf("top-p 0: err = %v, want it to match sampler.ErrInvalidOption too", err)
	}
	if s.Len() != 0 {
		t.Errorf("a refused Generate left %d tokens in the session", s.Len())
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
		w.AddKV("general.architecture", "rwkv5")
		p := filepath.Join(dir, "unknown.gguf")
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

// TestSamplingLeavesLogits checks who owns the logits: a Generate with
// penalties that ends on a stop string leaves Logits (and so Save) as the
// model computed them, not penalised by the sampler.
func TestSamplingLeavesLogits(t *testing.T) {
	m := loadStories(t, llm.WithThreads(2), llm.WithContextSize(128))
	s := session(t, m)
	ctx := context.Background()
	penalties := []llm.GenerateOption{llm.Temperature(0), llm.RepeatPenalty(1.5), llm.FrequencyPenalty(0.5),
		llm.PresencePenalty(0.5), llm.PenaltyLastN(-1), llm.MaxTokens(40)}
	text, err := s.Generate(ctx, "Once upon a time", penalties...)
	if err != nil || len(text) < 2 {
		t.Fatalf("generate: %q, %v", text, err)
	}
	// Stop on the second character of the text: the token that completes
	// it is sampled from penalised logits and never evaluated.
	s.Reset()
	if _, err := s.Generate(ctx, "Once upon a time", append(penalties, llm.Stop(text[1:2]))...); err != nil {
		t.Fatal(err)
	}
	ref := session(t, m)
	want := mustEval(t, ctx, ref.Eval, s.Tokens())
	if !slices.Equal(s.Logits(), want) {
		t.Fatal("Logits after a penalised Generate differ from the model's logits for the same tokens")
	}
}

// TestLoadRefusesOverBudget checks the public face of the planner: Load
// refuses a model that does not fit even after degrading, and Plan reports
// the degradation Load would make.
func TestLoadRefusesOverBudget(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Context = 8192
	path := testutil.TempModel(t, spec)
	opts := []llm.Option{llm.WithContextSize(8192), llm.WithThreads(2), llm.WithBatchSize(64)}
	// The least any configuration needs: INT8, 2048 tokens, every block streamed.
	least, err := llm.Plan(path, append(opts, llm.WithMemoryLimit(1), llm.WithContextSize(2048), llm.WithKVType(llm.KVInt8),
		llm.WithWeights(llm.WeightsStreaming), llm.WithStrictMemory())...)
	if err != nil || least.Fits {
		t.Fatalf("plan at 1 byte: %+v %v", least, err)
	}
	// Load refuses before touching the weights.
	if _, err := llm.Load(path, append(opts, llm.WithMemoryLimit(least.Total-1))...); !errors.Is(err, llm.ErrOutOfMemoryBudget) {
		t.Errorf("Load over budget: err = %v, want ErrOutOfMemoryBudget", err)
	}
	int8, err := llm.Plan(path, append(opts, llm.WithMemoryLimit(1<<40), llm.WithKVType(llm.KVInt8))...)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := llm.Plan(path, append(opts, llm.WithMemoryLimit(int8.Total))...)
	if err != nil || pp.KVType != llm.KVInt8 || !pp.Fits {
		t.Errorf("Plan: %+v %v", pp, err)
	}
}

// TestStreamingDecodeAllocatesNothing is TestDecodeAllocatesNothing with
// every block read from disk.
func TestStreamingDecodeAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	spec := testutil.TinyLlama()
	spec.Layers, spec.Embd, spec.FFN = 8, 128, 256
	path := testutil.TempModel(t, spec)
	opts := []llm.Option{llm.WithThreads(2), llm.WithContextSize(64), llm.WithWeights(llm.WeightsStreaming)}
	m, least := loadLeast(t, path, opts...)
	if p := m.Plan(); p.Weights != llm.WeightsStreaming || p.ResidentWeights != least.ResidentWeights {
		t.Fatalf("plan: %+v, want every block streamed", p)
	}
	llm.StopWatch(m) // its polls allocate, on their own goroutine
	s := session(t, m)
	ctx := context.Background()
	if _, err := s.Eval(ctx, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	checkDecodeAllocs(t, s, 30, "a streamed decode step")
}
