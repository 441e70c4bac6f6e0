package seq

import (
	"fmt"
	"io"

	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

// Save writes the sequence to w as a snapshot of model id: its tokens, the
// logits after the last one, the KV cache rows in use and the conv state
// with its checkpoints (evaluating again first what a rewind left to
// evaluate).
func (s *Seq) Save(w io.Writer, id snapshot.Model) error {
	if err := s.enterIO(w, "save to a nil writer"); err != nil {
		return err
	}
	defer s.leave()
	if s.at < len(s.history) {
		// The conv state saved must follow every token saved.
		if err := s.acquire(); err != nil {
			return err
		}
		err := s.replay()
		s.drop()
		if err != nil {
			return err
		}
	}
	return snapshot.Write(w, id, s.cfg.KVType, s.history, s.logits, s.st.Cache(), s.st.Conv())
}

// Restore replaces the sequence's tokens, logits and KV cache with a
// snapshot that Save wrote for model id, reading exactly its bytes. The new
// cache is sized as growth would have left it, built and filled before the
// old one is dropped, and counted in the budget (memplan.ErrOutOfBudget
// when it does not fit beside the old one). After an error the sequence is
// unchanged.
func (s *Seq) Restore(r io.Reader, id snapshot.Model) error {
	if err := s.enterIO(r, "restore from a nil reader"); err != nil {
		return err
	}
	defer s.leave()
	var reserved int64
	newCache := func(n int) (*kv.Cache, error) {
		kc := s.st.Cache().Config()
		kc.Initial = s.cfg.Context
		if !s.cfg.Preallocate {
			kc.Initial = memplan.NextCells(memplan.InitialCells(s.cfg.Context, false), n, s.cfg.Context,
				memplan.StepCells(kc, memplan.StepBytes))
		}
		nb := kv.Bytes(kc)
		if !s.budget.Reserve(nb) {
			return nil, fmt.Errorf("llm: restore: a KV cache of %d cells (%s) does not fit the memory budget beside the current one: %w",
				kc.Initial, memplan.FormatBytes(nb), memplan.ErrOutOfBudget)
		}
		reserved = nb
		c, err := s.st.NewCache(kc.Initial)
		if err != nil {
			return nil, fmt.Errorf("llm: restore: %w", err)
		}
		if s.cfg.Preallocate {
			c.Touch()
		}
		return c, nil
	}
	want := snapshot.Expect{Model: id, KVType: s.cfg.KVType, MaxTokens: s.cfg.Context, ConvFloats: model.ConvStateFloats(&s.m.Config)}
	tokens, logits, c, conv, err := snapshot.Read(r, want, newCache)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		if err = s.st.Restore(c, conv); err != nil {
			err = fmt.Errorf("llm: restore: %w: %w", err, snapshot.ErrBadState)
		}
	}
	if err != nil {
		s.budget.Release(reserved)
		return err
	}
	s.budget.Release(s.bytes)
	s.bytes = reserved
	s.history = append(s.history[:0], tokens...)
	s.at = len(s.history)
	copy(s.logits, logits)
	return nil
}
