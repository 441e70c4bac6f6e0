package llm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// Every architecture loads, plans and decodes through the public API, and
// a decode step of the mixture-of-experts model allocates nothing.
func TestNewArchitecturesDecode(t *testing.T) {
	dir := t.TempDir()
	for _, spec := range testutil.TinyDecoders() {
		t.Run(spec.Variant(), func(t *testing.T) {
			path := filepath.Join(dir, spec.Arch+".gguf")
			if err := testutil.WriteModelFile(path, spec); err != nil {
				t.Fatal(err)
			}
			if _, err := llm.Plan(path, llm.WithContextSize(256)); err != nil {
				t.Fatal(err)
			}
			m, err := llm.Load(path, llm.WithThreads(2), llm.WithContextSize(256))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got := m.Info().Architecture; got != spec.Arch {
				t.Fatalf("architecture %q, want %q", got, spec.Arch)
			}
			s, err := m.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			ids, _ := m.Tokenize("Once upon a time there was a small machine")
			if _, err := s.Eval(ctx, ids); err != nil {
				t.Fatal(err)
			}
			if raceEnabled {
				return // allocation counts are not meaningful under the race detector
			}
			checkDecodeAllocs(t, s, 30, "decode step")
		})
	}
}
