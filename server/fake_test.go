package server

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lowmem/llm/chat"
)

// hermesTemplate is a small Qwen-style template with tool support.
const hermesTemplate = `{%- if tools %}<|im_start|>system
<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>
{% endif %}
{%- for m in messages %}
{%- if m.role == 'assistant' and m.tool_calls %}<|im_start|>assistant
{% for tc in m.tool_calls %}<tool_call>{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}</tool_call>{% endfor %}<|im_end|>
{% elif m.role == 'tool' %}<|im_start|>user
<tool_response>{{ m.content }}</tool_response><|im_end|>
{% else %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

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
	t, err := chat.Parse(hermesTemplate)
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
