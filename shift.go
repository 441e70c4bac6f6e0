package llm

import (
	"errors"
	"fmt"
)

// WithContextShift lets sessions continue past a full context instead of
// failing with ErrContextFull: when the next tokens do not fit, the session
// keeps its first keep tokens (e.g. a system prompt), drops the older half
// of the rest, and goes on, as llama.cpp's context shift does. The kept
// tokens' cached keys and values are reused, moved and re-rotated to their
// new positions rather than recomputed, so later tokens still carry what
// they learnt from the dropped ones. Sessions also shift, rather than fail,
// when the memory budget stops their KV cache from growing.
//
// Sliding-window layers (Gemma 2) keep their ring of recent tokens and
// renumber it, so their window goes on seeing the latest tokens.
func WithContextShift(keep int) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *settings) {
		if keep < 0 {
			s.fail("context shift keep %d must not be negative", keep)
			return
		}
		s.shift, s.shiftKeep = true, keep
	})
}

// makeRoom prepares the session for n more tokens: it shifts the context
// when they do not fit (with WithContextShift) and grows the KV cache to
// hold them. *start, the history length a failed evaluation rewinds to, is
// moved with the tokens it counts when a shift renumbers them.
func (s *Session) makeRoom(n int, start *int) error {
	if len(s.history)+n > s.set.context {
		if !s.set.shift {
			return fmt.Errorf("llm: %d tokens after %d do not fit in a context of %d: %w",
				n, len(s.history), s.set.context, ErrContextFull)
		}
		if err := s.shift(n, s.set.context, start); err != nil {
			return err
		}
	}
	err := s.growKV(len(s.history) + n)
	if err != nil && s.set.shift && errors.Is(err, ErrContextFull) {
		s.m.set.logger.Warn("llm: KV cache cannot grow within the memory budget; shifting the context instead",
			"cells", s.st.Cells(), "context", s.set.context)
		return s.shift(n, s.st.Cells(), start)
	}
	return err
}

// shift drops tokens after the first keep so that n more fit in limit
// positions: half of the droppable ones, or more if n needs it.
func (s *Session) shift(n, limit int, start *int) error {
	have := len(s.history)
	keep := min(s.set.shiftKeep, have)
	drop := max((have-keep)/2, have+n-limit)
	if drop <= 0 || keep+drop > have {
		return fmt.Errorf("llm: %d tokens do not fit in a context of %d even after dropping all but the first %d of %d: %w",
			n, limit, keep, have, ErrContextFull)
	}
	if err := s.st.Shift(keep, drop); err != nil {
		return fmt.Errorf("llm: context shift: %w", err)
	}
	s.history = append(s.history[:keep], s.history[keep+drop:]...)
	switch {
	case *start >= keep+drop:
		*start -= drop
	case *start > keep:
		*start = keep
	}
	s.kv.shifts++
	s.m.set.logger.Debug("llm: context shifted", "kept", keep, "dropped", drop, "tokens", len(s.history), "context", limit)
	return nil
}
