package seq

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/sampler"
)

// An encoder (attention over the whole text) embeds a text in one forward
// pass: a text longer than the sequence's batch is refused with
// ErrInvalidOption, never embedded in pieces; its CLS and mean vectors
// are the whole pass's. Its sequences neither evaluate nor generate: they
// fail with the embedding-model error, and go on embedding afterwards.
func TestEmbedEncoder(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyBert(), testutil.TinyNomicBert(), testutil.TinyNomicBertMoE(), testutil.TinyJinaBertV2()} {
		t.Run(spec.Arch, func(t *testing.T) {
			m, tok, pool := synthetic(t, spec)
			ctx := context.Background()
			budget := memplan.NewKVBudget(1<<30, nil)
			open := func(batch int) *Seq {
				s, err := New(m, ops.NewExec(pool), budget, Config{Context: 64, Batch: batch, Vocab: tok})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Close)
				return s
			}
			ids := tok.Encode("the quick brown fox jumps over the lazy dog", true)
			if ids[0] != testutil.WPMCLS || ids[len(ids)-1] != testutil.WPMSEP {
				t.Fatalf("tokens %v: want [CLS] … [SEP]", ids)
			}
			small, whole := open(4), open(64)
			v := make([]float32, m.Embd)
			if err := small.Embed(ctx, ids, model.PoolingMean, v); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "one forward pass") {
				t.Errorf("a text longer than the batch: %v", err)
			}
			hidden := make([]float32, len(ids)*m.Embd)
			st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: len(ids), Cache: kv.F16, Cells: 64})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Hidden(ids, 0, hidden); err != nil {
				t.Fatal(err)
			}
			if err := whole.Embed(ctx, ids, model.PoolingCLS, v); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v, hidden[:m.Embd]) {
				t.Error("CLS pooling is not the first token's state of the whole pass")
			}
			if err := whole.Embed(ctx, ids, model.PoolingMean, v); err != nil {
				t.Fatal(err)
			}
			for j := range m.Embd {
				var sum float64
				for tk := range ids {
					sum += float64(hidden[tk*m.Embd+j])
				}
				if want := float32(sum / float64(len(ids))); v[j] != want {
					t.Fatalf("mean element %d: %v, want %v", j, v[j], want)
				}
			}
			g := Generation{Config: sampler.DefaultConfig(1), MaxTokens: 2}
			for name, err := range map[string]error{
				"Eval":         func() error { _, err := whole.Eval(ctx, ids); return err }(),
				"Generate":     whole.Generate(ctx, "the cat", g, func(int32, string) bool { return true }),
				"GenerateFrom": whole.GenerateFrom(ctx, ids, g, func(int32, string) bool { return true }),
			} {
				if !errors.Is(err, model.ErrUnsupportedArch) || !strings.Contains(err.Error(), "use Embed") {
					t.Errorf("%s on an encoder: %v", name, err)
				}
			}
			if err := whole.Embed(ctx, ids, model.PoolingCLS, v); err != nil || !slices.Equal(v, hidden[:m.Embd]) {
				t.Errorf("embedding after the refused calls: %v", err)
			}
		})
	}
}

// EmbedAll packs the short texts into shared passes and embeds a causal
// model's text longer than a pass alone, in chunks: every vector is the
// one Embed gives its text alone (bit for bit with F32 weights, in every
// pooling), and the sequence is empty afterwards. A refused text is named
// by a TextError, before anything is evaluated.
func TestEmbedAllMatchesEmbed(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyLlama(), testutil.TinyGemma3n(), testutil.TinyBert()} {
		spec.WeightType = quant.F32
		t.Run(spec.Arch, func(t *testing.T) {
			m, tok, pool := synthetic(t, spec)
			ctx := context.Background()
			s, err := New(m, ops.NewExec(pool), memplan.NewKVBudget(1<<30, nil), Config{Context: 48, Batch: 16, Vocab: tok})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			lens := []int{5, 1, 9, 16, 3, 7, 2}
			if !m.NonCausal {
				lens = append(lens, 40, 4) // longer than a pass: alone, in chunks
			}
			texts := make([][]int32, len(lens))
			for i, l := range lens {
				texts[i] = ids(l, i)
			}
			for _, p := range []model.Pooling{model.PoolingMean, model.PoolingCLS, model.PoolingLast} {
				got := make([][]float32, len(texts))
				for i := range got {
					got[i] = make([]float32, m.Embd)
				}
				if err := s.EmbedAll(ctx, texts, p, got); err != nil {
					t.Fatal(err)
				}
				if n := s.Len(); n != 0 {
					t.Fatalf("%v: the sequence holds %d tokens after EmbedAll", p, n)
				}
				want := make([]float32, m.Embd)
				for i, text := range texts {
					if err := s.Embed(ctx, text, p, want); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got[i], want) {
						for j := range want {
							if got[i][j] != want[j] {
								t.Fatalf("%v: text %d (%d tokens), element %d: %v together, %v alone", p, i, len(text), j, got[i][j], want[j])
							}
						}
					}
				}
			}

			bad := slices.Clone(texts)
			bad[2] = []int32{int32(m.Vocab)}
			vs := make([][]float32, len(bad))
			for i := range vs {
				vs[i] = make([]float32, m.Embd)
			}
			var te *TextError
			err = s.EmbedAll(ctx, bad, model.PoolingMean, vs)
			if !errors.As(err, &te) || te.Index != 2 || te.Of != len(bad) || !errors.Is(err, model.ErrTokenOutOfRange) || !strings.Contains(err.Error(), "(text 2 of") {
				t.Errorf("a token outside the vocabulary in text 2: %v", err)
			}
			bad[2] = nil
			if err := s.EmbedAll(ctx, bad, model.PoolingMean, vs); !errors.As(err, &te) || te.Index != 2 || !errors.Is(err, ErrInvalidOption) {
				t.Errorf("an empty text 2: %v", err)
			}
			bad[2] = ids(49, 0)
			if err := s.EmbedAll(ctx, bad, model.PoolingMean, vs); !errors.As(err, &te) || te.Index != 2 || !errors.Is(err, kv.ErrFull) {
				t.Errorf("text 2 past the context: %v", err)
			}
			if err := s.EmbedAll(ctx, texts, model.PoolingMean, vs[:1]); !errors.Is(err, ErrInvalidOption) {
				t.Errorf("one vector for %d texts: %v", len(texts), err)
			}
		})
	}
}
