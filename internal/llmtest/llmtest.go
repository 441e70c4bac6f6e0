// Package llmtest holds helpers for tests that drive the public llm API
// from outside the root package (the server's tests, the nested openaitest
// module, the example commands' tests), so that what they set up and
// compare against is done one way.
//
// Example: what a fresh session answers, to compare with an HTTP reply.
//
//	want, usage := llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0))
package llmtest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm"
)

// ChatReply is what Session.Chat answers on a fresh session of m, as JSON
// carries it: a random-weight model may emit invalid UTF-8, which a server
// reply turns into U+FFFD, so comparing raw text would fail on the encoding
// rather than on the answer. It also returns the session's usage.
func ChatReply(t testing.TB, m *llm.Model, msgs []llm.Message, opts ...llm.GenerateOption) (string, llm.Usage) {
	t.Helper()
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reply, err := s.Chat(context.Background(), msgs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(reply.Content)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		t.Fatal(err)
	}
	return text, s.Usage()
}

// TokenizeAll is m.TokenizeSpecial of each text, as Embed and the
// embedding endpoints tokenize, and their total length.
func TokenizeAll(t testing.TB, m *llm.Model, texts ...string) (ids [][]int32, tokens int) {
	t.Helper()
	for _, text := range texts {
		tok, err := m.TokenizeSpecial(text)
		if err != nil {
			t.Fatal(err)
		}
		ids, tokens = append(ids, tok), tokens+len(tok)
	}
	return ids, tokens
}

// EmbedEach is s.Embed of each text alone.
func EmbedEach(t testing.TB, s *llm.Session, texts ...string) [][]float32 {
	t.Helper()
	vs := make([][]float32, len(texts))
	for i, text := range texts {
		v, err := s.Embed(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		vs[i] = v
	}
	return vs
}

// Open loads the model at path and opens a session on it; both close when
// the test ends.
func Open(t testing.TB, path string, opts ...llm.Option) (*llm.Model, *llm.Session) {
	t.Helper()
	m, err := llm.Load(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// BuildCommand builds the main package in the test's directory (an example
// command) into a temporary directory and returns the binary's path. It
// builds with the test's own tags (purego or not), so that the command's
// kernels round as the test's do: a test that picks a seed by generating
// in its own process gets the same tokens from the command. Building takes
// seconds, so in -short mode it skips the test.
func BuildCommand(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command's binary")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(wd))
	args := append(append([]string{"build"}, buildTags...), "-o", bin, ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
