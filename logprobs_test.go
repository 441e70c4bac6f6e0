package llm_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestLogprobs: with WithLogprobs a token's log-probability is the
// log-softmax of the logits it was sampled from, and greedy decoding
// takes the first of the top tokens.
func TestLogprobs(t *testing.T) {
	m := loadStories(t, llm.WithThreads(1))
	s := session(t, m)
	ctx := context.Background()
	ids, _ := m.Tokenize("Once upon a time")
	if _, err := s.Eval(ctx, ids); err != nil {
		t.Fatal(err)
	}
	logits := s.Logits()
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l))
	}
	n := 0
	for tok, err := range s.Stream(ctx, "", llm.MaxTokens(6), llm.Temperature(0), llm.WithLogprobs(3)) {
		if err != nil {
			t.Fatal(err)
		}
		if tok.ID < 0 {
			continue
		}
		if len(tok.TopLogprobs) != 3 || tok.TopLogprobs[0].ID != tok.ID || tok.TopLogprobs[0].Logprob != tok.Logprob || tok.Logprob > 0 {
			t.Fatalf("token %+v", tok)
		}
		if n == 0 {
			want := float64(logits[tok.ID]) - math.Log(sum)
			if math.Abs(float64(tok.Logprob)-want) > 1e-4 {
				t.Errorf("first token's logprob %g; the logits give %g", tok.Logprob, want)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no tokens")
	}
	for tok, err := range s.Stream(ctx, " and", llm.MaxTokens(2)) {
		if err == nil && (tok.Logprob != 0 || tok.TopLogprobs != nil) {
			t.Fatalf("without WithLogprobs: %+v", tok)
		}
	}
	if _, err := s.Generate(ctx, " x", llm.WithLogprobs(21)); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("WithLogprobs(21): %v, want ErrInvalidOption", err)
	}
}

// TestChatLogprobs: ChatStream's tokens carry their log-probabilities.
func TestChatLogprobs(t *testing.T) {
	m := load(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithThreads(1))
	s := session(t, m)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	n := 0
	for tok, err := range s.ChatStream(context.Background(), msgs, llm.MaxTokens(8), llm.WithLogprobs(0)) {
		if err != nil {
			t.Fatal(err)
		}
		if tok.ID >= 0 {
			n++
			if tok.Logprob > 0 || math.IsNaN(float64(tok.Logprob)) || len(tok.TopLogprobs) != 0 {
				t.Fatalf("token %+v", tok)
			}
		}
	}
	if n == 0 {
		t.Fatal("no tokens")
	}
}
