package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
)

func words(s string) func(string) []string {
	return func(string) []string { return strings.SplitAfter(s, " ") }
}

func start(t *testing.T, b *fakeBackend, opts ...Option) (*Server, *httptest.Server) {
	t.Helper()
	return startBackend(t, b, opts...)
}

// startBackend is start for any Backend.
func startBackend(t *testing.T, b Backend, opts ...Option) (*Server, *httptest.Server) {
	t.Helper()
	n := 0
	var mu sync.Mutex
	opts = append([]Option{WithIDs(func(p string) string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s%d", p, n)
	})}, opts...)
	srv, err := New(b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return srv, hs
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// postChat posts a chat completion request and decodes the reply,
// failing the test unless it is a 200 with a chat completion.
func postChat(t *testing.T, url, body string) (chatResponse, []byte) {
	t.Helper()
	resp, b := post(t, url, body)
	var got chatResponse
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return got, b
}

// stream posts body to url and decodes the SSE reply: each event before
// the closing [DONE] is one chunk.
func stream[C choice](t *testing.T, url, body string) (http.Header, []response[C]) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := sseEvents(t, resp.Body)
	if len(events) == 0 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", events)
	}
	chunks := make([]response[C], len(events)-1)
	for i, e := range events[:len(events)-1] {
		if err := json.Unmarshal([]byte(e), &chunks[i]); err != nil {
			t.Fatalf("event %d %s: %v", i, e, err)
		}
	}
	return resp.Header, chunks
}

// sseEvents reads a stream's data lines, checking the framing.
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("event not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		if !strings.HasPrefix(line, "data: ") {
			t.Fatalf("line %q is not a data line", line)
		}
		out = append(out, strings.TrimPrefix(line, "data: "))
		expectBlank = true
	}
	return out
}

func TestChatNonStream(t *testing.T) {
	b := newFake(words("Paris is the capital."))
	_, hs := start(t, b)
	got, body := postChat(t, hs.URL+"/v1/chat/completions",
		`{"model":"x","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Capital of France?"}],"max_tokens":50,"temperature":0.2,"seed":7,"top_p":0.9}`)
	if got.Object != "chat.completion" || got.Model != "fake-model" || got.ID != "chatcmpl-1" || len(got.Choices) != 1 {
		t.Fatalf("response %s", body)
	}
	c := got.Choices[0]
	if *c.Message.Content != "Paris is the capital." || c.FinishReason != "stop" || c.Message.Role != "assistant" {
		t.Errorf("choice %+v", c)
	}
	if got.Usage.CompletionTokens != 4 || got.Usage.TotalTokens != got.Usage.PromptTokens+4 {
		t.Errorf("usage %+v", got.Usage)
	}
	wantPrompt := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nCapital of France?<|im_end|>\n<|im_start|>assistant\n"
	if b.prompts[0] != wantPrompt {
		t.Errorf("prompt %q\nwant   %q", b.prompts[0], wantPrompt)
	}
	p := b.params[0]
	if p.MaxTokens != 50 || *p.Temperature != 0.2 || *p.Seed != 7 || *p.TopP != 0.9 || p.JSON {
		t.Errorf("params %+v", p)
	}
}

// TestResponseFormat: json_object reaches the Backend as Params.JSON on
// both endpoints, json_schema (and llama.cpp's json_object with a schema)
// as Params.JSONSchema too; text and an absent or empty type leave them
// off.
func TestResponseFormat(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"type":"integer"}}}`
	cases := []struct {
		path, body string
		json       bool
		schema     string
	}{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`, true, ""},
		{"/v1/completions", `{"prompt":"x","response_format":{"type":"json_object"}}`, true, ""},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":` + schema + `}}}`, true, schema},
		{"/v1/completions", `{"prompt":"x","response_format":{"type":"json_object","schema":` + schema + `}}`, true, schema}, // llama.cpp's form
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}}`, false, ""},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{}}`, false, ""},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, false, ""},
	}
	for _, c := range cases {
		b := newFake(words("{}"))
		_, hs := start(t, b)
		if resp, body := post(t, hs.URL+c.path, c.body); resp.StatusCode != 200 {
			t.Fatalf("%s %s: status %d: %s", c.path, c.body, resp.StatusCode, body)
		}
		if p := b.params[0]; p.JSON != c.json || string(p.JSONSchema) != c.schema {
			t.Errorf("%s %s: Params.JSON %v, JSONSchema %s; want %v, %s", c.path, c.body, p.JSON, p.JSONSchema, c.json, c.schema)
		}
	}
}

func TestChatStream(t *testing.T) {
	_, hs := start(t, newFake(words("Hello big world")))
	header, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if ct := header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	for _, c := range chunks {
		if c.Object != "chat.completion.chunk" || c.ID != "chatcmpl-1" {
			t.Fatalf("chunk %+v", c)
		}
	}
	if d := chunks[0].Choices[0].Delta; d.Role != "assistant" || d.Content == nil || *d.Content != "" {
		t.Errorf("first chunk %+v, want the role", d)
	}
	var text strings.Builder
	for _, c := range chunks[1 : len(chunks)-2] {
		if c.Choices[0].FinishReason != nil {
			t.Errorf("finish reason before the end")
		}
		text.WriteString(*c.Choices[0].Delta.Content)
	}
	if text.String() != "Hello big world" {
		t.Errorf("streamed %q", text.String())
	}
	fin := chunks[len(chunks)-2]
	if fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
		t.Errorf("finish chunk %+v", fin)
	}
	usage := chunks[len(chunks)-1]
	if len(usage.Choices) != 0 || usage.Usage == nil || usage.Usage.CompletionTokens != 3 {
		t.Errorf("usage chunk %+v", usage)
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	b := newFake(func(prompt string) []string {
		if strings.Contains(prompt, "<tool_response>") {
			return []string{"It is ", "18 °C."}
		}
		return []string{"<tool_", "call>{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}</tool_call>"}
	})
	_, hs := start(t, b)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather in Paris?"}],`+tools+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got chatResponse
	json.Unmarshal(body, &got)
	c := got.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.Content != nil || len(c.Message.ToolCalls) != 1 {
		t.Fatalf("choice %s", body)
	}
	tc := c.Message.ToolCalls[0]
	if tc.Type != "function" || tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"Paris"}` || tc.ID == "" {
		t.Errorf("tool call %+v", tc)
	}
	if !strings.Contains(b.prompts[0], `<tools>{"type": "function", "function": {"name": "get_weather"`) {
		t.Errorf("tools not in prompt: %q", b.prompts[0])
	}

	// Send the result back; the streamed answer is plain content.
	second := fmt.Sprintf(`{"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":%q,"content":"18 C"}],`+tools+`}`, tc.ID, tc.ID)
	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", second)
	var text strings.Builder
	for _, ch := range chunks {
		if d := ch.Choices[0].Delta; d.Content != nil {
			text.WriteString(*d.Content)
		}
	}
	if text.String() != "It is 18 °C." {
		t.Errorf("answer %q", text.String())
	}
	p := b.prompts[1]
	if !strings.Contains(p, `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`) ||
		!strings.Contains(p, "<tool_response>18 C</tool_response>") {
		t.Errorf("history not rendered: %q", p)
	}
}

// TestToolCallXMLForm: a call in the XML form Qwen 3.5 writes inside
// <tool_call> reaches the client as OpenAI's call, its values typed by the
// request's tool schema (the string parameter "75001" stays a string, the
// integer one is a number).
func TestToolCallXMLForm(t *testing.T) {
	b := newFake(func(string) []string {
		return []string{"<tool_call>\n<function=get_", "weather>\n<parameter=zip>\n75001\n</param", "eter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"}
	})
	_, hs := start(t, b)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"zip":{"type":"string"},"days":{"type":"integer"}}}}}]`
	resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got chatResponse
	json.Unmarshal(body, &got)
	if c := got.Choices[0]; c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 ||
		c.Message.ToolCalls[0].Function.Name != "get_weather" || c.Message.ToolCalls[0].Function.Arguments != `{"zip":"75001","days":3}` {
		t.Errorf("choice %s", body)
	}
}

// TestToolCallGemma4: a model with a Gemma 4 template thinks in
// <|channel>thought…<channel|> and calls in its own notation, which the
// server gives as reasoning_content and a call with JSON arguments,
// whole and streamed in the pieces the model wrote; the prompt after the
// call holds its result in the model's turn.
func TestToolCallGemma4(t *testing.T) {
	b := newFake(func(string) []string {
		return []string{"<|channel>thought\nneed the wea", "ther<channel|>Let me check.<|tool_call>call:get_", `weather{city:<|"|>Par`, `is<|"|>,days:3,opts:{metric:true}}<tool_`, "call|>"}
	})
	tmpl, err := chat.Parse(testutil.Gemma4Template)
	if err != nil {
		t.Fatal(err)
	}
	b.tmpl = tmpl
	_, hs := start(t, b)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	got, body := postChat(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	c := got.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.ReasoningContent != "need the weather" || c.Message.Content == nil || *c.Message.Content != "Let me check." || len(c.Message.ToolCalls) != 1 ||
		c.Message.ToolCalls[0].Function.Name != "get_weather" || c.Message.ToolCalls[0].Function.Arguments != `{"city":"Paris","days":3,"opts":{"metric":true}}` {
		t.Errorf("choice %s", body)
	}
	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	reasoning, _, args, _ := joinDeltas(chunks)
	if reasoning != "need the weather" || args != `{"city":"Paris","days":3,"opts":{"metric":true}}` {
		t.Errorf("streamed reasoning %q, arguments %q", reasoning, args)
	}
	// The call and its result, answered: the prompt holds them in one
	// model turn, as llama.cpp renders Gemma 4's template.
	postChat(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"},`+
		`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},`+
		`{"role":"tool","tool_call_id":"c1","content":"{\"sky\":\"sunny\"}"}],`+tools+`}`)
	prompt := b.lastPrompt()
	if want := `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>response:get_weather{sky:<|"|>sunny<|"|>}<tool_response|>`; !strings.Contains(prompt, want) {
		t.Errorf("prompt %q lacks %q", prompt, want)
	}
}

func TestToolCallStreamDeltas(t *testing.T) {
	_, hs := start(t, newFake(func(string) []string {
		return []string{"Let me check.", "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"}
	}))
	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions",
		`{"stream":true,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}`)
	var sawCall, sawFinish bool
	for _, ch := range chunks {
		ch0 := ch.Choices[0]
		if len(ch0.Delta.ToolCalls) == 1 {
			tc := ch0.Delta.ToolCalls[0]
			sawCall = tc.Index != nil && *tc.Index == 0 && tc.ID != "" && tc.Function.Name == "f" && tc.Function.Arguments == "{}"
		}
		if ch0.FinishReason != nil {
			sawFinish = *ch0.FinishReason == "tool_calls"
		}
	}
	if !sawCall || !sawFinish {
		t.Errorf("call delta %v, finish tool_calls %v in %+v", sawCall, sawFinish, chunks)
	}
}

func TestCompletions(t *testing.T) {
	_, hs := start(t, newFake(words("one two three four")))
	resp, body := post(t, hs.URL+"/v1/completions", `{"prompt":"count:","stop":["three"],"max_tokens":10}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got completionResponse
	json.Unmarshal(body, &got)
	if got.Object != "text_completion" || got.Choices[0].Text != "one two " || *got.Choices[0].FinishReason != "stop" {
		t.Errorf("response %s", body)
	}
	resp2, body2 := post(t, hs.URL+"/v1/completions", `{"prompt":["count:"],"max_tokens":2}`)
	if resp2.StatusCode != 200 || !strings.Contains(string(body2), `"finish_reason":"length"`) {
		t.Errorf("max_tokens: %s", body2)
	}
	_, chunks := stream[completionChoice](t, hs.URL+"/v1/completions", `{"prompt":"x","stream":true,"stop":"fo"}`)
	var text strings.Builder
	for _, c := range chunks {
		text.WriteString(c.Choices[0].Text)
	}
	if text.String() != "one two three " {
		t.Errorf("streamed %q, chunks %+v", text.String(), chunks)
	}
}

func TestStopAcrossPieces(t *testing.T) {
	m := newStopMatcher([]string{"<|end|>", "STOP"})
	var out strings.Builder
	for _, p := range []string{"ab<", "|en", "d|>cd"} {
		s, hit := m.push(p)
		out.WriteString(s)
		if hit {
			break
		}
	}
	if out.String() != "ab" {
		t.Errorf("got %q", out.String())
	}
	m = newStopMatcher([]string{"STOP"})
	s1, _ := m.push("xST")
	s2, _ := m.push("x")
	if s1+s2+m.flush() != "xSTx" {
		t.Errorf("held text lost: %q %q", s1, s2)
	}
}

func TestBadRequests(t *testing.T) {
	_, hs := start(t, newFake(words("x")), WithMaxBodyBytes(4096))
	cases := []struct {
		name, path, body string
		status           int
		param, msg       string
	}{
		{"malformed", "/v1/chat/completions", `{"messages": [`, 400, "", "could not parse"},
		{"empty body", "/v1/chat/completions", ``, 400, "", "empty"},
		{"not an object", "/v1/chat/completions", `[1,2]`, 400, "", "must be a JSON object"},
		{"wrong type", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":"many"}`, 400, "max_tokens", "wrong type"},
		{"wrong type, max_completion_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_completion_tokens":"many"}`, 400, "max_completion_tokens", "wrong type"},
		{"wrong type, speculative", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"speculative.n_max":"many"}`, 400, "speculative.n_max", "wrong type"},
		{"no messages", "/v1/chat/completions", `{"messages":[]}`, 400, "messages", "non-empty"},
		{"unknown role", "/v1/chat/completions", `{"messages":[{"role":"wizard","content":"x"}]}`, 400, "messages[0].role", "wizard"},
		{"missing content", "/v1/chat/completions", `{"messages":[{"role":"user"}]}`, 400, "messages[0].content", "missing"},
		{"image part", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "", "only text parts"},
		{"negative max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":-1}`, 400, "max_tokens", "at least 1"},
		{"temperature", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"temperature":3}`, 400, "temperature", "between 0 and 2"},
		{"n", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":17}`, 400, "n", "between 1 and 16"},
		{"n zero", "/v1/completions", `{"prompt":"x","n":0}`, 400, "n", "between 1 and 16"},
		{"json schema keyword", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"string","format":"date"}}}}}}`, 400, "response_format", `keyword "format" is not supported`},
		{"json schema missing", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`, 400, "response_format.json_schema.schema", "needs json_schema.schema"},
		{"json schema not an object", "/v1/completions", `{"prompt":"x","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string"}}}}`, 400, "response_format", "must allow an object"},
		{"response_format type", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}}`, 400, "response_format.type", "not one of"},
		{"logprobs type", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":3}`, 400, "logprobs", "true or false"},
		{"top_logprobs alone", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_logprobs":2}`, 400, "top_logprobs", "needs logprobs"},
		{"top_logprobs range", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":21}`, 400, "top_logprobs", "between 0 and 20"},
		{"completion logprobs range", "/v1/completions", `{"prompt":"x","logprobs":6}`, 400, "logprobs", "from 0 to 5"},
		{"logprobs from a backend without them", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":true}`, 400, "logprobs", "not supported by this server's backend"},
		{"tool_choice required without tools", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tool_choice":"required"}`, 400, "tool_choice", "no tools are given"},
		{"tool_choice unknown function", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, 400, "tool_choice", "no tool is called \"g\""},
		{"tool_choice shape", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function"}}`, 400, "tool_choice", "must be"},
		{"stop type", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stop":5}`, 400, "", "stop must be"},
		{"oversized", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, 413, "", "larger"},
		{"token prompt", "/v1/completions", `{"prompt":[1,2,3]}`, 400, "prompt", "token arrays"},
		{"no prompt", "/v1/completions", `{}`, 400, "prompt", "missing"},
		{"unknown route", "/v1/images/generations", `{}`, 404, "", "unknown route"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, hs.URL+c.path, c.body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			var e struct {
				Error *struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Type == "" {
				t.Fatalf("not OpenAI error JSON: %s", body)
			}
			if !strings.Contains(e.Error.Message, c.msg) {
				t.Errorf("message %q does not say %q", e.Error.Message, c.msg)
			}
			if c.param != "" && (e.Error.Param == nil || *e.Error.Param != c.param) {
				t.Errorf("param %v, want %q", e.Error.Param, c.param)
			}
		})
	}
}

// TestParallelAndQueueFull: two slots generate at once, one request waits,
// and the next gets 429.
func TestParallelAndQueueFull(t *testing.T) {
	b := newFake(words("a b c"))
	b.gate = make(chan struct{})
	srv, hs := start(t, b, WithParallel(2), WithQueue(1))
	body := `{"messages":[{"role":"user","content":"x"}]}`
	var wg sync.WaitGroup
	codes := make(chan int, 3)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := post(t, hs.URL+"/v1/chat/completions", body)
			codes <- resp.StatusCode
		}()
	}
	waitFor(t, func() bool { q, busy := srv.slots.load(); return q == 1 && busy == 2 })
	resp, errBody := post(t, hs.URL+"/v1/chat/completions", body)
	if resp.StatusCode != 429 || !strings.Contains(string(errBody), "rate_limit_exceeded") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("4th request: %d %s", resp.StatusCode, errBody)
	}
	// A streamed request refused for a full queue gets the status too, not a
	// 200 with an error event.
	resp, errBody = post(t, hs.URL+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 429 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("streamed 5th request: %d %s", resp.StatusCode, errBody)
	}
	_, metrics := get(t, hs.URL+"/metrics")
	for _, want := range []string{"llm_queue_length 1", "llm_slots_busy 2", `llm_requests_total{endpoint="/v1/chat/completions",code="429"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}
	close(b.gate)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("status %d", c)
		}
	}
	if b.peak != 2 {
		t.Errorf("peak concurrent generations %d, want 2", b.peak)
	}
}

// TestClientDisconnect: a client that goes away cancels its generation
// within one step, and the slot serves the next request.
func TestClientDisconnect(t *testing.T) {
	b := newFake(func(string) []string { return strings.Split(strings.Repeat("x", 1000), "") })
	b.gate = make(chan struct{}, 1)
	srv, hs := start(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/chat/completions",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Content-Type", "application/json")
	b.gate <- struct{}{}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the role chunk
		t.Fatal(err)
	}
	leave(t, srv, b, cancel, resp.Body)
	b.gate = nil
	b.reply = words("ok")
	if resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`); resp.StatusCode != 200 {
		t.Fatalf("after disconnect: %d %s", resp.StatusCode, body)
	}
}

// leave is a client going away mid-stream (cancel, then close the body):
// b's generation must stop within one step, and its slot come back.
func leave(t *testing.T, srv *Server, b *fakeBackend, cancel context.CancelFunc, body io.Closer) {
	t.Helper()
	cancel()
	body.Close()
	waitFor(t, func() bool { return b.cancelled.Load() == 1 })
	if steps := b.steps.Load(); steps > 2 {
		t.Errorf("%d steps ran; the disconnect should stop it within one", steps)
	}
	waitFor(t, func() bool { _, busy := srv.slots.load(); return busy == 0 })
}

// TestShutdown: draining refuses new requests, lets a running one finish,
// and cancels what still runs when the deadline passes.
func TestShutdown(t *testing.T) {
	b := newFake(words("a b c d"))
	b.gate = make(chan struct{})
	srv, hs := start(t, b)
	done := make(chan int)
	go func() {
		resp, _ := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
		done <- resp.StatusCode
	}()
	waitFor(t, func() bool { _, busy := srv.slots.load(); return busy == 1 })

	shut := make(chan error)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	waitFor(t, func() bool { return srv.gate.isClosed() })
	if resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`); resp.StatusCode != 503 {
		t.Errorf("request while draining: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, hs.URL+"/health"); resp.StatusCode != 503 {
		t.Errorf("health while draining: %d", resp.StatusCode)
	}
	close(b.gate) // the running request finishes
	if code := <-done; code != 200 {
		t.Errorf("in-flight request got %d", code)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}

	// A generation that does not finish in time is cancelled.
	b2 := newFake(words("a b c d"))
	b2.gate = make(chan struct{})
	srv2, hs2 := start(t, b2)
	go func() {
		resp, _ := post(t, hs2.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
		done <- resp.StatusCode
	}()
	waitFor(t, func() bool { _, busy := srv2.slots.load(); return busy == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv2.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Errorf("Shutdown: %v, want DeadlineExceeded", err)
	}
	<-done
	if b2.cancelled.Load() != 1 {
		t.Errorf("generation was not cancelled")
	}
}

func TestModelsHealthMetrics(t *testing.T) {
	_, hs := start(t, newFake(words("x")))
	resp, body := get(t, hs.URL+"/v1/models")
	if resp.StatusCode != 200 || !strings.Contains(body, `"id":"fake-model"`) || !strings.Contains(body, `"object":"list"`) {
		t.Errorf("models: %s", body)
	}
	if resp, body := get(t, hs.URL+"/v1/models/fake-model"); resp.StatusCode != 200 || !strings.Contains(body, `"object":"model"`) {
		t.Errorf("model: %s", body)
	}
	if resp, _ := get(t, hs.URL+"/v1/models/other"); resp.StatusCode != 404 {
		t.Errorf("unknown model: %d", resp.StatusCode)
	}
	if resp, body := get(t, hs.URL+"/health"); resp.StatusCode != 200 || !strings.Contains(body, "ok") {
		t.Errorf("health: %s", body)
	}
	post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
	resp, metrics := get(t, hs.URL+"/metrics")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"# TYPE llm_requests_total counter", `llm_requests_total{endpoint="/v1/chat/completions",code="200"} 1`,
		"llm_completion_tokens_total 1", "# TYPE llm_tokens_per_second gauge", "llm_queue_length 0", "llm_slots 1"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, b := getBytes(t, url)
	return resp, string(b)
}

func getBytes(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestOptionRanges(t *testing.T) {
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{WithParallel(0), "server: WithParallel(0): want 1..1024"},
		{WithParallel(1025), "server: WithParallel(1025): want 1..1024"},
		{WithQueue(-1), "server: WithQueue(-1): want 0.."},
		{WithMaxBodyBytes(0), "server: WithMaxBodyBytes(0): want 1.."},
	} {
		_, err := New(newFake(words("x")), tc.opt)
		if !errors.Is(err, ErrInvalidOption) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New: %v, want an error starting %q wrapping ErrInvalidOption", err, tc.want)
		}
	}
}

// TestChoices: n choices come in order, each generated with its own seed
// (the request's moved on by the choice's index), with usage counting the
// prompt once; streamed, each choice's chunks carry its index and end with
// its finish reason.
func TestChoices(t *testing.T) {
	b := newFake(words("a b"))
	_, hs := start(t, b)
	resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":3,"seed":7}`)
	var got chatResponse
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || len(got.Choices) != 3 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	for i, c := range got.Choices {
		if c.Index != i || *c.Message.Content != "a b" || c.FinishReason != "stop" || *b.params[i].Seed != int64(7+i) {
			t.Errorf("choice %d: %+v, seed %d", i, c, *b.params[i].Seed)
		}
	}
	if u := got.Usage; u.CompletionTokens != 6 || u.TotalTokens != u.PromptTokens+6 || u.PromptTokens == 0 {
		t.Errorf("usage %+v: want the prompt once and 6 completion tokens", u)
	}

	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":2,"stream":true}`)
	text := map[int]string{}
	finished := map[int]bool{}
	last := 0
	for _, ch := range chunks {
		for _, c := range ch.Choices {
			if c.Index < last {
				t.Fatalf("choice %d after choice %d", c.Index, last)
			}
			last = c.Index
			if c.Delta.Content != nil {
				text[c.Index] += *c.Delta.Content
			}
			if c.FinishReason != nil {
				finished[c.Index] = true
			}
		}
	}
	if text[0] != "a b" || text[1] != "a b" || !finished[0] || !finished[1] {
		t.Errorf("streamed %v, finished %v", text, finished)
	}

	resp, body = post(t, hs.URL+"/v1/completions", `{"prompt":"x","n":2}`)
	var comp struct {
		Choices []completionChoice `json:"choices"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &comp) != nil || len(comp.Choices) != 2 || comp.Choices[1].Index != 1 || comp.Choices[1].Text != "a b" {
		t.Fatalf("completions: status %d: %s", resp.StatusCode, body)
	}
}

// TestToolChoiceParams: a forcing tool_choice reaches the Backend with the
// request's tools; "auto" does not force.
func TestToolChoiceParams(t *testing.T) {
	tools := `"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}]`
	for _, tc := range []struct{ choice, want string }{
		{`"required"`, "required"},
		{`{"type":"function","function":{"name":"g"}}`, "g"},
		{`"auto"`, ""},
	} {
		b := newFake(words("ok"))
		_, hs := start(t, b)
		if resp, body := post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],`+tools+`,"tool_choice":`+tc.choice+`}`); resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", tc.choice, resp.StatusCode, body)
		}
		if p := b.params[0]; p.ToolChoice != tc.want || len(p.Tools) != 2 {
			t.Errorf("%s: Params.ToolChoice %q with %d tools, want %q with 2", tc.choice, p.ToolChoice, len(p.Tools), tc.want)
		}
	}
}

// TestOpenAITimings: OpenAI replies carry llama-server's timings object —
// on a whole reply (its choices' generations together) and on each
// choice's last chunk of a stream, no other chunk — with the tokens
// predicted, and no draft counts where nothing was drafted.
func TestOpenAITimings(t *testing.T) {
	_, hs := start(t, newFake(words("Hello big world")))
	chatBody := `{"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		path, body string
		predicted  float64
	}{
		{"/v1/chat/completions", chatBody + `}`, 3},
		{"/v1/chat/completions", chatBody + `,"n":2}`, 6},
		{"/v1/completions", `{"prompt":"hi"}`, 3},
		{"/v1/completions", `{"prompt":"hi","n":2}`, 6},
	} {
		resp, body := post(t, hs.URL+tc.path, tc.body)
		var got struct{ Timings map[string]float64 }
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
			t.Fatalf("%s %s: status %d: %s", tc.path, tc.body, resp.StatusCode, body)
		}
		if got.Timings["predicted_n"] != tc.predicted || got.Timings["prompt_n"] < 1 {
			t.Errorf("%s %s: timings %v, want predicted_n %v and the prompt's tokens", tc.path, tc.body, got.Timings, tc.predicted)
		}
		if _, ok := got.Timings["draft_n"]; ok {
			t.Errorf("%s %s: timings %v name drafts, none made", tc.path, tc.body, got.Timings)
		}
	}
	check := func(what string, finish []*string, tms []*nativeTimings) {
		t.Helper()
		for i, tm := range tms {
			if last := finish[i] != nil; (tm != nil) != last {
				t.Errorf("%s chunk %d: timings %v, finish %v; want timings on the last chunk only", what, i, tm, last)
			} else if last && tm.PredictedN != 3 {
				t.Errorf("%s chunk %d: predicted_n %d, want 3", what, i, tm.PredictedN)
			}
		}
	}
	_, cc := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", chatBody+`,"stream":true}`)
	var finish []*string
	var tms []*nativeTimings
	for _, c := range cc {
		finish, tms = append(finish, c.Choices[0].FinishReason), append(tms, c.Timings)
	}
	check("chat", finish, tms)
	_, pc := stream[completionChoice](t, hs.URL+"/v1/completions", `{"prompt":"hi","stream":true}`)
	finish, tms = nil, nil
	for _, c := range pc {
		finish, tms = append(finish, c.Choices[0].FinishReason), append(tms, c.Timings)
	}
	check("completions", finish, tms)
}
