package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

// Embedding is how Embed makes a vector; llm's EmbedOptions set it. The
// zero value pools as the file says (the last token's state when it says
// nothing) and normalises to unit length, as llama-server's
// /v1/embeddings and Ollama do.
type Embedding struct {
	Pooling    model.Pooling // PoolingNone: the file's
	Raw        bool          // leave the vector as pooled, not normalised
	Truncate   bool          // keep the tokens that fit the context instead of failing
	Dimensions int           // keep the first Dimensions (then normalise); 0: all
}

// Embeddings applies opts (llm's EmbedOptions) to the zero Embedding.
func Embeddings[Option ~func(*Embedding)](opts []Option) Embedding {
	var o Embedding
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// pooling is the pooling o asks for, or the file's; when the file names
// none, PoolingLast for a generative model (the last token's state is the
// one that has seen the whole text, which is what Ollama takes) and
// PoolingMean for an encoder (every state has seen the whole text; the
// mean is what most BERT embedders are trained with).
func (e *Engine) pooling(o Embedding) (model.Pooling, error) {
	p := o.Pooling
	if p == model.PoolingNone {
		p = e.Model.Pooling
	}
	switch p {
	case model.PoolingNone:
		if e.Model.NonCausal {
			return model.PoolingMean, nil
		}
		return model.PoolingLast, nil
	case model.PoolingRank:
		return p, fmt.Errorf("llm: embed: the file's pooling is rank: a reranker scores pairs (Rerank) rather than embedding texts: %w", model.ErrUnsupportedArch)
	case model.PoolingMean, model.PoolingCLS, model.PoolingLast:
		return p, nil
	}
	return p, fmt.Errorf("llm: embed: pooling %v (mean, cls or last): %w", p, seq.ErrInvalidOption)
}

// EmbedTokens is the embedding of ids, evaluated in q from its start (q is
// empty afterwards, seq.(*Seq).Embed), and the number of tokens evaluated.
// ids longer than q's context fail with kv.ErrFull, or with o.Truncate keep
// the first ones that fit — and the token the tokenizer appends (EOS, a
// WordPiece [SEP]), when it does, since the model is trained on texts
// that end with it (last-token pooling on the EOS).
func (e *Engine) EmbedTokens(ctx context.Context, q *seq.Seq, ids []int32, o Embedding) ([]float32, int, error) {
	vs, n, err := e.EmbedAll(ctx, q, [][]int32{ids}, o)
	if err != nil {
		return nil, 0, err
	}
	return vs[0], n, nil
}

// EmbedText is EmbedTokens of text tokenized as llama-server does for
// an embedding (special tokens parsed, BOS/EOS as the vocabulary asks).
func (e *Engine) EmbedText(ctx context.Context, q *seq.Seq, text string, o Embedding) ([]float32, error) {
	ids, err := e.Tokenize(text, true)
	if err != nil {
		return nil, err
	}
	v, _, err := e.EmbedTokens(ctx, q, ids, o)
	return v, err
}

// EmbedAll is EmbedTokens of every token list of ids, the short ones
// sharing forward passes (seq.(*Seq).EmbedAll), and the number of tokens
// evaluated in all. A text's error is a *seq.TextError naming it.
func (e *Engine) EmbedAll(ctx context.Context, q *seq.Seq, ids [][]int32, o Embedding) ([][]float32, int, error) {
	if len(ids) == 0 {
		return nil, 0, fmt.Errorf("llm: embed: no texts: %w", seq.ErrInvalidOption)
	}
	p, err := e.pooling(o)
	if err != nil {
		return nil, 0, err
	}
	E := e.Model.Embd
	if o.Dimensions < 0 || o.Dimensions > E {
		return nil, 0, fmt.Errorf("llm: embed: %d dimensions of a model of width %d: %w", o.Dimensions, E, seq.ErrInvalidOption)
	}
	n := q.Context()
	if lim := e.Model.PositionLimit(); lim > 0 {
		n = min(n, lim)
	}
	cut := make([][]int32, len(ids))
	tokens := 0
	for i, t := range ids {
		if cut[i], err = e.fit(t, n, o.Truncate); err != nil {
			return nil, 0, &seq.TextError{Index: i, Of: len(ids), Err: err}
		}
		tokens += len(cut[i])
	}
	vs := make([][]float32, len(ids))
	all := make([]float32, len(ids)*E)
	for i := range vs {
		vs[i] = all[i*E : (i+1)*E : (i+1)*E]
	}
	if err := q.EmbedAll(ctx, cut, p, vs); err != nil {
		return nil, 0, err
	}
	for i, v := range vs {
		if o.Dimensions > 0 {
			v = v[:o.Dimensions:o.Dimensions]
			vs[i] = v
		}
		if !o.Raw {
			if err := normalize(v); err != nil {
				return nil, 0, &seq.TextError{Index: i, Of: len(ids), Err: err}
			}
		}
	}
	return vs, tokens, nil
}

// fit returns ids if they fit n positions, else with truncate the first
// ones that do, keeping the end token the tokenizer appends.
func (e *Engine) fit(ids []int32, n int, truncate bool) ([]int32, error) {
	if len(ids) <= n {
		return ids, nil
	}
	if !truncate {
		return nil, fmt.Errorf("llm: embed: %d tokens do not fit in a context of %d (truncate to embed the first %d): %w", len(ids), n, n, kv.ErrFull)
	}
	// The caller's slice is left as it is: a cut ending in the end token
	// is a new one.
	if end := e.Tok.End(); end >= 0 && ids[len(ids)-1] == end {
		return append(ids[:n-1:n-1], end), nil
	}
	return ids[:n], nil
}

// Embed is EmbedAll of each text, tokenized as llama-server and Ollama do
// (special tokens parsed; BOS and EOS added when the vocabulary asks), in
// a sequence of its own made and closed within the call, whose context
// holds the longest text and, when they fit the model's context, as many
// texts as a batch does; tokens, the number evaluated in all.
func (e *Engine) Embed(ctx context.Context, texts []string, o Embedding) (vs [][]float32, tokens int, err error) {
	if len(texts) == 0 {
		return nil, 0, fmt.Errorf("llm: embed: no texts: %w", seq.ErrInvalidOption)
	}
	if _, err := e.pooling(o); err != nil {
		return nil, 0, err
	}
	ids := make([][]int32, len(texts))
	longest, total := 0, 0
	for i, t := range texts {
		if ids[i], err = e.Tokenize(t, true); err != nil {
			return nil, 0, &seq.TextError{Index: i, Of: len(texts), Err: err}
		}
		if len(ids[i]) == 0 {
			return nil, 0, &seq.TextError{Index: i, Of: len(texts), Err: fmt.Errorf("llm: embed: a text with no tokens: %w", seq.ErrInvalidOption)}
		}
		longest = max(longest, len(ids[i]))
		total += len(ids[i])
	}
	return e.embedOwn(ctx, ids, longest, total, o)
}

// embedOwn is EmbedAll in a sequence made for the call, whose context
// holds the longest token list and, when they fit the model's context,
// as many tokens as a batch does.
func (e *Engine) embedOwn(ctx context.Context, ids [][]int32, longest, total int, o Embedding) ([][]float32, int, error) {
	q, err := e.NewSeq(func(s *Settings) {
		s.Context = min(max(longest, min(total, s.Batch)), s.Context)
		s.Shift, s.KVPreallocate = false, false
		s.Draft = nil // it generates nothing
	})
	if err != nil {
		return nil, 0, err
	}
	defer q.Close()
	return e.EmbedAll(ctx, q, ids, o)
}

// normalize scales v to unit length (Euclidean). A vector holding NaN or
// ±Inf has no direction: that is the model's weights overflowing.
func normalize(v []float32) error {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return fmt.Errorf("llm: embed: the vector holds NaN or Inf (the model's activations overflow): %w", model.ErrBadModel)
	}
	s := 1 / max(math.Sqrt(ss), 1e-12)
	for i, x := range v {
		v[i] = float32(float64(x) * s)
	}
	return nil
}
