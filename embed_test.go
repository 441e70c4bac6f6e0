package llm_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// embedModel writes a tiny qwen3 with F32 weights (so that batches and
// single tokens round alike up to float summation order) and the given
// pooling_type, and loads it.
func embedModel(t *testing.T, pooling uint32, addEOS bool, opts ...llm.Option) *llm.Model {
	t.Helper()
	spec := testutil.TinyQwen3()
	spec.WeightType = quant.F32
	spec.Pooling, spec.AddEOS = pooling, addEOS
	path := testutil.TempModel(t, spec)
	return load(t, path, opts...)
}

func embedTokens(t *testing.T, s *llm.Session, ids []int32, opts ...llm.EmbedOption) []float32 {
	t.Helper()
	v, err := s.EmbedTokens(context.Background(), ids, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// closeVectors fails when a and b differ in length or by more than tol in
// an element, naming the first such element.
func closeVectors(t *testing.T, what string, a, b []float32, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d elements, want %d", what, len(a), len(b))
	}
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > tol || math.IsNaN(d) {
			t.Fatalf("%s: element %d is %v, want %v (off by %g)", what, i, a[i], b[i], d)
		}
	}
}

func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(ss))
	}
	return out
}

// Attention is causal, so token i's hidden state in a text is the last
// token's state of the text's first i+1 tokens embedded alone: mean
// pooling is the mean of those, CLS the first one's. The file's pooling
// applies without WithPooling, the last token's when it names none.
func TestEmbedPooling(t *testing.T) {
	ctx := context.Background()
	ids := []int32{1, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51}
	raw := llm.WithNormalize(false)
	m := embedModel(t, 0, false)
	s := session(t, m)
	prefixes := make([][]float32, len(ids))
	for i := range ids {
		prefixes[i] = embedTokens(t, s, ids[:i+1], raw, llm.WithPooling(llm.PoolingLast))
	}
	mean := make([]float32, len(prefixes[0]))
	for j := range mean {
		var sum float64
		for _, p := range prefixes {
			sum += float64(p[j])
		}
		mean[j] = float32(sum / float64(len(ids)))
	}
	last := prefixes[len(ids)-1]
	closeVectors(t, "mean", embedTokens(t, s, ids, raw, llm.WithPooling(llm.PoolingMean)), mean, 1e-4)
	closeVectors(t, "cls", embedTokens(t, s, ids, raw, llm.WithPooling(llm.PoolingCLS)), prefixes[0], 1e-4)
	closeVectors(t, "no pooling in the file: last", embedTokens(t, s, ids, raw), last, 0)

	for _, tc := range []struct {
		file uint32
		want []float32
	}{{1, mean}, {2, prefixes[0]}, {3, last}} {
		s := session(t, embedModel(t, tc.file, false))
		closeVectors(t, "the file's pooling", embedTokens(t, s, ids, raw), tc.want, 1e-4)
		closeVectors(t, "WithPooling over the file's", embedTokens(t, s, ids, raw, llm.WithPooling(llm.PoolingLast)), last, 1e-4)
	}

	// A text longer than the batch is evaluated in chunks.
	small := session(t, m, llm.WithBatchSize(4))
	closeVectors(t, "mean in chunks of 4", embedTokens(t, small, ids, raw, llm.WithPooling(llm.PoolingMean)), mean, 1e-4)
	closeVectors(t, "last in chunks of 4", embedTokens(t, small, ids, raw), last, 1e-4)
	closeVectors(t, "cls in chunks of 4", embedTokens(t, small, ids, raw, llm.WithPooling(llm.PoolingCLS)), prefixes[0], 1e-4)

	// Normalised by default; dimensions cut, then normalise.
	closeVectors(t, "normalised", embedTokens(t, s, ids), unit(last), 1e-6)
	closeVectors(t, "8 dimensions", embedTokens(t, s, ids, llm.WithDimensions(8)), unit(last[:8]), 1e-6)

	// The session is empty after an embedding and goes on working.
	if n := s.Len(); n != 0 {
		t.Errorf("the session holds %d tokens after Embed", n)
	}
	if _, err := s.Eval(ctx, ids); err != nil {
		t.Fatal(err)
	}
	closeVectors(t, "after an Eval", embedTokens(t, s, ids, raw), last, 0)
}

// Model.Embed makes the same vectors as a session's Embed, in order, and
// text is tokenized as TokenizeSpecial does; so does Session.EmbedBatch
// of the tokens. Both pack the texts into shared passes (F32 weights
// round alike in any batch, so the bits agree).
func TestModelEmbed(t *testing.T) {
	ctx := context.Background()
	m := embedModel(t, 1, false)
	s := session(t, m)
	texts := []string{"hello world", "a", "the quick brown fox jumps over the lazy dog"}
	vs, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	lists, _ := llmtest.TokenizeAll(t, m, texts...)
	batch, err := s.EmbedBatch(ctx, lists)
	if err != nil {
		t.Fatal(err)
	}
	alone := llmtest.EmbedEach(t, s, texts...)
	for i, text := range texts {
		closeVectors(t, text+" by EmbedBatch", batch[i], vs[i], 0)
		closeVectors(t, text, vs[i], alone[i], 0)
		closeVectors(t, text+" as tokens", vs[i], embedTokens(t, s, lists[i]), 0)
	}
}

// A text longer than the context fails, or is cut with WithTruncate —
// keeping the end-of-sequence token the vocabulary appends.
func TestEmbedTruncate(t *testing.T) {
	ctx := context.Background()
	long := "the quick brown fox jumps over the lazy dog and runs far away into the woods"
	for _, addEOS := range []bool{false, true} {
		m := embedModel(t, 3, addEOS)
		s := session(t, m, llm.WithContextSize(8))
		ids, err := m.TokenizeSpecial(long)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) <= 8 {
			t.Fatalf("%d tokens: the text must be longer than the context", len(ids))
		}
		if _, err := s.Embed(ctx, long); !errors.Is(err, llm.ErrContextFull) {
			t.Errorf("too long: %v, want ErrContextFull", err)
		}
		want := append([]int32(nil), ids[:8]...)
		if addEOS {
			if ids[len(ids)-1] != m.EOS() {
				t.Fatalf("add_eos_token: the text ends with %d, not EOS", ids[len(ids)-1])
			}
			want[7] = m.EOS()
		}
		got, err := s.Embed(ctx, long, llm.WithTruncate(true))
		if err != nil {
			t.Fatal(err)
		}
		closeVectors(t, "truncated", got, embedTokens(t, s, want), 0)
		// Truncating tokens given by the caller leaves them as they were.
		given := slices.Clone(ids)
		closeVectors(t, "truncated tokens", embedTokens(t, s, given, llm.WithTruncate(true)), got, 0)
		if !slices.Equal(given, ids) {
			t.Errorf("EmbedTokens with truncation changed the caller's tokens: %v, was %v", given, ids)
		}
		if _, err := m.Embed(ctx, []string{long}, llm.WithTruncate(true)); err != nil {
			t.Errorf("Model.Embed with truncation: %v", err)
		}
	}
}

func TestEmbedErrors(t *testing.T) {
	ctx := context.Background()
	m := embedModel(t, 0, false)
	width := m.Info().Embedding
	s := session(t, m)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"no texts", func() error { _, err := m.Embed(ctx, nil); return err }(), llm.ErrInvalidOption},
		{"no tokens", func() error { _, err := s.EmbedTokens(ctx, nil); return err }(), llm.ErrInvalidOption},
		{"bad token", func() error { _, err := s.EmbedTokens(ctx, []int32{1, 100000}); return err }(), llm.ErrBadToken},
		{"bad pooling", func() error { _, err := s.Embed(ctx, "hi", llm.WithPooling(9)); return err }(), llm.ErrInvalidOption},
		{"no pooling", func() error { _, err := m.Embed(ctx, []string{"hi"}, llm.WithPooling(0)); return err }(), nil},
		{"negative dimensions", func() error { _, err := s.Embed(ctx, "hi", llm.WithDimensions(-1)); return err }(), llm.ErrInvalidOption},
		{"dimensions past the width", func() error { _, err := s.Embed(ctx, "hi", llm.WithDimensions(width+1)); return err }(), llm.ErrInvalidOption},
		{"cancelled", func() error { _, err := s.Embed(cancelled, "hi"); return err }(), context.Canceled},
		{"too long for the model", func() error {
			_, err := m.Embed(ctx, []string{"hi", strings.Repeat("word ", 400)})
			return err
		}(), llm.ErrContextFull},
		{"rank pooling without a head", func() error {
			spec := testutil.TinyLlama()
			spec.Pooling = 4 // a reranker's Embed is TestRerankRefusals'
			_, err := llm.Load(testutil.TempModel(t, spec))
			return err
		}(), llm.ErrUnsupportedArch},
		{"closed session", func() error {
			c := session(t, m)
			c.Close()
			_, err := c.Embed(ctx, "hi")
			return err
		}(), llm.ErrClosed},
		{"closed model", func() error {
			c := embedModel(t, 0, false)
			c.Close()
			_, err := c.Embed(ctx, []string{"hi"})
			return err
		}(), llm.ErrClosed},
	} {
		if !errors.Is(tc.err, tc.want) || (tc.want != nil) != (tc.err != nil) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	var nilCtx context.Context
	if _, err := s.Embed(nilCtx, "hi"); err == nil {
		t.Error("a nil context was taken")
	}

	// Of several texts, the one refused is named.
	var te *llm.TextError
	_, err := m.Embed(ctx, []string{"hi", "there", strings.Repeat("word ", 400)})
	if !errors.As(err, &te) || te.Index != 2 || te.Of != 3 || !errors.Is(err, llm.ErrContextFull) || !strings.Contains(err.Error(), "(text 2 of 3)") {
		t.Errorf("text 2 too long: %v", err)
	}
	_, err = s.EmbedBatch(ctx, [][]int32{{1, 2}, {1, 100000}})
	if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, llm.ErrBadToken) {
		t.Errorf("a bad token in list 1: %v", err)
	}
	if _, err := s.EmbedBatch(ctx, nil); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("no lists: %v", err)
	}
}
