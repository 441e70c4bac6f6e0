package llm

import (
	"context"
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/model"
)

// Pooling is how Embed makes one vector of a text's final-norm hidden
// states: the mean, the first token's (CLS) or the last's. The default is
// the file's pooling_type, else the last.
type Pooling = model.Pooling

// Pooling types for WithPooling.
const (
	PoolingMean Pooling = model.PoolingMean
	PoolingCLS  Pooling = model.PoolingCLS
	PoolingLast Pooling = model.PoolingLast
)

// EmbedOption changes how Embed makes a vector. By default it pools as the
// file says, normalises to unit length (as llama-server and Ollama do),
// and fails a text longer than the context with ErrContextFull.
type EmbedOption func(*engine.Embedding)

// WithPooling overrides the file's pooling.
func WithPooling(p Pooling) EmbedOption { return func(o *engine.Embedding) { o.Pooling = p } }

// WithNormalize(false) returns the pooled vector as it is, not scaled to
// unit length.
func WithNormalize(on bool) EmbedOption { return func(o *engine.Embedding) { o.Raw = !on } }

// WithTruncate(true) embeds the first tokens of a text longer than the
// context (keeping the end-of-sequence token the vocabulary appends)
// instead of failing, as Ollama's truncate.
func WithTruncate(on bool) EmbedOption { return func(o *engine.Embedding) { o.Truncate = on } }

// WithDimensions keeps the vector's first n (1 to Info().Embedding)
// elements, then normalises, as OpenAI's dimensions (Matryoshka models).
func WithDimensions(n int) EmbedOption { return func(o *engine.Embedding) { o.Dimensions = n } }

// TextError is the error of text Index (from 0) of Of given to Embed or
// EmbedBatch; errors.Is sees the reason (ErrContextFull …) through it.
type TextError = seq.TextError

// Embed returns a vector for each text (an embedding model's, such as
// Qwen3-Embedding's, or any model's pooled hidden states), in a session of
// its own within the memory plan. Short texts share forward passes, each
// evaluated as if alone; texts are tokenized as llama-server does (special
// tokens parsed, BOS/EOS as the vocabulary asks). A text's error is a
// *TextError.
func (m *Model) Embed(ctx context.Context, texts []string, opts ...EmbedOption) (_ [][]float32, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	vs, _, err := m.e.Embed(ctx, texts, engine.Embeddings(opts))
	return vs, err
}

// Embed is Model.Embed of one text in this session, which it resets
// first and leaves empty: the session's context bounds the text.
func (s *Session) Embed(ctx context.Context, text string, opts ...EmbedOption) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.m.e.EmbedText(ctx, s.q, text, engine.Embeddings(opts))
}

// EmbedTokens is Embed of tokens as given (nothing added).
func (s *Session) EmbedTokens(ctx context.Context, ids []int32, opts ...EmbedOption) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	v, _, err := s.m.e.EmbedTokens(ctx, s.q, ids, engine.Embeddings(opts))
	return v, err
}

// EmbedBatch is EmbedTokens of several token lists batched as Model.Embed
// batches texts, in this session (reset first, left empty); a list's error
// is a *TextError.
func (s *Session) EmbedBatch(ctx context.Context, ids [][]int32, opts ...EmbedOption) (_ [][]float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	vs, _, err := s.m.e.EmbedAll(ctx, s.q, ids, engine.Embeddings(opts))
	return vs, err
}

// Rerank scores each document's relevance to query (higher is more) with a
// reranker, a file whose pooling_type is rank (a BERT cross-encoder, or
// Qwen3-Reranker: the probability of "yes"), laying out pairs as
// llama-server does and batching them as Embed does; other models fail
// with ErrUnsupportedArch, a document with a *TextError.
func (m *Model) Rerank(ctx context.Context, query string, documents []string) (_ []float32, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	scores, _, err := m.e.Rerank(ctx, nil, query, documents)
	return scores, err
}

// Rerank is Model.Rerank in this session, which it resets first and
// leaves empty: the session's context bounds each pair, and Usage then
// counts the pairs' tokens (PromptTokens).
func (s *Session) Rerank(ctx context.Context, query string, documents []string) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	scores, _, err := s.m.e.Rerank(ctx, s.q, query, documents)
	return scores, err
}
