package seq

import (
	"errors"
	"fmt"
	"time"

	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
)

// makeRoom prepares the sequence for n more tokens: it shifts the context
// when they do not fit (with Config.Shift) and grows the KV cache to hold
// them. *start, the length a failed evaluation rewinds to, is moved with
// the tokens it counts when a shift renumbers them.
func (s *Seq) makeRoom(n int, start *int) error {
	if len(s.history)+n > s.cfg.Context {
		if !s.cfg.Shift {
			return fmt.Errorf("llm: %d tokens after %d do not fit in a context of %d: %w",
				n, len(s.history), s.cfg.Context, kv.ErrFull)
		}
		if err := s.shift(n, s.cfg.Context, start); err != nil {
			return err
		}
	}
	err := s.grow(len(s.history) + n)
	if err != nil && s.cfg.Shift && errors.Is(err, kv.ErrFull) {
		s.cfg.Logger.Warn("llm: KV cache cannot grow within the memory budget; shifting the context instead",
			"cells", s.st.Cells(), "context", s.cfg.Context)
		return s.shift(n, s.st.Cells(), start)
	}
	return err
}

// shift drops tokens after the first Keep so that n more fit in limit
// positions (the context, or the cells the KV cache could grow to within
// the memory budget): half of the droppable ones, or more if n needs it.
// The kept tokens' keys and values are moved and re-rotated, not
// recomputed.
func (s *Seq) shift(n, limit int, start *int) error {
	have := len(s.history)
	keep := min(s.cfg.Keep, have)
	drop := max((have-keep)/2, have+n-limit)
	if drop <= 0 || keep+drop > have {
		why := fmt.Sprintf("a context of %d", limit)
		if limit < s.cfg.Context {
			why = fmt.Sprintf("the %d cells the KV cache can hold within the memory budget (the context is %d)", limit, s.cfg.Context)
		}
		return fmt.Errorf("llm: context shift: %d new tokens do not fit in %s after keeping the first %d tokens (WithContextShift); at most %d would: %w",
			n, why, s.cfg.Keep, max(limit-s.cfg.Keep, 0), kv.ErrFull)
	}
	if err := s.st.Shift(keep, drop); err != nil {
		return fmt.Errorf("llm: context shift: %w", err)
	}
	if s.dft != nil {
		s.dft.shiftLike(s.history, keep, drop)
	}
	s.mu.Lock()
	s.history = append(s.history[:keep], s.history[keep+drop:]...)
	s.at = len(s.history)
	s.shifts++
	s.mu.Unlock()
	switch {
	case *start >= keep+drop:
		*start -= drop
	case *start > keep:
		*start = keep
	}
	s.cfg.Logger.Debug("llm: context shifted", "kept", keep, "dropped", drop, "tokens", len(s.history), "context", limit)
	return nil
}

// grow makes the cache hold need positions, by memplan's schedule
// (NextCells) when the budget allows, or by just enough when only that
// fits. It returns an error wrapping kv.ErrFull when even that would break
// the budget.
func (s *Seq) grow(need int) error {
	c := s.st.Cache()
	cur := c.Cells()
	if need <= cur {
		return nil
	}
	if need > c.MaxCells() {
		return fmt.Errorf("llm: %d tokens do not fit in a context of %d: %w", need, c.MaxCells(), kv.ErrFull)
	}
	// What the budget leaves without moving weights to disk, less the old
	// layer a resize holds meanwhile.
	_, holds := c.GrowBytes(cur + 1)
	target := memplan.GrowTarget(c.Config(), cur, need, s.budget.Room()-holds)
	added, transient := c.GrowBytes(target)
	if !s.budget.Reserve(added + transient) {
		target = need
		added, transient = c.GrowBytes(target)
		if !s.budget.Reserve(added + transient) {
			if s.budget.Short() {
				return fmt.Errorf("llm: not growing the KV cache from %d to %d cells while memory is short: %w", cur, need, kv.ErrFull)
			}
			return fmt.Errorf("llm: growing the KV cache from %d to %d cells needs %s more, beyond the memory budget (%s for KV caches, %s in use): %w",
				cur, need, memplan.FormatBytes(added+transient), memplan.FormatBytes(s.budget.Limit()), memplan.FormatBytes(s.budget.InUse()), kv.ErrFull)
		}
	}
	start := time.Now()
	s.mu.Lock() // Stats reads the cache's size
	err := s.st.Grow(target)
	if err == nil {
		s.bytes += added
		s.grows++
	}
	s.mu.Unlock()
	s.budget.Release(transient)
	if err != nil {
		s.budget.Release(added)
		return fmt.Errorf("llm: growing the KV cache: %w", err)
	}
	s.cfg.Logger.Debug("llm: KV cache grew", "from", cur, "to", target, "bytes", c.Bytes(),
		"context", c.MaxCells(), "took", time.Since(start))
	return nil
}
