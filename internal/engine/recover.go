package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"unsafe"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/model"
)

// ErrInternal is the error a panic inside the library becomes at the API
// (Recovered): a bug, reported as an error instead of taking the process
// down. llm re-exports it.
var ErrInternal = errors.New("llm: internal error")

// span is the address range of a mapped file.
type span struct{ base, end uintptr }

func spanOf(data []byte) span {
	if len(data) == 0 {
		return span{}
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	page := uintptr(os.Getpagesize())
	return span{base, (base + uintptr(len(data)) + page - 1) &^ (page - 1)}
}

// Every exported function and method of llm defers Catch (those that
// return an error) or Absorb (the others, which then return zero values),
// so that no panic crosses the API. The call runs with
// debug.SetPanicOnFault (fault is the mode before it, restored here): a
// fault on the model's mapping, raised when the file was truncated under
// it (SIGBUS), becomes an error wrapping model.ErrBadModel that says the
// file changed; any other panic is a bug and becomes an error wrapping
// ErrInternal, with the stack where it happened (a pool worker's, which
// ops.Panic carries), and is logged. A method of a nil model or session
// calls them on a nil *Engine: its error wraps seq.ErrClosed.
func (e *Engine) Catch(err *error, fault bool) {
	debug.SetPanicOnFault(fault)
	if r := recover(); r != nil {
		*err = e.Recovered(r)
	}
}

// Absorb is Catch for a method without an error to return.
func (e *Engine) Absorb() {
	if r := recover(); r != nil {
		e.Recovered(r)
	}
}

// Catch is Engine.Catch before there is an engine (Load, Plan): any
// memory fault is taken to be on the model file, the only mapping.
func Catch(err *error, fault bool) {
	debug.SetPanicOnFault(fault)
	if r := recover(); r != nil {
		*err = recovered(r, span{0, ^uintptr(0)}, slog.Default())
	}
}

// Recovered is the error r, a value recovered from a panic, becomes (see
// Catch).
func (e *Engine) Recovered(r any) error {
	if e == nil {
		return fmt.Errorf("llm: a method called on a nil model or session: %w", seq.ErrClosed)
	}
	return recovered(r, e.span, e.log)
}

func recovered(r any, sp span, log *slog.Logger) error {
	p := ops.Caught(r)
	if f, ok := p.Value.(interface{ Addr() uintptr }); ok && f.Addr() >= sp.base && f.Addr() < sp.end {
		return fmt.Errorf("llm: memory fault reading the model file at %#x: the file was truncated or changed on disk while loaded (%v): %w",
			f.Addr(), p.Value, model.ErrBadModel)
	}
	err := fmt.Errorf("llm: internal error (a bug in github.com/lowmem/llm; please report it with this message): %v\n%s: %w",
		p.Value, p.Stack, ErrInternal)
	log.Error("llm: recovered from a panic", "err", err)
	return err
}

// Stream runs gen for an iterator over (T, error): the values gen emits go
// to yield, then gen's error, if any, unless the caller's loop has
// stopped. A panic in gen becomes that error (as Catch); a panic in the
// caller's loop body is the caller's and goes on up untouched.
func Stream[T any](e *Engine, yield func(T, error) bool, gen func(emit func(T) bool) error) {
	open, inBody := true, false
	err := func() (err error) {
		defer func(fault bool) {
			debug.SetPanicOnFault(fault)
			if !inBody {
				if r := recover(); r != nil {
					err = e.Recovered(r)
				}
			}
		}(debug.SetPanicOnFault(true))
		return gen(func(v T) bool {
			if open {
				inBody = true
				open = yield(v, nil)
				inBody = false
			}
			return open
		})
	}()
	if err != nil && open {
		var zero T
		yield(zero, err)
	}
}
