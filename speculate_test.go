package llm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// repetitive is a prompt whose continuation tends to repeat it, so that
// prompt lookup finds drafts.
const repetitive = "Once upon a time, there was a little girl named Lily. She liked to play with her ball. " +
	"One day, Lily went to the park with her mom. Once upon a time, there was a little girl named Lily. She liked"

// batchesExact reports whether m's logits from one pass over several
// tokens equal, bit for bit, those of passes of one token on this CPU and
// build: then a speculative generation must give exactly the tokens of a
// plain one. (AVX2's batch kernels may round otherwise; under purego, and
// for these F32, F16 and Llama Q4_K models here, they do not.)
func batchesExact(t *testing.T, m *llm.Model) bool {
	t.Helper()
	ctx := context.Background()
	ids, err := m.Tokenize(repetitive)
	if err != nil {
		t.Fatal(err)
	}
	ids = ids[:min(len(ids), 40)] // within the smallest context tested
	v := m.Info().VocabSize
	all := mustEval(t, ctx, session(t, m).EvalAll, ids)
	one := session(t, m)
	for i := range ids {
		if !slices.Equal(mustEval(t, ctx, one.Eval, ids[i:i+1]), all[i*v:(i+1)*v]) {
			return false
		}
	}
	return true
}

// generation is what one generation produced: its text, the session's
// tokens and logits afterwards, its usage, and the tokens' log-probabilities
// (with WithLogprobs).
type generation struct {
	text     string
	tokens   []int32
	logits   []float32
	usage    llm.Usage
	logprobs []float32
}

// generate runs Stream on a new session of m, stopping after brk tokens
// when brk > 0.
func generate(t *testing.T, m *llm.Model, prompt string, brk int, opts ...llm.GenerateOption) generation {
	t.Helper()
	return generateIn(t, session(t, m), prompt, brk, opts...)
}

// generateIn is generate on session s.
func generateIn(t *testing.T, s *llm.Session, prompt string, brk int, opts ...llm.GenerateOption) generation {
	t.Helper()
	var b strings.Builder
	var lps []float32
	n := 0
	for tok, err := range s.Stream(context.Background(), prompt, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(tok.Text)
		lps = append(lps, tok.Logprob)
		for _, top := range tok.TopLogprobs {
			lps = append(lps, top.Logprob)
		}
		if n++; n == brk {
			break
		}
	}
	return generation{b.String(), s.Tokens(), slices.Clone(s.Logits()), s.Usage(), lps}
}

// TestSpeculationExact: with prompt lookup the output, the tokens the
// session holds, its logits and the usage (tokens and finish) are those of
// plain generation, greedy and seeded, with penalties, stop strings, JSON
// output, MaxTokens and a caller that stops reading — asserted bit for bit
// where the model's batched passes give the logits of one-token passes
// (batchesExact); elsewhere (tiny-qwen3 with AVX2 or AVX-512 kernels) the
// generation must still keep the session holding exactly its output.
func TestSpeculationExact(t *testing.T) {
	exact, accepted, refused := 0, 0, 0
	for _, file := range []string{"stories260K-f32.gguf", "stories260K-f16.gguf", "tiny-llama-q4_k_m.gguf", "tiny-qwen3-q4_k_m.gguf"} {
		m := load(t, testutil.Testdata(t, "models/"+file), llm.WithThreads(2), llm.WithContextSize(256))
		same := batchesExact(t, m)
		if same {
			exact++
		}
		for _, tc := range speculationCases() {
			opts, ok := tc.on(file)
			if !ok {
				continue
			}
			plain := generate(t, m, repetitive, tc.brk, opts...)
			// NGram 1 drafts after most tokens, and most drafts are
			// refused: the path of a refusal is run often.
			lookups := []llm.PromptLookup{{Draft: 6, NGram: 2}, {Draft: 3, MinDraft: 2, NGram: 1}}
			if raceEnabled {
				// As TestDraftModelExact: the threads of one setting under
				// the race detector, the arithmetic of both elsewhere.
				lookups = lookups[1:]
			}
			for _, l := range lookups {
				spec := generate(t, m, repetitive, tc.brk, append(opts, llm.WithSpeculation(l))...)
				accepted += spec.usage.AcceptedTokens
				refused += spec.usage.DraftTokens - spec.usage.AcceptedTokens
				checkSpeculation(t, m, file+" "+tc.name, same, plain, spec)
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Errorf("%d drafts accepted, %d refused: a path of speculation went untested", accepted, refused)
	}
	if exact == 0 {
		t.Error("no model's batched passes matched its one-token passes: exactness went unchecked")
	}
}

// specCase is a generation TestSpeculationExact and TestDraftModelExact
// run with speculation and without: its options, and a caller that stops
// reading after brk tokens when brk > 0.
type specCase struct {
	name string
	brk  int
	opts []llm.GenerateOption
}

// speculationCases are the generations the exactness tests run.
func speculationCases() []specCase {
	return []specCase{
		{"greedy", 0, []llm.GenerateOption{llm.Temperature(0)}},
		{"seeded", 0, []llm.GenerateOption{llm.Temperature(0.8), llm.Seed(7)}},
		{"hot", 0, []llm.GenerateOption{llm.Temperature(1.5), llm.Seed(3), llm.TopK(0)}},
		{"penalties", 0, []llm.GenerateOption{llm.Temperature(0.7), llm.Seed(1), llm.RepeatPenalty(1.2), llm.PresencePenalty(0.3)}},
		// stories260K's greedy output ends in a loop of " the" that
		// drafts are accepted in: the stops, the break and MaxTokens
		// fall inside it.
		{"stop", 0, []llm.GenerateOption{llm.Temperature(0), llm.Stop("the the the the")}},
		{"stop inside a token", 0, []llm.GenerateOption{llm.Temperature(0), llm.Stop("e the the t")}},
		{"json", 0, []llm.GenerateOption{llm.Temperature(0.9), llm.Seed(2), llm.WithJSON()}},
		{"break", 9, []llm.GenerateOption{llm.Temperature(0)}},
		{"break late", 70, []llm.GenerateOption{llm.Temperature(0)}},
		{"short", 0, []llm.GenerateOption{llm.Temperature(0), llm.MaxTokens(63)}},
		{"logprobs", 0, []llm.GenerateOption{llm.Temperature(0.5), llm.Seed(4), llm.WithLogprobs(2)}},
	}
}

// on is the options of c on a model of file, with 80 tokens at most;
// false for cases left out of a model whose vocabulary is large (slow
// under purego) and whose output has no loop for the stops to fall in:
// those run greedy and seeded, 40 tokens.
func (c specCase) on(file string) ([]llm.GenerateOption, bool) {
	opts := append([]llm.GenerateOption{llm.MaxTokens(80)}, c.opts...)
	if !strings.HasPrefix(file, "stories") {
		if !slices.Contains([]string{"greedy", "seeded"}, c.name) {
			return nil, false
		}
		opts[0] = llm.MaxTokens(40)
	}
	return opts, true
}

// checkSpeculation compares a speculative generation with the plain one
// of the same options: bit for bit when exact, else the session must hold
// its output.
func checkSpeculation(t *testing.T, m *llm.Model, name string, exact bool, plain, spec generation) {
	t.Helper()
	u := spec.usage
	t.Logf("%s exact=%v: %d tokens, %d drafted, %d accepted, finish %s", name, exact, u.GeneratedTokens, u.DraftTokens, u.AcceptedTokens, u.Finish)
	if u.AcceptedTokens > u.DraftTokens {
		t.Errorf("%s: accepted %d of %d drafts", name, u.AcceptedTokens, u.DraftTokens)
	}
	if text, err := m.Detokenize(spec.tokens); err != nil || !strings.HasSuffix(text, spec.text) {
		t.Errorf("%s: the session holds %q, which does not end with the output %q", name, text, spec.text)
	}
	if !exact {
		return
	}
	u.DraftTokens, u.AcceptedTokens = 0, 0
	u.PromptTime, u.GenerateTime = 0, 0
	plain.usage.PromptTime, plain.usage.GenerateTime = 0, 0
	switch {
	case spec.text != plain.text:
		t.Errorf("%s: speculation generated %q, plain generation %q", name, spec.text, plain.text)
	case !slices.Equal(spec.tokens, plain.tokens):
		t.Errorf("%s: the session holds other tokens after speculation", name)
	case !slices.Equal(spec.logits, plain.logits):
		t.Errorf("%s: the session's logits differ after speculation", name)
	case !slices.Equal(spec.logprobs, plain.logprobs):
		t.Errorf("%s: the tokens' log-probabilities differ after speculation", name)
	case u != plain.usage:
		t.Errorf("%s: usage %+v, plain %+v", name, u, plain.usage)
	}
}

// TestSpeculationOptions: fields out of range fail with ErrInvalidOption
// naming the field.
func TestSpeculationOptions(t *testing.T) {
	m := loadStories(t)
	s := session(t, m)
	for _, tc := range []struct {
		l     llm.PromptLookup
		field string
	}{
		{llm.PromptLookup{Draft: -1}, "Draft"},
		{llm.PromptLookup{Draft: 65}, "Draft"},
		{llm.PromptLookup{Draft: 4, MinDraft: 5}, "MinDraft"},
		{llm.PromptLookup{Draft: 4, MinDraft: -1}, "MinDraft"},
		{llm.PromptLookup{Draft: 4, NGram: -1}, "NGram"},
		{llm.PromptLookup{Draft: 4, NGram: 65}, "NGram"},
	} {
		_, err := s.Generate(context.Background(), "Once", llm.WithSpeculation(tc.l))
		if !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: err = %v, want ErrInvalidOption naming %s", tc.l, err, tc.field)
		}
	}
}

// TestSpeculationShiftAndGrowth: past a full context that shifts, and
// past the KV cache's first size, a speculative generation, by prompt
// lookup or by a draft model (stories260K drafting for itself), shifts
// and grows where plain generation does and gives its tokens
// (stories260K, whose batched passes match one-token passes).
func TestSpeculationShiftAndGrowth(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []llm.Option
		n    int
	}{
		{"shift", []llm.Option{llm.WithContextSize(48), llm.WithContextShift(4)}, 150},
		{"growth", []llm.Option{llm.WithContextSize(1024)}, 300},
	} {
		m := loadStories(t, tc.opts...)
		if !batchesExact(t, m) {
			t.Skip("batched passes round otherwise on this CPU")
		}
		run := func(s *llm.Session, opts ...llm.GenerateOption) (generation, llm.KVStats) {
			out, err := s.Generate(context.Background(), "Once upon a time, there was a girl", append(opts, llm.MaxTokens(tc.n), llm.Temperature(0))...)
			if err != nil {
				t.Fatal(err)
			}
			return generation{out, s.Tokens(), slices.Clone(s.Logits()), s.Usage(), nil}, s.KVStats()
		}
		plain, ps := run(session(t, m))
		draft := loadStories(t, tc.opts...)
		for _, sp := range []struct {
			name string
			s    *llm.Session
			opt  llm.GenerateOption
		}{
			{"lookup", session(t, m), llm.WithSpeculation(llm.PromptLookup{Draft: 5, NGram: 1})},
			{"draft model", session(t, m, llm.WithDraftModel(draft)), llm.WithDrafting(llm.Drafting{Draft: 5})},
		} {
			spec, ss := run(sp.s, sp.opt)
			t.Logf("%s %s: %d shifts, %d grows; %d drafted, %d accepted", tc.name, sp.name, ss.Shifts, ss.Grows, spec.usage.DraftTokens, spec.usage.AcceptedTokens)
			if ps.Shifts+ps.Grows == 0 || spec.usage.AcceptedTokens == 0 {
				t.Fatalf("%s %s: %d shifts, %d grows, %d drafts accepted: nothing tested", tc.name, sp.name, ps.Shifts, ps.Grows, spec.usage.AcceptedTokens)
			}
			if spec.text != plain.text || !slices.Equal(spec.tokens, plain.tokens) || ss.Shifts != ps.Shifts || ss.Cells != ps.Cells {
				t.Errorf("%s %s: with speculation %q (%+v), plain %q (%+v)", tc.name, sp.name, spec.text, ss, plain.text, ps)
			}
		}
	}
}
