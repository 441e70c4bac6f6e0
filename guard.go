package llm

import (
	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
)

var (
	// ErrClosed: the model or session was closed (or is nil).
	ErrClosed = seq.ErrClosed
	// ErrInternal: a bug in this library, a panic (in any thread) caught at
	// the API with its stack; the process keeps running. Please report it.
	ErrInternal = engine.ErrInternal
)

// Every exported function and method defers engine.Catch (or Absorb, when
// it returns no error), so that no panic crosses the API; see there. A
// nil model or session has a nil engine, which makes them report ErrClosed.

func (m *Model) engine() *engine.Engine {
	if m == nil {
		return nil
	}
	return m.e
}

func (s *Session) engine() *engine.Engine {
	if s == nil {
		return nil
	}
	return s.m.engine()
}

func (s *Session) seq() *seq.Seq {
	if s == nil {
		return nil
	}
	return s.q
}
