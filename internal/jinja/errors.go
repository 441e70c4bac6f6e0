package jinja

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error from this package wraps one of them.
var (
	// ErrSyntax: the template source cannot be parsed.
	ErrSyntax = errors.New("jinja: syntax error")
	// ErrRuntime: evaluation failed (wrong types, unknown filter, …).
	ErrRuntime = errors.New("jinja: render error")
	// ErrRaised: the template called raise_exception.
	ErrRaised = errors.New("jinja: template raised an exception")
	// ErrLimit: the render went past one of its Limits.
	ErrLimit = errors.New("jinja: limit exceeded")
)

// lineCol turns a byte offset into "line L, column C" for messages.
func lineCol(src string, pos int) string {
	line, col := 1, 1
	for i := 0; i < pos && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}

type posError struct {
	sentinel error
	pos      int
	msg      string
}

func (e *posError) Error() string { return e.msg }
func (e *posError) Unwrap() error { return e.sentinel }

func syntaxErr(src string, pos int, format string, args ...any) error {
	return &posError{ErrSyntax, pos, fmt.Sprintf("jinja: syntax error at %s: %s", lineCol(src, pos), fmt.Sprintf(format, args...))}
}
