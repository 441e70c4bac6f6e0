package seq

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/internal/tokenizer"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/sampler"
)

// synthetic builds a testutil model and its tokenizer.
func synthetic(t *testing.T, spec testutil.ModelSpec) (*model.Model, *tokenizer.Tokenizer, *ops.Pool) {
	t.Helper()
	data, err := testutil.ModelBytes(spec)
	f, data := testutil.Parse(t, data, err)
	m, err := model.New(f, data)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	pool := ops.NewPool(1)
	t.Cleanup(pool.Close)
	return m, tok, pool
}

func ids(n, seed int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(3 + (i*7+seed*13)%250)
	}
	return out
}

// TestHold checks that Hold evaluates only what differs from the tokens
// held (the reused count) and leaves the logits a fresh evaluation of the
// same prompt gives, for a growing chat, a repeated prompt, an edited
// history and a shorter one, with full attention and with a sliding
// window whose ring no longer holds the shared prefix.
func TestHold(t *testing.T) {
	gemma := testutil.TinyGemma2() // layer 0 has a window of 16
	for _, tc := range []struct {
		name string
		spec testutil.ModelSpec
		// prompts held one after another and the tokens each reuses.
		prompts [][]int32
		reused  []int
	}{
		{"grow", testutil.TinyLlama(), [][]int32{ids(10, 1), append(ids(10, 1), ids(7, 2)...), append(ids(10, 1), ids(7, 2)...)}, []int{0, 10, 16}},
		{"edit", testutil.TinyLlama(), [][]int32{ids(20, 1), append(ids(12, 1), ids(5, 3)...), ids(6, 1)}, []int{0, 12, 5}},
		// The window's ring (16 cells: windowed layers attend token by token)
		// holds positions 24..39: continuing from 39 needs 24..38, held;
		// continuing from 38 or 10 needs positions lost, so the prompt is
		// evaluated from the start.
		{"window kept", gemma, [][]int32{ids(40, 1), append(ids(39, 1), ids(4, 2)...)}, []int{0, 39}},
		{"window lost at the edge", gemma, [][]int32{ids(40, 1), append(ids(38, 1), ids(4, 2)...)}, []int{0, 0}},
		{"window lost", gemma, [][]int32{ids(40, 1), append(ids(10, 1), ids(4, 2)...), ids(3, 4)}, []int{0, 0, 0}},
		// lfm2's conv layers rewind to a checkpoint (each pass's end, 4
		// tokens apart) and evaluate the rest of the prefix again: 13 from
		// 12, 5 from 4.
		{"lfm2 grow", testutil.TinyLFM2(), [][]int32{ids(10, 1), append(ids(10, 1), ids(7, 2)...), append(ids(10, 1), ids(7, 2)...)}, []int{0, 10, 16}},
		{"lfm2 edit", testutil.TinyLFM2(), [][]int32{ids(18, 1), append(ids(13, 1), ids(5, 3)...), ids(6, 1)}, []int{0, 13, 5}},
		// gemma3n: layers that read other layers' caches, windows of 4
		// whose rings hold a pass of 4 beside them.
		{"gemma3n grow", testutil.TinyGemma3n(), [][]int32{ids(10, 1), append(ids(10, 1), ids(7, 2)...), append(ids(10, 1), ids(7, 2)...)}, []int{0, 10, 16}},
		// gemma4: the same, with heads padded into the cache's.
		{"gemma4 grow", testutil.TinyGemma4(), [][]int32{ids(10, 1), append(ids(10, 1), ids(7, 2)...), append(ids(10, 1), ids(7, 2)...)}, []int{0, 10, 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, pool := synthetic(t, tc.spec)
			budget := memplan.NewKVBudget(1<<30, nil)
			ctx := context.Background()
			cfg := Config{Context: 128, Batch: 4}
			s, err := New(m, ops.NewExec(pool), budget, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i, p := range tc.prompts {
				reused, err := s.Hold(ctx, p)
				if err != nil {
					t.Fatalf("prompt %d: %v", i, err)
				}
				if reused != tc.reused[i] {
					t.Errorf("prompt %d: reused %d tokens, want %d", i, reused, tc.reused[i])
				}
				if !slices.Equal(s.Tokens(), p) {
					t.Fatalf("prompt %d: holds %v, want %v", i, s.Tokens(), p)
				}
				fresh, err := New(m, ops.NewExec(pool), budget, cfg)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fresh.Eval(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(s.Logits(), want) {
					t.Errorf("prompt %d: logits differ from a fresh evaluation", i)
				}
				fresh.Close()
			}
		})
	}
}

func TestHoldErrors(t *testing.T) {
	m, _, pool := synthetic(t, testutil.TinyLlama())
	budget := memplan.NewKVBudget(1<<30, nil)
	ctx := context.Background()
	s, err := New(m, ops.NewExec(pool), budget, Config{Context: 16, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Hold(ctx, nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("empty prompt: %v", err)
	}
	if _, err := s.Hold(ctx, ids(17, 1)); !errors.Is(err, kv.ErrFull) {
		t.Errorf("prompt past the context: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Hold(cancelled, ids(8, 1)); !errors.Is(err, context.Canceled) || s.Len() != 0 {
		t.Errorf("cancelled: %v, holds %d", err, s.Len())
	}
	s.Close()
	if _, err := s.Hold(ctx, ids(3, 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

// eogVocab declares one more token end-of-generation than its tokenizer.
type eogVocab struct {
	*tokenizer.Tokenizer
	eog int32
}

func (v eogVocab) IsEOG(id int32) bool { return id == v.eog || v.Tokenizer.IsEOG(id) }

// TestGenerateFromStopsAtEOG checks GenerateFrom's usage report and that
// generation ends at any token the vocabulary declares end-of-generation,
// not only EOS.
func TestGenerateFromStopsAtEOG(t *testing.T) {
	m, tok, pool := synthetic(t, testutil.TinyLlama())
	budget := memplan.NewKVBudget(1<<30, nil)
	ctx := context.Background()
	g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 6}
	g.Temperature = 0
	run := func(v Vocab, prompt []int32) ([]int32, Usage) {
		s, err := New(m, ops.NewExec(pool), budget, Config{Context: 64, Batch: 8, Vocab: v})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var got []int32
		if err := s.GenerateFrom(ctx, prompt, g, func(id int32, _ string) bool {
			if id >= 0 {
				got = append(got, id)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return got, s.Usage()
	}
	prompt := ids(9, 1)
	all, u := run(tok, prompt)
	if len(all) != 6 || u.Finish != FinishLength || u.GeneratedTokens != 6 || u.PromptTokens != 9 || u.ReusedTokens != 0 {
		t.Fatalf("generated %v, usage %+v", all, u)
	}
	got, u := run(eogVocab{tok, all[3]}, prompt)
	if !slices.Equal(got, all[:3]) || u.Finish != FinishEnd || u.GeneratedTokens != 3 {
		t.Errorf("with token %d as end of generation: generated %v (usage %+v), want %v", all[3], got, u, all[:3])
	}
}

// controlVocab treats one token as a control token: no text in output.
type controlVocab struct {
	*tokenizer.Tokenizer
	control int32
}

func (v controlVocab) OutputPiece(id int32) []byte {
	if id == v.control {
		return nil
	}
	return v.Tokenizer.OutputPiece(id)
}

// TestGeneratePreserve checks that a control token listed in
// Generation.Preserve (a chat marker) keeps its text in the output.
func TestGeneratePreserve(t *testing.T) {
	m, tok, pool := synthetic(t, testutil.TinyLlama())
	budget := memplan.NewKVBudget(1<<30, nil)
	g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 4}
	g.Temperature = 0
	run := func(v Vocab, g Generation) (string, []int32) {
		s, err := New(m, ops.NewExec(pool), budget, Config{Context: 64, Batch: 8, Vocab: v})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var text []byte
		var got []int32
		if err := s.GenerateFrom(context.Background(), ids(5, 1), g, func(id int32, s string) bool {
			got, text = append(got, id), append(text, s...)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return string(text), got
	}
	all, gen := run(tok, g)
	marker := gen[1]
	v := controlVocab{tok, marker}
	hidden, _ := run(v, g)
	g.Preserve = []int32{marker}
	shown, _ := run(v, g)
	if shown != all || hidden == all || len(hidden) != len(all)-len(tok.OutputPiece(marker)) {
		t.Errorf("output %q; with token %d as control %q, preserved %q", all, marker, hidden, shown)
	}
}

// braceless hides the text of every token that holds an opening brace,
// so no token can begin a JSON object.
type braceless struct{ *tokenizer.Tokenizer }

func (v braceless) OutputPiece(id int32) []byte {
	if p := v.Tokenizer.OutputPiece(id); !bytes.Contains(p, []byte("{")) {
		return p
	}
	return nil
}

// TestGenerateJSONNoToken: JSON output from a vocabulary that cannot
// write it fails with ErrInvalidOption before yielding anything, and the
// sequence holds the prompt.
func TestGenerateJSONNoToken(t *testing.T) {
	m, tok, pool := synthetic(t, testutil.TinyLlama())
	s, err := New(m, ops.NewExec(pool), memplan.NewKVBudget(1<<30, nil), Config{Context: 64, Batch: 8, Vocab: braceless{tok}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 4, JSON: true}
	yielded := 0
	err = s.GenerateFrom(context.Background(), ids(5, 1), g, func(int32, string) bool { yielded++; return true })
	if !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "JSON") || yielded != 0 || s.Len() != 5 {
		t.Fatalf("err %v, %d yielded, holds %d tokens; want ErrInvalidOption naming JSON, none, 5", err, yielded, s.Len())
	}
}
