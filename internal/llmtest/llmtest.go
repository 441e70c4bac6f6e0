// Package llmtest holds helpers for tests that drive the public llm API
// from outside the root package (the server's tests and the nested
// openaitest module), so that what they compare against is computed one
// way.
//
// Example: what a fresh session answers, to compare with an HTTP reply.
//
//	want, usage := llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0))
package llmtest

import (
	"context"
	"encoding/json"
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
