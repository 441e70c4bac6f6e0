package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
)

// Every exported function and method defers catch (those that return an
// error) or absorb (the others, which then return zero values), so that no
// panic crosses the API: a fault reading the mapped model file (the call
// runs with SetPanicOnFault) becomes an error wrapping ErrBadModel, any
// other panic, a bug, one wrapping ErrInternal, logged; a method called on
// a nil *Model or *Session returns ErrClosed. fault is the goroutine's
// fault mode before the call, restored here.
func catch(err *error, fault bool) {
	debug.SetPanicOnFault(fault)
	if r := recover(); r != nil {
		*err = (&Model{set: settings{logger: slog.Default()}}).recovered(r)
	}
}

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
	if m == nil {
		return fmt.Errorf("llm: a method called on a nil *Model: %w", ErrClosed)
	}
	err := engine.Recovered(r)
	if m.e != nil {
		err = m.e.Recovered(r)
	}
	if errors.Is(err, ErrInternal) {
		m.set.logger.Error("llm: recovered from a panic", "err", err)
	}
	return err
}

func (s *Session) catch(err *error, fault bool) {
	debug.SetPanicOnFault(fault)
	if r := recover(); r != nil {
		*err = s.recovered(r)
	}
}

func (s *Session) absorb() {
	if r := recover(); r != nil {
		s.recovered(r)
	}
}

func (s *Session) recovered(r any) error {
	if s == nil {
		return fmt.Errorf("llm: a method called on a nil *Session: %w", ErrClosed)
	}
	return s.m.recovered(r)
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
					err = s.recovered(r)
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
