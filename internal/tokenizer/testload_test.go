package tokenizer

import (
	"os"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// loadTokenizer reads the metadata of a GGUF file and builds its tokenizer.
func loadTokenizer(t testing.TB, path string) (*Tokenizer, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Read(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return FromGGUF(g)
}
