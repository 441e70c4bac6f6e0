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
	if !s.st.TruncatesExactly() {
		return 0
	}
	most, _ := s.draftSizes(g)
	return max(0, min(most, s.fit-1))
}

// byModel reports whether g's drafts come from the draft model: the
// sequence has one and g.Drafting is on. It takes the place of prompt
// lookup then.
func (s *Seq) byModel(g Generation) bool { return s.dft != nil && g.Drafting.Draft > 0 }

// draftSizes are the most tokens a step drafts and the fewest worth a
// verification pass (at least 1), by the draft model or prompt lookup.
func (s *Seq) draftSizes(g Generation) (most, least int) {
	if s.byModel(g) {
		return g.Drafting.Draft, max(g.Drafting.MinDraft, 1)
	}
	return g.Speculate.Draft, max(g.Speculate.MinDraft, 1)
}

// propose fills dst with the drafts after the history and id, by the
// draft model (cut before a token outside this model's vocabulary) or by
// prompt lookup, and returns how many.
func (s *Seq) propose(ctx context.Context, id int32, g Generation, dst []int32) int {
	if !s.byModel(g) {
		// The history has room for id (len(dst) ≥ 1): appending it there
		// does not allocate, nor change the history's length.
		return lookup(append(s.history, id), g.Speculate.ngram(), dst)
	}
	k := s.dft.follow(ctx, s.history, id, g.Drafting.PMin, dst)
	for i, t := range dst[:k] {
		if int(t) >= s.m.Vocab {
			return i
		}
	}
	return k
}

// step evaluates the token id just yielded: with the tokens drafted after
// it (propose) when there are at least the fewest worth it (draftSizes; at
// most drafts), in one pass whose every row of logits it returns (valid
// until the next pass; s.logits holds the first), else alone. The drafts
// are then the last t.spec tokens of the history.
func (s *Seq) step(ctx context.Context, id int32, drafts int, g Generation, t *tally) ([]float32, error) {
	k := min(drafts, s.cfg.Context-len(s.history)-1, g.MaxTokens-t.yielded-1)
	if s.cfg.Shift {
		k = min(k, s.cfg.Context-s.cfg.Keep-1) // so that a shift can make room
	}
	if _, least := s.draftSizes(g); k >= least {
		k = s.propose(ctx, id, g, s.draft[1:1+k])
		if k >= least {
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
