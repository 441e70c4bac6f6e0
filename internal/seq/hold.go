package seq

import (
	"context"
	"errors"
	"fmt"

	"github.com/lowmem/llm/kv"
)

// Hold makes the sequence hold exactly tokens, the whole prompt from its
// first token: it keeps the longest prefix they share with the tokens held
// now, forgets the rest and evaluates only what follows, so a chat that
// grows turn by turn evaluates each new turn once, and a history changed
// in the middle is evaluated again from the first difference. The last
// token is evaluated even when it is already held, so that Logits
// predict what follows it. It returns how many tokens were reused.
//
// A sliding-window layer keeps only its last positions; when it no longer
// holds what continuing from the shared prefix needs (the cache reports
// that as kv.ErrInvalid), Hold evaluates tokens from the start instead.
// After an error the sequence holds a prefix of tokens.
func (s *Seq) Hold(ctx context.Context, tokens []int32) (reused int, err error) {
	if len(tokens) == 0 {
		return 0, fmt.Errorf("llm: a prompt of no tokens: %w", ErrInvalidOption)
	}
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	return s.hold(ctx, tokens)
}

func (s *Seq) hold(ctx context.Context, tokens []int32) (int, error) {
	if !s.cfg.Shift && len(tokens) > s.cfg.Context {
		return 0, fmt.Errorf("llm: a prompt of %d tokens does not fit in a context of %d: %w", len(tokens), s.cfg.Context, kv.ErrFull)
	}
	n := min(commonPrefix(s.history, tokens), len(tokens)-1)
	s.Truncate(n)
	err := s.eval(ctx, tokens[n:], nil)
	if n > 0 && errors.Is(err, kv.ErrInvalid) && ctx.Err() == nil {
		s.cfg.Logger.Debug("llm: a sliding window lost the shared prefix; evaluating the prompt from the start", "shared", n)
		n = 0
		s.Truncate(0)
		err = s.eval(ctx, tokens, nil)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// commonPrefix is the number of leading tokens a and b share.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
