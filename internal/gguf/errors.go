package gguf

import "errors"

// ErrBadFile is wrapped by every error Read returns for a file that is not
// a valid GGUF file: bad magic, unsupported version, truncation, counts or
// lengths the file cannot hold, bad tensor shapes, types or offsets,
// tensors whose data overlaps. Test for it with errors.Is. The root package
// re-exports it as llm.ErrBadModel; the two are the same value.
var ErrBadFile = errors.New("malformed GGUF file")
