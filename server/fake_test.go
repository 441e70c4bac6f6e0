package server

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
)

// fakeBackend generates scripted replies, one piece per "decode step".
type fakeBackend struct {
	tmpl      *chat.Template
	reply     func(prompt string) []string
	gate      chan struct{} // when set, every step waits for a token from it
	mu        sync.Mutex
	active    int
	peak      int
	steps     atomic.Int64
	cancelled atomic.Int64
	prompts   []string
	params    []Params
}

func newFake(reply func(prompt string) []string) *fakeBackend {
	t, err := chat.Parse(testutil.HermesTemplate)
	if err != nil {
		panic(err)
	}
	return &fakeBackend{tmpl: t, reply: reply}
}

func (b *fakeBackend) Info() ModelInfo {
	return ModelInfo{ID: "fake-model", ContextLength: 4096, Template: b.tmpl,
		Render: chat.RenderOptions{BOSToken: "<s>", EOSToken: "</s>"}}
}

func (b *fakeBackend) NewSession() (Session, error) { return &fakeSession{b: b}, nil }

type fakeSession struct{ b *fakeBackend }

func (s *fakeSession) Close() error { return nil }

func (s *fakeSession) Generate(ctx context.Context, prompt string, p Params, yield func(string) bool) (Result, error) {
	b := s.b
	b.mu.Lock()
	b.active++
	b.peak = max(b.peak, b.active)
	b.prompts = append(b.prompts, prompt)
	b.params = append(b.params, p)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.active--
		b.mu.Unlock()
	}()
	res := Result{PromptTokens: len(strings.Fields(prompt)), Finish: "stop"}
	for _, piece := range b.reply(prompt) {
		if b.gate != nil {
			select {
			case <-b.gate:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			b.cancelled.Add(1)
			return res, ctx.Err()
		}
		b.steps.Add(1)
		if p.MaxTokens > 0 && res.CompletionTokens == p.MaxTokens {
			res.Finish = "length"
			return res, nil
		}
		res.CompletionTokens++
		if !yield(piece) {
			return res, nil
		}
	}
	return res, nil
}
