package model

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// translateLlama makes Ollama's llama files of models whose heads do not
// fill the embedding (head_dim × head_count ≠ embedding_length: Mistral
// Nemo, Ministral 8B) read as llama.cpp's. Ollama's converter writes
// rope.dimension_count = embedding_length / head_count whatever the
// head size, and the head size as attention.head_dim (a key llama.cpp's
// converter never writes) beside key_length; llama.cpp's converter writes
// the head size as rope.dimension_count, the heads being rotated whole.
// A llama file without attention.head_dim is left alone.
func translateLlama(f *gguf.File) error {
	raw, ok := f.Get("llama.attention.head_dim")
	if !ok {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("model: Ollama llama file: "+format+": %w", append(args, ErrBadModel)...)
	}
	head, ok := f.Uint("llama.attention.head_dim")
	if !ok || head == 0 {
		return bad("llama.attention.head_dim is %s, want a head size", describe(raw))
	}
	embd, _ := f.Uint("llama.embedding_length")
	heads, _ := f.Uint("llama.attention.head_count")
	rot, ok := f.Uint("llama.rope.dimension_count")
	if !ok || heads == 0 || rot != embd/heads || rot == head {
		return nil
	}
	if k, ok := f.Uint("llama.attention.key_length"); ok && k != head {
		return bad("llama.attention.key_length = %d, but llama.attention.head_dim = %d", k, head)
	}
	f.Set("llama.rope.dimension_count", uint32(head))
	return nil
}
