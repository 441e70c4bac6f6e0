package seq

import (
	"context"
	"fmt"

	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

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
	if err := s.enterCtx(ctx); err != nil {
		return err
	}
	defer s.leave()
	E := s.m.Embd
	switch {
	case p != model.PoolingMean && p != model.PoolingCLS && p != model.PoolingLast:
		return fmt.Errorf("llm: embed: pooling %v (mean, cls or last): %w", p, ErrInvalidOption)
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
	s.truncate(0)
	defer s.truncate(0)
	// A KV cache that cannot grow within the budget must fail the call,
	// not shift the context: every token counts in the vector.
	shift := s.cfg.Shift
	s.cfg.Shift = false
	defer func() { s.cfg.Shift = shift }()
	step := s.st.Batch()
	rows := make([]float32, min(step, len(tokens))*E)
	sum := make([]float64, E)
	start := 0
	for i := 0; i < len(tokens); i += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := tokens[i:min(len(tokens), i+step)]
		if err := s.forward(chunk, rows[:len(chunk)*E], true, &start); err != nil {
			return err
		}
		switch {
		case p == model.PoolingMean:
			for t := range chunk {
				for j, v := range rows[t*E : (t+1)*E] {
					sum[j] += float64(v)
				}
			}
		case p == model.PoolingCLS:
			// Attention is causal, or the chunk is the whole text: the
			// first token's state is final after the first chunk.
			copy(dst, rows[:E])
			return nil
		case p == model.PoolingLast && i+len(chunk) == len(tokens):
			copy(dst, rows[(len(chunk)-1)*E:])
		}
	}
	if p == model.PoolingMean {
		for j := range dst {
			dst[j] = float32(sum[j] / float64(len(tokens)))
		}
	}
	return nil
}
