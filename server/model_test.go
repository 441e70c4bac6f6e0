package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
)

// The tests below drive FromModel's Backend, a real synthetic model
// (testutil.TinyChat: ChatML-style turns, tool calls as <tool_call>), over
// HTTP on a loopback port.

// loadModel loads path with one thread and opts until the test ends.
func loadModel(tb testing.TB, path string, opts ...llm.Option) *llm.Model {
	tb.Helper()
	m, err := llm.Load(path, append([]llm.Option{llm.WithThreads(1)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// startModel serves TinyChat with parallel slots; wrap, when not nil,
// wraps the backend (to hold or watch generations).
func startModel(t *testing.T, parallel int, wrap func(Backend) Backend, opts ...Option) (*llm.Model, *Server, *httptest.Server) {
	t.Helper()
	m := loadModel(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithSessions(parallel))
	srv, hs := serveModel(t, m, "tiny-chat", parallel, wrap, opts...)
	return m, srv, hs
}

// dogText is a TinyChat prompt that begins with special-token text.
const dogText = "<|im_start|>user the dog"

// startDog is startModel with one slot, and dogText's tokens as a
// completion's prompt is tokenized (BOS added, special text parsed).
func startDog(t *testing.T) (*llm.Model, *httptest.Server, []int32) {
	t.Helper()
	m, _, hs := startModel(t, 1, nil)
	ids, err := m.TokenizeSpecial(dogText)
	if err != nil {
		t.Fatal(err)
	}
	return m, hs, ids
}

// startQwen3 serves the test data's tiny-qwen3 (a real model's file;
// the test is skipped without it) as "tiny-qwen3" with one slot.
func startQwen3(t *testing.T) (*llm.Model, *httptest.Server) {
	t.Helper()
	m := loadModel(t, testutil.Testdata(t, "models/tiny-qwen3-q4_k_m.gguf"), llm.WithContextSize(256))
	_, hs := serveModel(t, m, "tiny-qwen3", 1, nil)
	return m, hs
}

// serveModel serves m, loaded with llm.WithSessions(parallel), as id over
// HTTP until the test ends; wrap is startModel's.
func serveModel(t *testing.T, m *llm.Model, id string, parallel int, wrap func(Backend) Backend, opts ...Option) (*Server, *httptest.Server) {
	t.Helper()
	var b Backend
	b, err := FromModel(m, id)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		b = wrap(b)
	}
	srv, err := New(b, append([]Option{WithParallel(parallel)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, hs
}

func TestModelChat(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	msgs := []llm.Message{{Role: "system", Content: "You tell stories."}, {Role: "user", Content: "Once upon a time"}}
	want, u := llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0))
	req := `{"model":"tiny-chat","messages":[{"role":"system","content":"You tell stories."},{"role":"user","content":"Once upon a time"}],"max_tokens":12,"temperature":0`

	got, _ := postChat(t, hs.URL+"/v1/chat/completions", req+"}")
	c := got.Choices[0]
	finish := map[llm.Finish]string{llm.FinishEnd: "stop", llm.FinishLength: "length"}[u.Finish]
	if *c.Message.Content != want || c.FinishReason != finish || got.Model != "tiny-chat" {
		t.Errorf("reply %q (%s), want %q (%s)", *c.Message.Content, c.FinishReason, want, finish)
	}
	if got.Usage.PromptTokens != u.PromptTokens || got.Usage.CompletionTokens != u.GeneratedTokens {
		t.Errorf("usage %+v, want %d prompt and %d completion tokens", got.Usage, u.PromptTokens, u.GeneratedTokens)
	}

	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", req+`,"stream":true,"stream_options":{"include_usage":true}}`)
	var text strings.Builder
	var usage *usageJSON
	var streamFinish string
	for _, ch := range chunks {
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				text.WriteString(*c.Delta.Content)
			}
			if c.FinishReason != nil {
				streamFinish = *c.FinishReason
			}
		}
	}
	if text.String() != want || streamFinish != finish || usage == nil || usage.CompletionTokens != u.GeneratedTokens {
		t.Errorf("streamed %q (%s, usage %+v), want %q (%s)", text.String(), streamFinish, usage, want, finish)
	}
}

// TestModelJSON: response_format json_object gives what llm.WithJSON
// gives the same model, the start of a JSON object or a whole one, and
// json_schema what llm.WithJSONSchema gives.
func TestModelJSON(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	msgs := []llm.Message{{Role: "user", Content: "Answer in JSON."}}
	want, u := llmtest.ChatReply(t, m, msgs, llm.WithJSON(), llm.MaxTokens(24), llm.Temperature(0))
	if !strings.HasPrefix(strings.TrimLeft(want, " \t\r\n"), "{") {
		t.Fatalf("llm.WithJSON gave %q", want)
	}
	got, _ := postChat(t, hs.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"Answer in JSON."}],"max_tokens":24,"temperature":0,"response_format":{"type":"json_object"}}`)
	finish := map[llm.Finish]string{llm.FinishEnd: "stop", llm.FinishLength: "length"}[u.Finish]
	if c := got.Choices[0]; *c.Message.Content != want || c.FinishReason != finish {
		t.Errorf("reply %q (%s), want %q (%s)", *c.Message.Content, c.FinishReason, want, finish)
	}

	// json_schema: what llm.WithJSONSchema gives, an object of the schema.
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"},"size":{"enum":["s","m"]}},"required":["ok","size"],"additionalProperties":false}`
	want, u = llmtest.ChatReply(t, m, msgs, llm.WithJSONSchema(json.RawMessage(schema)), llm.MaxTokens(200), llm.Temperature(0))
	var v struct {
		OK   *bool
		Size string
	}
	if u.Finish != llm.FinishEnd || json.Unmarshal([]byte(want), &v) != nil || v.OK == nil || (v.Size != "s" && v.Size != "m") {
		t.Fatalf("llm.WithJSONSchema gave %q (%s)", want, u.Finish)
	}
	got, _ = postChat(t, hs.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"Answer in JSON."}],"max_tokens":200,"temperature":0,"response_format":{"type":"json_schema","json_schema":{"name":"answer","strict":true,"schema":`+schema+`}}}`)
	if c := got.Choices[0]; *c.Message.Content != want || c.FinishReason != "stop" {
		t.Errorf("json_schema reply %q (%s), want %q (stop)", *c.Message.Content, c.FinishReason, want)
	}
}

// TestModelMultiTurn: a conversation continued on its slot evaluates only
// the new turn (the prompt tokens the session reused are those it shares).
func TestModelMultiTurn(t *testing.T) {
	var last atomic.Pointer[llm.Usage]
	_, _, hs := startModel(t, 1, func(b Backend) Backend {
		return &watchBackend{Backend: b, done: func(s Session) { u := s.(modelSession).s.Usage(); last.Store(&u) }}
	})
	turn := `{"messages":[{"role":"user","content":"the dog"}%s],"max_tokens":4,"temperature":0}`
	resp, body := post(t, hs.URL+"/v1/chat/completions", fmt.Sprintf(turn, ""))
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	first := *last.Load()
	resp, body = post(t, hs.URL+"/v1/chat/completions", fmt.Sprintf(turn, `,{"role":"assistant","content":"and the cat"},{"role":"user","content":"and then?"}`))
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if second := *last.Load(); first.ReusedTokens != 0 || second.ReusedTokens < first.PromptTokens || second.ReusedTokens >= second.PromptTokens {
		t.Errorf("first turn %+v, second %+v: the second should reuse the first prompt", first, second)
	}
}

// TestModelToolRoundTrip sends a tool call and its result back with the
// tools: the model sees them rendered by its template (the usage counts
// exactly the rendered prompt's tokens).
func TestModelToolRoundTrip(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	params := `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`
	req := `{"messages":[{"role":"user","content":"weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny"}],
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather at a place","parameters":` + params + `}}],
		"max_tokens":3,"temperature":0}`
	got, _ := postChat(t, hs.URL+"/v1/chat/completions", req)
	msgs := []llm.Message{{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"}}
	tool := llm.Tool{Name: "get_weather", Description: "Weather at a place", Parameters: json.RawMessage(params)}
	want, u := llmtest.ChatReply(t, m, msgs, llm.WithTools(tool), llm.MaxTokens(3), llm.Temperature(0))
	prompt, err := llm.RenderChat(testutil.HermesTemplate, msgs, llm.RenderOptions{AddGenerationPrompt: true, Tools: []llm.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := m.TokenizeSpecial(prompt)
	if !strings.Contains(prompt, `<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool_call>`) ||
		!strings.Contains(prompt, "<tool_response>sunny</tool_response>") || !strings.Contains(prompt, `"name": "get_weather"`) {
		t.Fatalf("rendered prompt:\n%s", prompt)
	}
	if got.Usage.PromptTokens != len(ids) || u.PromptTokens != len(ids) || *got.Choices[0].Message.Content != want {
		t.Errorf("prompt tokens %d (Chat %d), want %d; reply %q, want %q", got.Usage.PromptTokens, u.PromptTokens, len(ids),
			*got.Choices[0].Message.Content, want)
	}
}

func TestModelCompletionsAndErrors(t *testing.T) {
	_, _, hs := startModel(t, 1, nil, WithMaxBodyBytes(16<<10))
	resp, body := post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon a time","max_tokens":5,"temperature":0}`)
	var got completionResponse
	if err := json.Unmarshal(body, &got); resp.StatusCode != 200 || err != nil || got.Usage.CompletionTokens == 0 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"malformed JSON", "/v1/chat/completions", `{"messages":[`, 400, "invalid_request_error"},
		{"oversized body", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 17<<10) + `"}]}`, 413, "error"},
		{"longer than the context", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("the dog ", 500) + `"}]}`, 400, "context_length_exceeded"},
		{"completion longer than the context", "/v1/completions", `{"prompt":"` + strings.Repeat("a b ", 600) + `"}`, 400, "context_length_exceeded"},
	} {
		resp, body := post(t, hs.URL+tc.path, tc.body)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
	}
}

// holdBackend holds every generation at its piece numbered at (from 0:
// the first) until release is closed or the request's context ends, and
// reports how each generation ended; yields counts the pieces of all
// generations, texts holds their texts. With logprobs its sessions are
// LogprobSessions, whose pieces are tokens (with their ids) rather than
// text.
type holdBackend struct {
	Backend
	release  chan struct{}
	at       int
	logprobs bool
	yields   atomic.Int64
	mu       sync.Mutex
	errs     []error
	texts    []string
}

func (b *holdBackend) NewSession() (Session, error) {
	s, err := b.Backend.NewSession()
	if b.logprobs {
		return holdLogprobSession{holdSession{s, b}}, err
	}
	return holdSession{s, b}, err
}

type holdSession struct {
	Session
	b *holdBackend
}

func (s holdSession) Generate(ctx context.Context, prompt string, p Params, yield func(string) bool) (Result, error) {
	return holdPieces(s.b, ctx, func(pass func(string) bool) (Result, error) {
		return s.Session.Generate(ctx, prompt, p, func(text string) bool { return pass(text) && yield(text) })
	})
}

type holdLogprobSession struct{ holdSession }

func (s holdLogprobSession) GenerateLogprobs(ctx context.Context, prompt string, p Params, yield func(Piece) bool) (Result, error) {
	return holdPieces(s.b, ctx, func(pass func(string) bool) (Result, error) {
		return s.Session.(LogprobSession).GenerateLogprobs(ctx, prompt, p, func(pc Piece) bool { return pass(pc.Text) && yield(pc) })
	})
}

// holdPieces runs generate, whose pieces each call pass with their text
// first: it counts and records them and holds the one numbered b.at. It
// records how generate ended.
func holdPieces(b *holdBackend, ctx context.Context, generate func(pass func(text string) bool) (Result, error)) (Result, error) {
	n := 0
	res, err := generate(func(text string) bool {
		b.mu.Lock()
		b.texts = append(b.texts, text)
		b.mu.Unlock()
		b.yields.Add(1)
		if n == b.at {
			select {
			case <-b.release:
			case <-ctx.Done():
			}
		}
		n++
		return true
	})
	b.mu.Lock()
	b.errs = append(b.errs, err)
	b.mu.Unlock()
	return res, err
}

// watchBackend calls done with each session after its generation.
type watchBackend struct {
	Backend
	done func(Session)
}

func (b *watchBackend) NewSession() (Session, error) {
	s, err := b.Backend.NewSession()
	return watchSession{s, b.done}, err
}

type watchSession struct {
	Session
	done func(Session)
}

func (s watchSession) Generate(ctx context.Context, prompt string, p Params, yield func(string) bool) (Result, error) {
	defer s.done(s.Session)
	return s.Session.Generate(ctx, prompt, p, yield)
}

// TestModelParallelQueueDisconnect: two slots generate at once, a request
// past the queue gets 429, and a client that disconnects stops its
// generation before another token is computed.
func TestModelParallelQueueDisconnect(t *testing.T) {
	hb := &holdBackend{release: make(chan struct{})}
	m, srv, hs := startModel(t, 2, func(b Backend) Backend { hb.Backend = b; return hb }, WithQueue(0))
	body := `{"messages":[{"role":"user","content":"the cat"}],"max_tokens":6,"temperature":0}`
	want, _ := llmtest.ChatReply(t, m, []llm.Message{{Role: "user", Content: "the cat"}}, llm.MaxTokens(6), llm.Temperature(0))

	// Two requests generate at once, each held at its first token.
	replies := make(chan string, 2)
	for range 2 {
		go func() {
			_, b := post(t, hs.URL+"/v1/chat/completions", body)
			replies <- string(b)
		}()
	}
	waitFor(t, func() bool { return hb.yields.Load() == 2 })
	if resp, b := post(t, hs.URL+"/v1/chat/completions", body); resp.StatusCode != 429 {
		t.Errorf("third request with both slots busy and no queue: %d %s", resp.StatusCode, b)
	}
	if _, busy := srv.slots.load(); busy != 2 {
		t.Errorf("%d slots busy, want 2", busy)
	}
	close(hb.release)
	for _, r := range []string{<-replies, <-replies} {
		var got chatResponse
		if err := json.Unmarshal([]byte(r), &got); err != nil || *got.Choices[0].Message.Content != want {
			t.Errorf("parallel reply %s, want %q", r, want)
		}
	}

	// Disconnect: the client reads the first chunk and goes away while the
	// generation is held at its first token.
	hb.release = make(chan struct{})
	hb.yields.Store(0)
	hb.errs = nil
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/chat/completions",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"the cat"}],"max_tokens":200}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return hb.yields.Load() == 1 })
	cancel()
	resp.Body.Close()
	waitFor(t, func() bool { hb.mu.Lock(); defer hb.mu.Unlock(); return len(hb.errs) == 1 })
	if err := hb.errs[0]; !errors.Is(err, context.Canceled) || hb.yields.Load() != 1 {
		t.Errorf("after the disconnect: %v, %d pieces generated; want context.Canceled after 1", err, hb.yields.Load())
	}
	close(hb.release)
	if resp, b := post(t, hs.URL+"/v1/chat/completions", body); resp.StatusCode != 200 {
		t.Errorf("after a disconnect: %d %s", resp.StatusCode, b)
	}
}

// TestModelJSONAfterThinking: after a prompt that opens a reasoning block
// (as DeepSeek-R1's template writes), JSON output is the answer, not
// reasoning_content.
func TestModelJSONAfterThinking(t *testing.T) {
	spec := testutil.TinyChat()
	spec.ChatTemplate = strings.Replace(spec.ChatTemplate, "{%- if add_generation_prompt %}<|im_start|>assistant\n",
		"{%- if add_generation_prompt %}<|im_start|>assistant\n<think>\n", 1)
	m := loadModel(t, testutil.TempModel(t, spec))
	_, hs := serveModel(t, m, "thinker", 1, nil)
	got, body := postChat(t, hs.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"JSON please"}],"max_tokens":30,"temperature":0,"response_format":{"type":"json_object"}}`)
	if msg := got.Choices[0].Message; msg.Content == nil || !strings.HasPrefix(*msg.Content, "{") || msg.ReasoningContent != "" {
		t.Errorf("message %s: want the JSON in content, no reasoning_content", body)
	}
}

// TestModelLogprobs: logprobs through the server are the library's
// (llm.WithLogprobs), whole or streamed, in chat's form and the legacy
// endpoint's.
func TestModelLogprobs(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	msgs := []llm.Message{{Role: "user", Content: "Once upon a time"}}
	s, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var want []llm.Token
	for tok, err := range s.ChatStream(context.Background(), msgs, llm.MaxTokens(10), llm.Temperature(0), llm.WithLogprobs(2)) {
		if err != nil {
			t.Fatal(err)
		}
		if tok.ID >= 0 {
			want = append(want, tok)
		}
	}
	check := func(what string, got []logprobJSON) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, want one for each of %d tokens", what, len(got), len(want))
		}
		for i, e := range got {
			w := want[i]
			// A token that is part of a UTF-8 character reads as U+FFFD in
			// JSON; its bytes are exact.
			if !sameBytes(e.Bytes, m.TokenText(w.ID)) || e.Logprob != finite(float64(w.Logprob)) || len(e.TopLogprobs) != 2 ||
				e.TopLogprobs[0].Token != e.Token || e.TopLogprobs[0].Logprob != e.Logprob {
				t.Fatalf("%s: entry %d %+v; the library gave %+v", what, i, e, w)
			}
		}
	}
	req := `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":10,"temperature":0,"logprobs":true,"top_logprobs":2`
	got, body := postChat(t, hs.URL+"/v1/chat/completions", req+"}")
	if got.Choices[0].Logprobs == nil {
		t.Fatalf("no logprobs: %s", body)
	}
	check("chat", got.Choices[0].Logprobs.Content)

	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", req+`,"stream":true}`)
	var streamed []logprobJSON
	for _, ch := range chunks {
		for _, c := range ch.Choices {
			if c.Logprobs != nil {
				streamed = append(streamed, c.Logprobs.Content...)
			}
		}
	}
	check("streamed chat", streamed)

	resp, body := post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon a time","max_tokens":6,"temperature":0,"logprobs":3}`)
	var comp struct {
		Choices []completionChoice `json:"choices"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &comp) != nil || comp.Choices[0].Logprobs == nil {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	lp := comp.Choices[0].Logprobs
	n := len(lp.Tokens)
	if n == 0 || len(lp.TokenLogprobs) != n || len(lp.TopLogprobs) != n || len(lp.TextOffset) != n || lp.TextOffset[0] != 0 {
		t.Fatalf("completion logprobs %+v", lp)
	}
	for i := range n {
		// Offsets count the tokens' bytes, and a token that is part of a
		// UTF-8 character reads as U+FFFD here: they only grow.
		if len(lp.TopLogprobs[i]) == 0 || len(lp.TopLogprobs[i]) > 3 || lp.TokenLogprobs[i] > 0 ||
			i > 0 && lp.TextOffset[i] <= lp.TextOffset[i-1] {
			t.Fatalf("completion logprobs entry %d of %+v", i, lp)
		}
	}
}

// sameBytes reports whether a JSON byte list holds text's bytes.
func sameBytes(b []int, text string) bool {
	if len(b) != len(text) {
		return false
	}
	for i := range b {
		if b[i] != int(text[i]) {
			return false
		}
	}
	return true
}

// TestModelToolChoiceGrammar: with a template whose calls are not JSON
// (Qwen 3.5's XML form, Gemma 4's notation, GLM-4.5's pairs), tool_choice
// "required" makes the reply a call in that syntax (the values held to
// their schemas: an enum, a boolean), which parses back to the tool's
// arguments, whole and streamed.
func TestModelToolChoiceGrammar(t *testing.T) {
	for name, spec := range map[string]testutil.ModelSpec{"xml form": testutil.TinyXMLChat(), "gemma 4": testutil.TinyGemma4Chat(), "glm": testutil.TinyGLMChat(),
		"minimax-m2": testutil.TinyMiniMaxChat()} {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, testutil.TempModel(t, spec))
			_, hs := serveModel(t, m, "tiny", 1, nil)
			req := `{"messages":[{"role":"user","content":"weather?"}],"max_tokens":400,"temperature":0,` +
				`"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"unit":{"type":"string","enum":["c","f"]},"metric":{"type":"boolean"}},"required":["unit","metric"]}}}],` +
				`"tool_choice":"required"`
			got, body := postChat(t, hs.URL+"/v1/chat/completions", req+"}")
			c := got.Choices[0]
			if len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "weather" || c.FinishReason != "tool_calls" {
				t.Fatalf("reply %s: want one call of weather", body)
			}
			var args struct {
				Unit   string
				Metric *bool
			}
			if json.Unmarshal([]byte(c.Message.ToolCalls[0].Function.Arguments), &args) != nil || (args.Unit != "c" && args.Unit != "f") || args.Metric == nil {
				t.Errorf("arguments %q", c.Message.ToolCalls[0].Function.Arguments)
			}
			_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", req+`,"stream":true}`)
			calls := 0
			for _, ch := range chunks {
				for _, c := range ch.Choices {
					calls += len(c.Delta.ToolCalls)
				}
			}
			if calls != 1 {
				t.Errorf("streamed %d calls", calls)
			}
		})
	}
}

// TestModelToolChoice: tool_choice "required" makes the reply a call of
// the tool, whole and streamed, as llm.WithToolChoice does.
func TestModelToolChoice(t *testing.T) {
	_, _, hs := startModel(t, 1, nil)
	req := `{"messages":[{"role":"user","content":"weather?"}],"max_tokens":400,"temperature":0,` +
		`"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"unit":{"enum":["c","f"]}},"required":["unit"],"additionalProperties":false}}}],` +
		`"tool_choice":"required"`
	got, body := postChat(t, hs.URL+"/v1/chat/completions", req+"}")
	c := got.Choices[0]
	if len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "weather" || c.FinishReason != "tool_calls" {
		t.Fatalf("reply %s: want one call of weather", body)
	}
	var args struct{ Unit string }
	if json.Unmarshal([]byte(c.Message.ToolCalls[0].Function.Arguments), &args) != nil || (args.Unit != "c" && args.Unit != "f") {
		t.Errorf("arguments %q", c.Message.ToolCalls[0].Function.Arguments)
	}
	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", req+`,"stream":true}`)
	calls, finish := 0, ""
	for _, ch := range chunks {
		for _, c := range ch.Choices {
			calls += len(c.Delta.ToolCalls)
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if calls != 1 || finish != "tool_calls" {
		t.Errorf("streamed %d calls, finish %q", calls, finish)
	}
}
