package llm

import (
	"context"
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/model"
)

// Pooling is how Embed makes one vector of a text's hidden states (each
// token's output of the final norm): PoolingMean, PoolingCLS (the first
// token's) or PoolingLast. Without WithPooling, Embed pools as the file's
// pooling_type says, and takes the last token's when it says nothing.
type Pooling = model.Pooling

// Pooling types for WithPooling.
const (
	PoolingMean = model.PoolingMean
	PoolingCLS  = model.PoolingCLS
	PoolingLast = model.PoolingLast
)

// EmbedOption changes how Embed makes a vector. By default it pools as the
// file says and normalises the vector to unit length (as llama-server's
// /v1/embeddings and Ollama's /api/embed), and a text longer than the
// context fails with ErrContextFull.
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

// WithDimensions keeps the first n elements of the vector (then
// normalises), for models trained to be cut short (Matryoshka), as
// OpenAI's dimensions; n from 1 to the model's width (Info().Embedding).
func WithDimensions(n int) EmbedOption { return func(o *engine.Embedding) { o.Dimensions = n } }

// TextError is the error of one text of several given to Embed or
// EmbedBatch: Index (from 0) of Of says which; it wraps the reason, so
// errors.Is sees ErrContextFull, ErrBadToken … through it.
type TextError = seq.TextError

// Embed returns a vector for each text (an embedding model's, such as
// Qwen3-Embedding's; any model's hidden states can be pooled), in a
// session of their own, made for the call within the memory plan and
// closed after it. Short texts share forward passes, each evaluated as if
// alone (its own positions, attention to its own tokens only), so a list
// of sentences takes a few passes at a batch's speed. Texts are tokenized
// as llama-server does (special tokens parsed, BOS and EOS added when the
// vocabulary asks). An error of one text is a *TextError.
func (m *Model) Embed(ctx context.Context, texts []string, opts ...EmbedOption) (_ [][]float32, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	vs, _, err := m.e.Embed(ctx, texts, engine.Embeddings(opts))
	return vs, err
}

// Embed is Model.Embed of one text in this session, which it resets
// first and leaves empty: the session's context bounds the text.
func (s *Session) Embed(ctx context.Context, text string, opts ...EmbedOption) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	ids, err := s.m.e.Tokenize(text, true)
	if err != nil {
		return nil, err
	}
	v, _, err := s.m.e.EmbedTokens(ctx, s.q, ids, engine.Embeddings(opts))
	return v, err
}

// EmbedTokens is Embed of tokens as given (nothing added).
func (s *Session) EmbedTokens(ctx context.Context, ids []int32, opts ...EmbedOption) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	v, _, err := s.m.e.EmbedTokens(ctx, s.q, ids, engine.Embeddings(opts))
	return v, err
}

// EmbedBatch is EmbedTokens of several token lists, the short ones
// sharing forward passes as in Model.Embed, in this session (reset first,
// left empty; its context bounds each list). An error of one list is a
// *TextError.
func (s *Session) EmbedBatch(ctx context.Context, ids [][]int32, opts ...EmbedOption) (_ [][]float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	vs, _, err := s.m.e.EmbedAll(ctx, s.q, ids, engine.Embeddings(opts))
	return vs, err
}

// Rerank scores how relevant each document is to query with a reranker:
// a file whose pooling_type is rank (a BERT cross-encoder such as
// ms-marco-MiniLM, or Qwen3-Reranker, whose score is the probability of
// "yes"). Each pair is laid out as llama-server lays it out (the file's
// rerank template, or query and document between the vocabulary's
// markers) and the pairs share forward passes as Embed's texts do, in a
// session of their own; higher scores are more relevant. Any other model
// fails with ErrUnsupportedArch; a document's error is a *TextError.
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
