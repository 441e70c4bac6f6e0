package llm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// encoderModel writes the encoder spec with F32 weights and the given
// pooling_type (0: none written) and loads it.
func encoderModel(t *testing.T, spec testutil.ModelSpec, pooling uint32, opts ...llm.Option) *llm.Model {
	t.Helper()
	spec.WeightType, spec.Pooling = quant.F32, pooling
	path := testutil.TempModel(t, spec)
	return load(t, path, opts...)
}

// bert and nomic-bert embed through the public API: text tokenized as
// [CLS] … [SEP], the file's pooling (mean, CLS; mean when it names none,
// every state having seen the whole text), one forward pass whatever the
// session's batch size, and the vectors Model.Embed and Session.Embed
// make agree. (model's TestEncoderMatchesReference checks the states
// themselves against the math.)
func TestEmbedEncoders(t *testing.T) {
	ctx := context.Background()
	raw := llm.WithNormalize(false)
	text := "the quick brown fox jumps over the lazy dog"
	for _, spec := range []testutil.ModelSpec{testutil.TinyBert(), testutil.TinyNomicBert(), testutil.TinyNomicBertMoE(), testutil.TinyJinaBertV2()} {
		t.Run(spec.Arch, func(t *testing.T) {
			m := encoderModel(t, spec, 1)
			if got := m.Info().Architecture; got != spec.Arch {
				t.Fatalf("architecture %q", got)
			}
			ids, err := m.TokenizeSpecial(text)
			if err != nil {
				t.Fatal(err)
			}
			if ids[0] != testutil.WPMCLS || ids[len(ids)-1] != testutil.WPMSEP || len(ids) != 11 {
				t.Fatalf("%q is %v: want [CLS], 9 words, [SEP]", text, ids)
			}
			s := session(t, m, llm.WithBatchSize(4)) // the batch of an encoder's session is its context
			mean := embedTokens(t, s, ids, raw, llm.WithPooling(llm.PoolingMean))
			cls := embedTokens(t, s, ids, raw, llm.WithPooling(llm.PoolingCLS))
			closeVectors(t, "the file's pooling (mean)", embedTokens(t, s, ids, raw), mean, 0)
			vs, err := m.Embed(ctx, []string{text, "a cat"})
			if err != nil {
				t.Fatal(err)
			}
			closeVectors(t, "Model.Embed", vs[0], unit(mean), 1e-6)
			one, err := s.Embed(ctx, "a cat")
			if err != nil {
				t.Fatal(err)
			}
			closeVectors(t, "Session.Embed", vs[1], one, 0)
			// The first state has seen the whole text: CLS is not the
			// embedding of [CLS] alone, as it would be with causal
			// attention.
			alone := embedTokens(t, s, ids[:1], raw)
			if d := maxDiff(alone, cls); d < 1e-3 {
				t.Errorf("CLS of the text equals [CLS] alone (within %g): attention is causal", d)
			}

			closeVectors(t, "the file's pooling (cls)", embedTokens(t, session(t, encoderModel(t, spec, 2)), ids, raw), cls, 0)
			if spec.Arch == "bert" { // nomic-bert files must name their pooling
				closeVectors(t, "no pooling in the file: mean", embedTokens(t, session(t, encoderModel(t, spec, 0)), ids, raw), mean, 0)
			}
		})
	}
}

// errOf is the error of a call that returns a value too.
func errOf[T any](_ T, err error) error { return err }

// A text longer than bert's trained context (its learned positions) is
// ErrContextFull, or with WithTruncate its first tokens and the [SEP]
// that ends it; the plan's context stops there too.
func TestEmbedEncoderTruncate(t *testing.T) {
	ctx := context.Background()
	spec := testutil.TinyBert()
	spec.Context = 16
	m := encoderModel(t, spec, 1, llm.WithContextSize(64))
	if c := m.Info().Context; c != 16 {
		t.Errorf("context %d: bert's learned positions end at 16", c)
	}
	long := strings.Repeat("the cat ", 12)
	ids, err := m.TokenizeSpecial(long)
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, m, llm.WithContextSize(64)) // a session asking for more still stops at 16
	if _, err := s.Embed(ctx, long); !errors.Is(err, llm.ErrContextFull) {
		t.Errorf("too long: %v, want ErrContextFull", err)
	}
	if _, err := m.Embed(ctx, []string{long}); !errors.Is(err, llm.ErrContextFull) {
		t.Errorf("Model.Embed too long: %v, want ErrContextFull", err)
	}
	want := append(append([]int32(nil), ids[:15]...), testutil.WPMSEP)
	got, err := s.Embed(ctx, long, llm.WithTruncate(true))
	if err != nil {
		t.Fatal(err)
	}
	closeVectors(t, "truncated, ending with [SEP]", got, embedTokens(t, s, want), 0)
}

// An encoder computes no logits: every generation call fails with
// ErrUnsupportedArch saying to use Embed, and nothing panics.
func TestEncoderDoesNotGenerate(t *testing.T) {
	ctx := context.Background()
	m := encoderModel(t, testutil.TinyNomicBert(), 1)
	s := session(t, m)
	for name, err := range map[string]error{
		"Eval":     errOf(s.Eval(ctx, []int32{2, 40, 3})),
		"EvalAll":  errOf(s.EvalAll(ctx, []int32{2, 40, 3})),
		"Generate": errOf(s.Generate(ctx, "the cat")),
		"Chat":     errOf(s.Chat(ctx, []llm.Message{{Role: "user", Content: "hi"}})),
		"Complete": func() error {
			for _, err := range s.Complete(ctx, "the cat") {
				if err != nil {
					return err
				}
			}
			return nil
		}(),
	} {
		if !errors.Is(err, llm.ErrUnsupportedArch) || !strings.Contains(err.Error(), "use Embed") {
			t.Errorf("%s: %v, want ErrUnsupportedArch saying to use Embed", name, err)
		}
	}
	if _, err := s.Embed(ctx, "the cat"); err != nil {
		t.Errorf("Embed after the refusals: %v", err)
	}
}

// The memory plan of an encoder: its weights (no output matrix, the
// embedding rows of the tokens seen), a KV cache of the context, an arena
// for a batch of the whole context (one forward pass), and no sampler;
// the model then runs within it.
func TestPlanEncoder(t *testing.T) {
	spec := testutil.TinyNomicBert()
	path := testutil.TempModel(t, spec)
	p, err := llm.Plan(path, llm.WithMemoryLimit(1<<30), llm.WithBatchSize(8))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Fits || p.Context != spec.Context || p.Batch != spec.Context {
		t.Fatalf("plan: fits %v, context %d, batch %d; want the trained context %d as the batch", p.Fits, p.Context, p.Batch, spec.Context)
	}
	for _, c := range p.Components {
		switch c.Name {
		case "activations":
			if !strings.Contains(c.Note, "256-token batch") {
				t.Errorf("activations %q: not a batch of the context", c.Note)
			}
		case "session":
			if c.Bytes > 1<<20 {
				t.Errorf("session %d bytes: an encoder has no sampler or JSON filter", c.Bytes)
			}
		}
	}
	m := load(t, path, llm.WithMemoryLimit(1<<30), llm.WithBatchSize(8))
	if _, err := m.Embed(context.Background(), []string{strings.Repeat("the cat ", 100)}); err != nil {
		t.Fatalf("a text of 200 words in one pass: %v", err)
	}
}

// FuzzEncoder: an encoder file with any bytes changed (metadata, tensor
// data, the vocabulary) loads or fails with a documented error, and what
// loads embeds a text or fails with one: never a panic or a hang.
func FuzzEncoder(f *testing.F) {
	bases := [][]byte{modelBytes(f, testutil.TinyBert()), modelBytes(f, testutil.TinyNomicBert())}
	for i := range bases {
		f.Add(uint8(i), []byte(nil))
		f.Add(uint8(i), []byte{0x10, 0, 0x00, 0x40, 0, 0xff, 0x00, 0x01, 0x7f}) // header bytes
	}
	path := filepath.Join(f.TempDir(), "fuzz.gguf")
	f.Fuzz(func(t *testing.T, which uint8, patch []byte) {
		file := bytes.Clone(bases[int(which)%len(bases)])
		// Three bytes a change: a 16-bit offset (the header is the first few
		// KB, where most of a short patch lands) and the new byte.
		for i := 0; i+3 <= len(patch); i += 3 {
			file[int(binary.LittleEndian.Uint16(patch[i:]))%len(file)] = patch[i+2]
		}
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		documented := func(err error) bool {
			for _, want := range []error{llm.ErrBadModel, llm.ErrUnsupportedArch, llm.ErrUnsupportedType, llm.ErrOutOfMemoryBudget,
				llm.ErrContextFull, llm.ErrInvalidOption, llm.ErrBadToken} {
				if errors.Is(err, want) {
					return true
				}
			}
			return false
		}
		m, err := llm.Load(path, llm.WithMemoryLimit(256<<20), llm.WithThreads(1), llm.WithLogger(quietLogger()))
		if err != nil {
			if len(patch) == 0 || !documented(err) {
				t.Fatalf("Load: %v", err)
			}
			return
		}
		defer m.Close()
		if _, err := m.Embed(context.Background(), []string{"the quick brown fox", ""}); err != nil && !documented(err) {
			t.Fatalf("Embed: %v", err)
		}
	})
}

// EmbeddingGemma (gemma-embedding), ModernBERT, EuroBERT and NeoBERT
// (decoder-style stacks over the whole text) and llama-embed (causal, and
// over the whole text) through the public API: an
// embedding-only model (Info, and generation refused saying to embed),
// whose plan has no sampler and a batch of the whole context (a causal
// one's, the batch asked for), and whose
// texts embed together as they do alone, to unit vectors of its width
// (model's TestGemmaEmbeddingMatchesReference checks the states and the
// dense projection against the math).
func TestEmbedGemmaEmbedding(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyGemmaEmbedding(), testutil.TinyModernBert(), testutil.TinyEuroBert(), testutil.TinyNeoBert(),
		testutil.TinyLlamaEmbed(), testutil.TinyLlamaEmbedBidirectional()} {
		t.Run(spec.Variant(), func(t *testing.T) { testEmbedDecoderStack(t, spec) })
	}
}

// testEmbedDecoderStack is TestEmbedGemmaEmbedding of spec (modern-bert
// too: a pre-norm stack over the whole text without an output matrix).
func testEmbedDecoderStack(t *testing.T, spec testutil.ModelSpec) {
	ctx := context.Background()
	spec.WeightType = quant.F32
	path := testutil.TempModel(t, spec)
	p, err := llm.Plan(path, llm.WithMemoryLimit(1<<30), llm.WithBatchSize(8))
	if err != nil {
		t.Fatal(err)
	}
	// A stack over the whole text takes it in one batch; a causal one
	// (llama-embed without attention.causal) in the batches asked for.
	want := spec.Context
	if spec.Arch == "llama-embed" && !spec.NonCausal {
		want = 8
	}
	if !p.Fits || p.Batch != want {
		t.Fatalf("plan: fits %v, batch %d; want %d", p.Fits, p.Batch, want)
	}
	m := load(t, path, llm.WithMemoryLimit(1<<30))
	if info := m.Info(); !info.EmbeddingOnly || info.Embedding != spec.Embd {
		t.Fatalf("Info: embedding only %v, width %d", info.EmbeddingOnly, info.Embedding)
	}
	s := session(t, m)
	if _, err := s.Generate(ctx, "the cat"); !errors.Is(err, llm.ErrUnsupportedArch) || !strings.Contains(err.Error(), "use Embed") {
		t.Errorf("Generate: %v, want ErrUnsupportedArch saying to use Embed", err)
	}
	texts := []string{"the quick brown fox jumps over the lazy dog and runs", "a cat"}
	vs, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, one := range llmtest.EmbedEach(t, s, texts...) {
		closeVectors(t, texts[i], vs[i], one, 1e-6)
		if len(one) != spec.Embd {
			t.Fatalf("%d elements, want %d", len(one), spec.Embd)
		}
	}
	if d := maxDiff(vs[0], vs[1]); d < 1e-3 {
		t.Errorf("two texts embed within %g of each other", d)
	}
}

// An encoder with XLM-RoBERTa's kind of vocabulary — bert as bge-m3 and
// multilingual-e5 are made, nomic-bert-moe as nomic-embed-text-v2-moe,
// jina-bert-v3 as jina-embeddings-v3 —
// a SentencePiece unigram one (tokenizer.ggml.model "t5"), loads and
// embeds: text is tokenized as <s> … </s> by Viterbi over the scores
// after the file's charsmap (full-width letters, the ideographic space
// and tabs give the ASCII text's tokens, and so its embedding) and with
// extra whitespace removed; a character no token covers is <unk>;
// Model.Embed and Session.Embed agree with the pooled states.
func TestEmbedUnigram(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []testutil.ModelSpec{testutil.TinyBert(), testutil.TinyNomicBertMoE(), testutil.TinyJinaBertV3()} {
		t.Run(spec.Arch, func(t *testing.T) {
			// XLM-RoBERTa embeds one token type (type_vocab_size 1).
			spec.Unigram, spec.TokenTypes = true, 1
			vocab, err := testutil.UGMVocab(spec.Vocab)
			if err != nil {
				t.Fatal(err)
			}
			id := func(s string) int32 {
				i := slices.Index(vocab.Tokens, s)
				if i < 0 {
					t.Fatalf("no token %q", s)
				}
				return int32(i)
			}
			m := encoderModel(t, spec, 1)
			text, wide := "the quick  brown fox", "ｔｈｅ　ｑｕｉｃｋ\tｂｒｏｗｎ ｆｏｘ"
			want := []int32{testutil.UGMBOS, id("▁the"), id("▁quick"), id("▁brown"), id("▁fox"), testutil.UGMEOS}
			for _, s := range []string{text, wide} {
				if ids, err := m.Tokenize(s); err != nil || !slices.Equal(ids, want) {
					t.Errorf("Tokenize(%q) = %v, %v; want %v", s, ids, err, want)
				}
			}
			if ids, err := m.Tokenize("the ☃"); err != nil || !slices.Equal(ids, []int32{testutil.UGMBOS, id("▁the"), id("▁"), testutil.UGMUnk, testutil.UGMEOS}) {
				t.Errorf("Tokenize(the ☃) = %v, %v", ids, err)
			}
			// As llama.cpp's, the text after a dropped <s> keeps the
			// prefix's space.
			if s, err := m.Detokenize(want); err != nil || s != " the quick brown fox" {
				t.Errorf("Detokenize = %q, %v", s, err)
			}
			vs, err := m.Embed(ctx, []string{text, wide})
			if err != nil {
				t.Fatal(err)
			}
			closeVectors(t, "full-width text", vs[1], vs[0], 0)
			s := session(t, m, llm.WithBatchSize(8))
			mean := embedTokens(t, s, want, llm.WithNormalize(false), llm.WithPooling(llm.PoolingMean))
			closeVectors(t, "Model.Embed", vs[0], unit(mean), 1e-6)
			one, err := s.Embed(ctx, text)
			if err != nil {
				t.Fatal(err)
			}
			closeVectors(t, "Session.Embed", vs[0], one, 1e-6)
		})
	}
}
