package tokenizer

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// loadTokenizer reads the metadata of a GGUF file and builds its tokenizer.
func loadTokenizer(t testing.TB, path string) (*Tokenizer, error) {
	t.Helper()
	return FromGGUF(testutil.ReadHeader(t, path))
}
