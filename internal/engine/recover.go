package engine

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/lowmem/llm/internal/ops"
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

// Recovered turns r, a value recovered from a panic under the API, into
// the error the API returns. A memory fault on the model's mapping (the
// runtime raises one as a panic when debug.SetPanicOnFault is on; a
// shared mapping faults with SIGBUS once the file is truncated under it)
// wraps model.ErrBadModel and says the file changed; anything else is a
// bug and wraps ErrInternal, with the stack where it happened (a pool
// worker's, for a panic in a worker: ops.Panic carries it).
func (e *Engine) Recovered(r any) error { return recovered(r, e.span) }

// Recovered is Engine.Recovered before there is an engine: any memory
// fault is taken to be on the model file, the only mapping there is.
func Recovered(r any) error { return recovered(r, span{0, ^uintptr(0)}) }

func recovered(r any, sp span) error {
	p := ops.Caught(r)
	if f, ok := p.Value.(interface{ Addr() uintptr }); ok && f.Addr() >= sp.base && f.Addr() < sp.end {
		return fmt.Errorf("llm: memory fault reading the model file at %#x: the file was truncated or changed on disk while loaded (%v): %w",
			f.Addr(), p.Value, model.ErrBadModel)
	}
	return fmt.Errorf("llm: internal error (a bug in github.com/lowmem/llm; please report it with this message): %v\n%s: %w",
		p.Value, p.Stack, ErrInternal)
}
