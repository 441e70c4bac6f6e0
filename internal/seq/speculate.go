package seq

import (
	"context"
	"errors"

	"github.com/lowmem/llm/kv"
)

// drafting is the most tokens g's speculation drafts in a pass on this
// sequence: 0 when it is off, when the arena holds logits for fewer than
// two tokens (a small batch: model.State.RowsFit), or for a model whose
// state cannot be taken back to any position (conv and recurrent layers:
// model.State.TruncatesExactly), where every refused draft would cost a
// pass again over the tokens kept since the last checkpoint.
func (s *Seq) drafting(g Generation) int {
	if g.Speculate.Draft == 0 || !s.st.TruncatesExactly() {
		return 0
	}
	return max(0, min(g.Speculate.Draft, s.fit-1))
}

// step evaluates the token id just yielded: with the tokens prompt lookup
// drafts after it when there are at least g.Speculate.MinDraft of them (at
// most drafts), in one pass whose every row of logits it returns (valid
// until the next pass; s.logits holds the first), else alone. The drafts
// are then the last t.spec tokens of the history.
func (s *Seq) step(ctx context.Context, id int32, drafts int, g Generation, t *tally) ([]float32, error) {
	k := min(drafts, s.cfg.Context-len(s.history)-1, g.MaxTokens-t.yielded-1)
	if s.cfg.Shift {
		k = min(k, s.cfg.Context-s.cfg.Keep-1) // so that a shift can make room
	}
	if k >= max(g.Speculate.MinDraft, 1) {
		// The history has room for id (k ≥ 1): appending it there does
		// not allocate, nor change the history's length.
		k = lookup(append(s.history, id), g.Speculate.ngram(), s.draft[1:1+k])
		if k >= max(g.Speculate.MinDraft, 1) {
			s.draft[0] = id
			rows, err := s.evalRows(ctx, s.draft[:k+1])
			if err == nil {
				copy(s.logits, rows[:len(s.logits)])
				t.spec = k
				t.drafted += k
				return rows, nil
			}
			if !errors.Is(err, kv.ErrFull) {
				return nil, err
			}
			// The cache could not grow by the drafts: the token alone
			// may still fit.
		}
	}
	s.one[0] = id
	return nil, s.eval(ctx, s.one[:], nil)
}

// evalRows evaluates tokens, at most a batch that fits the context, in one
// pass and returns every token's logits (model.State.ForwardRows); a
// failed or cancelled pass leaves the sequence as it was.
func (s *Seq) evalRows(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := len(s.history)
	if err := s.forward(tokens, nil, nil, false, &start); err != nil {
		s.truncate(start)
		return nil, err
	}
	return s.rows, nil
}
