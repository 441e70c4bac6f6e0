package tokenizer

import (
	"errors"
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// FromGGUF builds the tokenizer described by a model's tokenizer.ggml.*
// metadata, with llama.cpp's defaults for missing keys. Errors about
// missing or inconsistent metadata wrap both ErrBadVocab and
// gguf.ErrBadFile; a tokenizer type this package does not implement gives
// ErrUnsupported.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := vocabFromMetadata(f)
	if err == nil {
		var t *Tokenizer
		if t, err = New(v); err == nil {
			return t, nil
		}
	}
	if errors.Is(err, ErrBadVocab) {
		return nil, fmt.Errorf("%w: %w", gguf.ErrBadFile, err)
	}
	return nil, err
}
