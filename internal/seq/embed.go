package seq

import (
	"context"
	"fmt"

	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

// TextError is the error of one text of several embedded together: Index
// (from 0) says which of Of texts failed, Err why.
type TextError struct {
	Index, Of int
	Err       error
}

func (e *TextError) Error() string {
	if e.Of <= 1 {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (text %d of %d)", e.Err, e.Index, e.Of)
}

func (e *TextError) Unwrap() error { return e.Err }

// Embed evaluates tokens from the start of the sequence (forgetting what
// it held) and pools their hidden states — the output of the final norm —
// into dst, which must have the model's width (Embd): the mean of every
// token's vector, the first's (PoolingCLS) or the last's. The sequence is
// empty afterwards: an embedding leaves no logits to go on from. Tokens
// beyond the context are an error wrapping kv.ErrFull: a context shift
// would drop tokens the pooled vector must see. A model whose attention is
// not causal (model.Config.NonCausal: bert, nomic-bert) sees the whole
// text in one forward pass, so tokens beyond the batch are an error
// wrapping ErrInvalidOption, never a vector of a text cut in pieces.
func (s *Seq) Embed(ctx context.Context, tokens []int32, p model.Pooling, dst []float32) error {
	return s.EmbedAll(ctx, [][]int32{tokens}, p, [][]float32{dst})
}

// EmbedAll is Embed of every token list of texts into the vector of dst
// of the same index. Texts that fit a forward pass together (the batch,
// and the context) share one: each is evaluated as if alone
// (model.(*State).HiddenPacked), so many short texts take a few passes at
// a batch's speed, not one pass each at a short text's. A text too long
// for a pass with others is evaluated alone, in chunks. A text's error is
// a *TextError naming it; nothing is evaluated when any text is refused.
func (s *Seq) EmbedAll(ctx context.Context, texts [][]int32, p model.Pooling, dst [][]float32) error {
	if err := s.enterCtx(ctx); err != nil {
		return err
	}
	defer s.leave()
	switch {
	case p != model.PoolingMean && p != model.PoolingCLS && p != model.PoolingLast:
		return fmt.Errorf("llm: embed: pooling %v (mean, cls or last): %w", p, ErrInvalidOption)
	case len(dst) != len(texts):
		return fmt.Errorf("llm: embed: %d vectors for %d texts: %w", len(dst), len(texts), ErrInvalidOption)
	}
	for i, tokens := range texts {
		if err := s.embeddable(tokens, dst[i]); err != nil {
			return &TextError{Index: i, Of: len(texts), Err: err}
		}
	}
	s.truncate(0)
	defer s.truncate(0)
	// A KV cache that cannot grow within the budget must fail the call,
	// not shift the context: every token counts in the vector.
	shift := s.cfg.Shift
	s.cfg.Shift = false
	defer func() { s.cfg.Shift = shift }()

	E := s.m.Embd
	room := min(s.st.Batch(), s.cfg.Context)
	total := 0
	for _, t := range texts {
		total += len(t)
	}
	rows := make([]float32, min(room, total)*E)
	var packed []int32
	var lens, which []int
	flush := func() error {
		if len(lens) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		start := 0
		if err := s.forward(packed, lens, rows[:len(packed)*E], true, &start); err != nil {
			return err
		}
		s.truncate(0)
		from := 0
		for j, l := range lens {
			pool(dst[which[j]], rows[from*E:(from+l)*E], l, p)
			from += l
		}
		packed, lens, which = packed[:0], lens[:0], which[:0]
		return nil
	}
	for i, tokens := range texts {
		if len(tokens) > room {
			// Only a causal model's text, which chunks can carry: a
			// non-causal one fits a batch (embeddable).
			if err := s.embedLong(ctx, tokens, p, dst[i], rows); err != nil {
				return err
			}
			continue
		}
		if len(packed)+len(tokens) > room {
			if err := flush(); err != nil {
				return err
			}
		}
		packed = append(packed, tokens...)
		lens, which = append(lens, len(tokens)), append(which, i)
	}
	if err := flush(); err != nil {
		return err
	}
	// The model's projection of pooled vectors (EmbeddingGemma's dense
	// layers), when it has one.
	for _, v := range dst {
		if err := s.m.Project(v); err != nil {
			return err
		}
	}
	return nil
}

// embeddable refuses a token list Embed cannot pool into dst.
func (s *Seq) embeddable(tokens []int32, dst []float32) error {
	switch E := s.m.Embd; {
	case len(dst) != E:
		return fmt.Errorf("llm: embed: a vector of %d floats for a model of width %d: %w", len(dst), E, ErrInvalidOption)
	case len(tokens) == 0:
		return fmt.Errorf("llm: embed: no tokens: %w", ErrInvalidOption)
	case len(tokens) > s.cfg.Context:
		return fmt.Errorf("llm: embed: %d tokens do not fit in a context of %d: %w", len(tokens), s.cfg.Context, kv.ErrFull)
	case s.m.PositionLimit() > 0 && len(tokens) > s.m.PositionLimit():
		return fmt.Errorf("llm: embed: %d tokens: %s's learned positions end at %d: %w", len(tokens), s.m.Arch, s.m.PositionLimit(), kv.ErrFull)
	case s.m.NonCausal && len(tokens) > s.st.Batch():
		return fmt.Errorf("llm: embed: %d tokens in a batch of %d: %s attends over the whole text, which must be one forward pass (a batch of at least %d): %w",
			len(tokens), s.st.Batch(), s.m.Arch, len(tokens), ErrInvalidOption)
	}
	if err := s.checkTokens(tokens); err != nil {
		return fmt.Errorf("llm: embed: %w", err)
	}
	return nil
}

// embedLong evaluates one causal model's text in chunks of the batch from
// an empty sequence, pooling as it goes (rows holds a chunk's hidden
// states), and empties the sequence again.
func (s *Seq) embedLong(ctx context.Context, tokens []int32, p model.Pooling, dst, rows []float32) error {
	defer s.truncate(0)
	E := s.m.Embd
	step := len(rows) / E
	sum := make([]float64, E)
	start := 0
	for i := 0; i < len(tokens); i += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := tokens[i:min(len(tokens), i+step)]
		n := len(chunk)
		if err := s.forward(chunk, nil, rows[:n*E], true, &start); err != nil {
			return err
		}
		switch p {
		case model.PoolingMean:
			addRows(sum, rows[:n*E])
		case model.PoolingCLS:
			// Attention is causal: the first token's state is final after
			// the first chunk.
			copy(dst, rows[:E])
			return nil
		case model.PoolingLast:
			copy(dst, rows[(n-1)*E:n*E])
		}
	}
	if p == model.PoolingMean {
		mean(dst, sum, len(tokens))
	}
	return nil
}

// pool pools the n rows of one text's hidden states into dst.
func pool(dst, rows []float32, n int, p model.Pooling) {
	E := len(dst)
	switch p {
	case model.PoolingMean:
		sum := make([]float64, E)
		addRows(sum, rows)
		mean(dst, sum, n)
	case model.PoolingCLS:
		copy(dst, rows[:E])
	case model.PoolingLast:
		copy(dst, rows[(n-1)*E:n*E])
	}
}

// addRows adds rows of len(sum) floats into sum, in float64.
func addRows(sum []float64, rows []float32) {
	E := len(sum)
	for t := 0; t+E <= len(rows); t += E {
		for j, v := range rows[t : t+E] {
			sum[j] += float64(v)
		}
	}
}

// mean writes sum/n into dst.
func mean(dst []float32, sum []float64, n int) {
	for j := range dst {
		dst[j] = float32(sum[j] / float64(n))
	}
}
