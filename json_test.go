package llm_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/jsonprefix"
	"github.com/lowmem/llm/internal/testutil"
)

// checkJSON fails the test unless text is the start of a JSON object, and
// a whole one when the generation ended on its own (FinishEnd).
func checkJSON(t *testing.T, text string, finish llm.Finish) {
	t.Helper()
	var m jsonprefix.Machine
	if !m.Write([]byte(text)) {
		t.Fatalf("output %q is not the start of a JSON object", text)
	}
	switch finish {
	case llm.FinishEnd:
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil || !m.Done() {
			t.Fatalf("finished output %q is not a JSON object: %v", text, err)
		}
	case llm.FinishLength:
		if m.Done() {
			t.Fatalf("output %q is a whole object but the generation ran to its length", text)
		}
	default:
		t.Fatalf("finish %q, want end or length", finish)
	}
}

// TestGenerateJSON generates with WithJSON on models of several
// vocabularies (SentencePiece with byte tokens, Llama's, Qwen's), greedy
// and sampled: the output is always the start of a JSON object and a
// whole one when it ends, Logits stay the model's own, and the session
// holds what was generated.
func TestGenerateJSON(t *testing.T) {
	ctx := context.Background()
	ended := 0
	for _, file := range []string{"stories260K-f32.gguf", "tiny-llama-q4_k_m.gguf", "tiny-qwen3-q4_k_m.gguf"} {
		m := load(t, testutil.Testdata(t, "models/"+file), llm.WithThreads(2), llm.WithContextSize(256))
		for _, temp := range []float32{0, 1} {
			for seed := range uint64(3) {
				s := session(t, m)
				opts := []llm.GenerateOption{llm.WithJSON(), llm.MaxTokens(80), llm.Temperature(temp), llm.Seed(seed), llm.RepeatPenalty(1.1)}
				out, err := s.Generate(ctx, "Once upon a time", opts...)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				u := s.Usage()
				checkJSON(t, out, u.Finish)
				if u.Finish == llm.FinishEnd {
					ended++
				}
				ref := session(t, m)
				want, err := ref.Eval(ctx, s.Tokens())
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(s.Logits(), want) {
					t.Fatalf("%s: Logits after a JSON generation differ from the model's for the same tokens", file)
				}
				if text, err := m.Detokenize(s.Tokens()); err != nil || !strings.HasSuffix(text, out) {
					t.Fatalf("%s: the session holds %q, which does not end with the output %q", file, text, out)
				}
				s.Close()
				ref.Close()
				if temp == 0 {
					break // one greedy run a model
				}
			}
		}
	}
	if ended == 0 {
		t.Error("no generation completed its object; the end of JSON mode went untested")
	}
}

// TestChatJSON: a chat reply under WithJSON is JSON in Content.
func TestChatJSON(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	s := session(t, m)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "Reply with a JSON object."}}
	for _, temp := range []float32{0, 1} {
		reply, err := s.Chat(context.Background(), msgs, llm.WithJSON(), llm.MaxTokens(40), llm.Temperature(temp))
		if err != nil {
			t.Fatal(err)
		}
		checkJSON(t, reply.Content, s.Usage().Finish)
	}
}
