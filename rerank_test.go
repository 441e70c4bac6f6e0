package llm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// rerankTemplate is a Qwen3-Reranker-style pair template of our own.
const rerankTemplate = "<|im_start|>system\nJudge.<|im_end|>\n<|im_start|>user\nQ: {query}\nD: {document}<|im_end|>\n<|im_start|>assistant\n"

// TestRerank: a BERT cross-encoder (cls then cls.output, the first
// token's state), a Jina v1 reranker (jina-bert-v2: cls of one row) and a Qwen3-Reranker (cls.output over "yes" and "no",
// the last token's state, a softmax, a rerank template) score each pair as
// their head computed by hand from the file's weights over the pair's
// pooled state scores it; the pair laid out as llama-server lays it out.
func TestRerank(t *testing.T) {
	ctx := context.Background()
	const query = "the quick brown fox"
	docs := []string{"the dog", "a quick fox jumps over", "brown"}
	bert := testutil.TinyBert()
	bert.WeightType, bert.Pooling, bert.RankLabels = quant.F32, 4, []string{"relevance"}
	qwen := testutil.TinyQwen3()
	qwen.WeightType, qwen.Pooling, qwen.RankLabels = quant.F32, 4, []string{"yes", "no"}
	qwen.ChatTokens, qwen.RerankTemplate = []string{"<|im_start|>", "<|im_end|>"}, rerankTemplate
	jina := testutil.TinyJinaBertV2()
	jina.WeightType, jina.Pooling, jina.RankLabels = quant.F32, 4, []string{"relevance"}
	wordPiecePair := func(m *llm.Model, doc string) []int32 {
		// [CLS] query [SEP] doc: WordPiece adds BOS and SEP, no EOS.
		q, d := inner(t, m, query), inner(t, m, doc)
		return slices.Concat([]int32{m.BOS()}, q, []int32{testutil.WPMSEP}, d)
	}
	for _, tc := range []struct {
		spec testutil.ModelSpec
		pool llm.Pooling
		pair func(m *llm.Model, doc string) []int32
	}{
		{bert, llm.PoolingCLS, wordPiecePair},
		// Jina's v1 rerankers: cls alone, one row (tanh(cls·h + b)).
		{jina, llm.PoolingCLS, wordPiecePair},
		{qwen, llm.PoolingLast, func(m *llm.Model, doc string) []int32 {
			// The template's text, special tokens parsed and none added.
			ids, err := m.TokenizeSpecial(strings.NewReplacer("{query}", query, "{document}", doc).Replace(rerankTemplate))
			if err != nil {
				t.Fatal(err)
			}
			if m.Info().AddBOS && ids[0] == m.BOS() {
				ids = ids[1:]
			}
			return ids
		}},
	} {
		t.Run(tc.spec.Arch, func(t *testing.T) {
			file := modelBytes(t, tc.spec)
			m := load(t, writeTemp(t, t.TempDir(), "rerank.gguf", file), llm.WithThreads(1))
			got, err := m.Rerank(ctx, query, docs)
			if err != nil {
				t.Fatal(err)
			}
			s := session(t, m)
			inSession, err := s.Rerank(ctx, query, docs)
			if err != nil || !slices.Equal(inSession, got) {
				t.Errorf("Session.Rerank %v (%v), Model.Rerank %v", inSession, err, got)
			}
			tokens := 0
			for _, doc := range docs {
				tokens += len(tc.pair(m, doc))
			}
			if u := s.Usage(); u.PromptTokens != tokens {
				t.Errorf("usage %+v, want %d prompt tokens", u, tokens)
			}
			head := readHead(t, file)
			for i, doc := range docs {
				h, err := s.EmbedTokens(ctx, tc.pair(m, doc), llm.WithPooling(tc.pool), llm.WithNormalize(false))
				if err != nil {
					t.Fatal(err)
				}
				want := head.score(h, tc.spec.Arch == "qwen3")
				if d := math.Abs(float64(got[i]) - want); d > 1e-5*max(1, math.Abs(want)) {
					t.Errorf("document %d: score %v, want %v (by hand from the pooled state)", i, got[i], want)
				}
			}
			if tc.spec.Arch == "qwen3" && (got[0] <= 0 || got[0] >= 1) {
				t.Errorf("Qwen3's score %v is not a probability", got[0])
			}
		})
	}
}

// inner is text's tokens without the markers the tokenizer adds.
func inner(t *testing.T, m *llm.Model, text string) []int32 {
	ids, err := m.Tokenize(text)
	if err != nil {
		t.Fatal(err)
	}
	if info := m.Info(); info.AddBOS && ids[0] == m.BOS() {
		ids = ids[1:]
	}
	return ids[:len(ids)-1] // WordPiece's [SEP]
}

// rankHead is a reranker's head as the file holds it (F32).
type rankHead struct {
	cls, clsB, out, outB []float32
	e                    int
}

func readHead(t *testing.T, file []byte) rankHead {
	g, err := gguf.Read(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	floats := func(name string) []float32 {
		ti, ok := g.Tensor(name)
		if !ok {
			return nil
		}
		b := file[ti.Offset : ti.Offset+ti.Size]
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return v
	}
	ti, ok := g.Tensor("cls.output.weight")
	if !ok {
		ti, _ = g.Tensor("cls.weight")
	}
	return rankHead{floats("cls.weight"), floats("cls.bias"), floats("cls.output.weight"), floats("cls.output.bias"), int(ti.Dims[0])}
}

// score is llama.cpp's rank pooling in float64: tanh(cls·h + b), then
// cls.output·x + b, then for Qwen3 a softmax; the first output.
func (h rankHead) score(v []float32, softmax bool) float64 {
	x := make([]float64, len(v))
	for i, a := range v {
		x[i] = float64(a)
	}
	product := func(w, b []float32, x []float64) []float64 {
		out := make([]float64, len(w)/h.e)
		for r := range out {
			for i, a := range x {
				out[r] += float64(w[r*h.e+i]) * a
			}
			out[r] += float64(b[r])
		}
		return out
	}
	if h.cls != nil {
		x = product(h.cls, h.clsB, x)
		for i := range x {
			x[i] = math.Tanh(x[i])
		}
	}
	if h.out != nil {
		x = product(h.out, h.outB, x)
	}
	if softmax {
		top, sum := max(x[0], x[1]), 0.0
		for _, a := range x {
			sum += math.Exp(a - top)
		}
		return math.Exp(x[0]-top) / sum
	}
	return x[0]
}

// TestRerankRefusals: a model that is not a reranker cannot rerank, a
// reranker cannot embed, and a rank file without a head, or whose labels
// disagree with its head, does not load.
func TestRerankRefusals(t *testing.T) {
	ctx := context.Background()
	plain := load(t, testutil.TempModel(t, testutil.TinyBert()), llm.WithThreads(1))
	if _, err := plain.Rerank(ctx, "q", []string{"d"}); !errors.Is(err, llm.ErrUnsupportedArch) {
		t.Errorf("Rerank of an embedder: %v, want ErrUnsupportedArch", err)
	}
	spec := testutil.TinyBert()
	spec.Pooling, spec.RankLabels = 4, []string{"relevance"}
	rr := load(t, testutil.TempModel(t, spec), llm.WithThreads(1))
	if _, err := rr.Embed(ctx, []string{"q"}); !errors.Is(err, llm.ErrUnsupportedArch) || !strings.Contains(err.Error(), "Rerank") {
		t.Errorf("Embed of a reranker: %v, want ErrUnsupportedArch pointing to Rerank", err)
	}
	if _, err := rr.Rerank(ctx, "q", nil); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("Rerank of no documents: %v, want ErrInvalidOption", err)
	}

	headless := testutil.TinyBert()
	headless.Pooling = 4
	if _, err := llm.Load(testutil.TempModel(t, headless)); !errors.Is(err, llm.ErrUnsupportedArch) || !strings.Contains(err.Error(), "classification head") {
		t.Errorf("rank pooling without a head: %v", err)
	}
	h := parseModel(t, modelBytes(t, spec))
	h.set(".classifier.output_labels", []string{"a", "b"})
	p := writeTemp(t, t.TempDir(), "labels.gguf", h.bytes(t))
	if _, err := llm.Load(p); !errors.Is(err, llm.ErrBadModel) || !strings.Contains(err.Error(), "cls.output.weight") {
		t.Errorf("two labels, a head of one: %v", err)
	}
}

// TestRerankMisuse: Rerank on a nil or closed model or a closed session,
// with a cancelled or nil context, or a document longer than the context,
// returns a documented error, naming the document when one is the cause.
func TestRerankMisuse(t *testing.T) {
	spec := testutil.TinyBert()
	spec.Pooling, spec.RankLabels = 4, []string{"relevance"}
	m := load(t, testutil.TempModel(t, spec), llm.WithThreads(1), llm.WithContextSize(64))
	ctx := context.Background()
	var none *llm.Model
	if _, err := none.Rerank(ctx, "q", []string{"d"}); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("nil model: %v, want ErrClosed", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Rerank(cancelled, "q", []string{"d"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	var nilCtx context.Context
	_, err := m.Rerank(nilCtx, "q", []string{"d"})
	checkDocumented(t, "Rerank nil ctx", err)
	s := session(t, m)
	_, err = s.Rerank(ctx, "q", []string{"a", strings.Repeat("word ", 200)})
	var te *llm.TextError
	if !errors.Is(err, llm.ErrContextFull) || !errors.As(err, &te) || te.Index != 1 {
		t.Errorf("a document past the context: %v, want ErrContextFull naming document 1", err)
	}
	s.Close()
	if _, err := s.Rerank(ctx, "q", []string{"d"}); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("closed session: %v, want ErrClosed", err)
	}
	m.Close()
	if _, err := m.Rerank(ctx, "q", []string{"d"}); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("closed model: %v, want ErrClosed", err)
	}
}
