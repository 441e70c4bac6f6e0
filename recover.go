package llm

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
)

// Every exported function and method defers catch (those that return an
// error) or absorb (the others, which then return zero values), so that no
// panic crosses the API: a fault reading the mapped model file (the call
// runs with SetPanicOnFault) becomes an error wrapping ErrBadModel, any
// other panic, a bug, one wrapping ErrInternal, logged. fault is the
// goroutine's fault mode before the call, restored here.
func (m *Model) catch(err *error, fault bool) {
	debug.SetPanicOnFault(fault)
	if r := recover(); r != nil {
		*err = m.recovered(r)
	}
}

func (m *Model) absorb() {
	if r := recover(); r != nil {
		m.recovered(r)
	}
}

func (m *Model) recovered(r any) error {
	log, err := slog.Default(), engine.Recovered(r)
	if m != nil && m.e != nil {
		log, err = m.set.logger, m.e.Recovered(r)
	}
	if errors.Is(err, ErrInternal) {
		log.Error("llm: recovered from a panic", "err", err)
	}
	return err
}

// model is the session's model, nil for a nil session.
func (s *Session) model() *Model {
	if s == nil {
		return nil
	}
	return s.m
}

func (s *Session) catch(err *error, fault bool) {
	debug.SetPanicOnFault(fault)
	if r := recover(); r != nil {
		*err = s.model().recovered(r)
	}
}

func (s *Session) absorb() {
	if r := recover(); r != nil {
		s.model().recovered(r)
	}
}

// stream is the body of the iterators (Stream, Complete, ChatStream): it
// runs gen, handing the tokens gen emits to yield and then gen's error, if
// any, unless the caller's loop has stopped. A panic in gen becomes that
// error; a panic in the caller's loop body is the caller's and goes on up.
func (s *Session) stream(yield func(Token, error) bool, gen func(emit func(Token) bool) error) {
	open, inBody := true, false
	err := func() (err error) {
		defer func(fault bool) {
			debug.SetPanicOnFault(fault)
			if !inBody {
				if r := recover(); r != nil {
					err = s.model().recovered(r)
				}
			}
		}(debug.SetPanicOnFault(true))
		return gen(func(t Token) bool {
			if open {
				inBody = true
				open = yield(t, nil)
				inBody = false
			}
			return open
		})
	}()
	if err != nil && open {
		yield(Token{}, err)
	}
}
