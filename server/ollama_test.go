package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
)

// The shapes Ollama's api package decodes (api.ChatResponse,
// api.GenerateResponse …), written out from its field names, so that the
// tests read replies as its client does rather than through the server's
// own types.
type (
	apiToolCall struct {
		ID       string `json:"id"`
		Function struct {
			Index     int            `json:"index"`
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"function"`
	}
	apiMessage struct {
		Role      string        `json:"role"`
		Content   string        `json:"content"`
		Thinking  string        `json:"thinking"`
		ToolCalls []apiToolCall `json:"tool_calls"`
	}
	apiLogprob struct {
		Token       string  `json:"token"`
		Logprob     float64 `json:"logprob"`
		TopLogprobs []struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
		} `json:"top_logprobs"`
	}
	// apiResponse is a line of /api/chat's reply (Message) or of
	// /api/generate's (Response, Thinking).
	apiResponse struct {
		Model      string       `json:"model"`
		CreatedAt  time.Time    `json:"created_at"`
		Message    apiMessage   `json:"message"`
		Response   string       `json:"response"`
		Thinking   string       `json:"thinking"`
		Done       bool         `json:"done"`
		DoneReason string       `json:"done_reason"`
		Logprobs   []apiLogprob `json:"logprobs"`
		// The metrics are the server's own type: their names are
		// checked key by key against Ollama's in TestOllamaChat.
		ollamaMetrics
	}
)

// ollamaPost posts body to url and returns the reply's NDJSON lines: each
// one JSON object ending in a newline (a whole reply is one line too).
func ollamaPost(t *testing.T, url, body string) (*http.Response, [][]byte) {
	t.Helper()
	resp, b := post(t, url, body)
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("%s: reply %q does not end in a newline", body, b)
	}
	lines := bytes.Split(b[:len(b)-1], []byte("\n"))
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("%s: line %d %q is not a JSON object: %v", body, i, l, err)
		}
	}
	return resp, lines
}

// ollamaReplies posts body, wants 200, and decodes the lines; stream says
// whether it should be a stream (NDJSON) or one object.
func ollamaReplies(t *testing.T, url, body string, stream bool) []apiResponse {
	t.Helper()
	resp, lines := ollamaPost(t, url, body)
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != 200 || stream != (ct == "application/x-ndjson") || !stream && (ct != "application/json" || len(lines) != 1) {
		t.Fatalf("%s: status %d, Content-Type %q, %d lines: %s", body, resp.StatusCode, ct, len(lines), bytes.Join(lines, []byte("\n")))
	}
	out := make([]apiResponse, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &out[i]); err != nil {
			t.Fatalf("%s: line %d: %v", body, i, err)
		}
		if r := out[i]; r.Done != (i == len(lines)-1) || r.CreatedAt.Location() != time.UTC || r.CreatedAt.IsZero() {
			t.Fatalf("%s: line %d %s: done only on the last line, created_at in UTC", body, i, l)
		}
	}
	return out
}

// joined is the text of a reply's lines: the message's content (or the
// response) and thinking, and its tool calls.
func joined(rs []apiResponse) (text, thinking string, calls []apiToolCall) {
	var b, th strings.Builder
	for _, r := range rs {
		b.WriteString(r.Message.Content + r.Response)
		th.WriteString(r.Message.Thinking + r.Thinking)
		calls = append(calls, r.Message.ToolCalls...)
	}
	return b.String(), th.String(), calls
}

// ollamaErrorJSON checks that a reply has status and Ollama's error JSON
// and returns the message.
func ollamaErrorJSON(t *testing.T, resp *http.Response, body []byte, status int) string {
	t.Helper()
	var e struct {
		Error *string `json:"error"`
	}
	if resp.StatusCode != status || json.Unmarshal(body, &e) != nil || e.Error == nil || *e.Error == "" ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d (want %d), Content-Type %q: %s", resp.StatusCode, status, resp.Header.Get("Content-Type"), body)
	}
	return *e.Error
}

func TestOllamaProbesAndListings(t *testing.T) {
	srv, hs := start(t, newFake(words("x")))
	resp, body := get(t, hs.URL+"/")
	if resp.StatusCode != 200 || body != "Ollama is running" {
		t.Errorf("GET /: %d %q", resp.StatusCode, body)
	}
	for _, path := range []string{"/", "/api/tags", "/api/version"} {
		if resp, err := http.Head(hs.URL + path); err != nil || resp.StatusCode != 200 {
			t.Errorf("HEAD %s: %v %v", path, resp, err)
		}
	}
	for _, path := range []string{"/nope", "/api/pull", "/v1/nope"} {
		if resp, _ := get(t, hs.URL+path); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	resp, b := post(t, hs.URL+"/api/pull", `{"model":"x"}`)
	if msg := ollamaErrorJSON(t, resp, b, 404); !strings.Contains(msg, "unknown route POST /api/pull") {
		t.Errorf("POST /api/pull: %q", msg)
	}
	if _, body := get(t, hs.URL+"/api/version"); body != `{"version":"0.17.4"}`+"\n" {
		t.Errorf("version: %s", body)
	}

	wantDetails := `"details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"1.2B","quantization_level":"Q4_K"}`
	_, tags := get(t, hs.URL+"/api/tags")
	var list struct {
		Models []struct {
			Name, Model, Digest string
			Size                int64
			ModifiedAt          time.Time `json:"modified_at"`
		}
	}
	if err := json.Unmarshal([]byte(tags), &list); err != nil || len(list.Models) != 1 || !strings.Contains(tags, wantDetails) {
		t.Fatalf("tags: %s", tags)
	}
	if m := list.Models[0]; m.Name != "fake-model" || m.Model != "fake-model" || m.Size != 770_000_000 || !m.ModifiedAt.Equal(srv.started) {
		t.Errorf("tags: %+v", m)
	}
	_, ps := get(t, hs.URL+"/api/ps")
	var running struct {
		Models []struct {
			Name          string
			ExpiresAt     time.Time `json:"expires_at"`
			ContextLength int       `json:"context_length"`
		}
	}
	if err := json.Unmarshal([]byte(ps), &running); err != nil || len(running.Models) != 1 || !strings.Contains(ps, wantDetails) {
		t.Fatalf("ps: %s", ps)
	}
	if m := running.Models[0]; m.Name != "fake-model" || m.ContextLength != 4096 || m.ExpiresAt.Before(time.Now().AddDate(100, 0, 0)) {
		t.Errorf("ps: %+v", m)
	}
	_, metrics := get(t, hs.URL+"/metrics")
	for _, want := range []string{`endpoint="/api/tags",code="200"} 2`, `endpoint="/api/ps",code="200"} 1`, `endpoint="/api/version",code="200"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// thinkingTemplate is HermesTemplate whose generation prompt leaves the
// reasoning block to the model, or closes it when enable_thinking is false
// (as Qwen3's does).
var thinkingTemplate = strings.Replace(testutil.HermesTemplate, "{%- if add_generation_prompt %}<|im_start|>assistant\n",
	"{%- if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n{% endif %}", 1)

// newThinkingFake is newFake with thinkingTemplate.
func newThinkingFake(reply func(string) []string) *fakeBackend {
	b := newFake(reply)
	t, err := chat.Parse(thinkingTemplate)
	if err != nil {
		panic(err)
	}
	b.tmpl = t
	return b
}

func TestOllamaShow(t *testing.T) {
	plain := newFake(words("x"))
	var err error
	if plain.tmpl, err = chat.Parse(chat.ChatML); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		b    *fakeBackend
		caps string
	}{
		{"tools", newFake(words("x")), `["completion","tools"]`},
		{"tools and thinking", newThinkingFake(words("x")), `["completion","tools","thinking"]`},
		{"glm-4.5", newGLMFake(), `["completion","tools","thinking"]`},
		{"neither", plain, `["completion"]`},
	}
	for _, c := range cases {
		_, hs := start(t, c.b)
		for _, body := range []string{`{"model":"llama3.2"}`, `{"name":"llama3.2:latest","verbose":true}`, `{}`} {
			resp, b := post(t, hs.URL+"/api/show", body)
			var got struct {
				Template     string
				Capabilities json.RawMessage
				ModelInfo    map[string]any `json:"model_info"`
				Details      map[string]any
			}
			if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
				t.Fatalf("%s %s: %d %s", c.name, body, resp.StatusCode, b)
			}
			if got.Template != c.b.tmpl.Source() || string(got.Capabilities) != c.caps || got.Details["family"] != "llama" {
				t.Errorf("%s %s: %s", c.name, body, b)
			}
			want := map[string]any{"general.architecture": "llama", "general.parameter_count": 1.236e9,
				"llama.context_length": 4096.0, "llama.embedding_length": float64(fakeWidth)}
			for k, v := range want {
				if got.ModelInfo[k] != v {
					t.Errorf("%s: model_info[%s] = %v, want %v", c.name, k, got.ModelInfo[k], v)
				}
			}
		}
	}
}

func TestOllamaChat(t *testing.T) {
	b := newFake(words("Paris is the capital."))
	_, hs := start(t, b)
	req := `{"model":"llama3.2","messages":[{"role":"system","content":"Be brief."},{"role":"User","content":"Capital of France?"}]`
	wantPrompt := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nCapital of France?<|im_end|>\n<|im_start|>assistant\n"
	for _, stream := range []string{"", `,"stream":true`, `,"stream":false`} {
		b.prompts = nil
		rs := ollamaReplies(t, hs.URL+"/api/chat", req+stream+"}", stream != `,"stream":false`)
		text, thinking, calls := joined(rs)
		last := rs[len(rs)-1]
		if text != "Paris is the capital." || thinking != "" || calls != nil || last.DoneReason != "stop" {
			t.Errorf("%q: reply %q, done_reason %q", stream, text, last.DoneReason)
		}
		for _, r := range rs {
			if r.Model != "llama3.2" || r.Message.Role != "assistant" {
				t.Errorf("%q: line %+v", stream, r)
			}
		}
		m := last.ollamaMetrics
		if m.EvalCount != 4 || m.PromptEvalCount != len(strings.Fields(wantPrompt)) || m.TotalDuration <= 0 ||
			m.TotalDuration < m.LoadDuration+m.PromptEvalDuration+m.EvalDuration {
			t.Errorf("%q: metrics %+v", stream, m)
		}
		if stream != `,"stream":false` && len(rs) != 5 {
			t.Errorf("%q: %d lines, want one a piece and the last", stream, len(rs))
		}
		if b.prompts[0] != wantPrompt {
			t.Errorf("prompt %q\nwant   %q", b.prompts[0], wantPrompt)
		}
	}
	// The last line carries every metric, even a zero one.
	_, lines := ollamaPost(t, hs.URL+"/api/chat", req+`,"stream":false}`)
	for _, key := range []string{"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration", "done_reason"} {
		if !bytes.Contains(lines[0], []byte(`"`+key+`":`)) {
			t.Errorf("no %s in %s", key, lines[0])
		}
	}

	// No messages: Ollama's way to load the model.
	rs := ollamaReplies(t, hs.URL+"/api/chat", `{"model":"m","messages":[]}`, false)
	if r := rs[0]; r.DoneReason != "load" || r.Message.Role != "assistant" || r.Model != "m" {
		t.Errorf("load: %+v", r)
	}
	_, metrics := get(t, hs.URL+"/metrics")
	if want := `llm_requests_total{endpoint="/api/chat",code="200"} 5`; !strings.Contains(metrics, want) {
		t.Errorf("metrics lack %q:\n%s", want, metrics)
	}
}

func TestOllamaGenerate(t *testing.T) {
	const templated = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n"
	noTemplate := newFake(words("Because of Rayleigh scattering."))
	noTemplate.tmpl = nil
	cases := []struct {
		name   string
		b      *fakeBackend
		body   string
		prompt string
	}{
		{"templated", newFake(words("Because of Rayleigh scattering.")), `{"model":"m","prompt":"Why is the sky blue?","system":"Be brief."`, templated},
		{"raw", newFake(words("Because of Rayleigh scattering.")), `{"model":"m","prompt":"[INST] sky? [/INST]","raw":true`, "[INST] sky? [/INST]"},
		{"no template", noTemplate, `{"model":"m","prompt":"The sky is blue because"`, "The sky is blue because"},
	}
	for _, c := range cases {
		_, hs := start(t, c.b)
		for _, stream := range []bool{true, false} {
			body := c.body + "}"
			if !stream {
				body = c.body + `,"stream":false}`
			}
			rs := ollamaReplies(t, hs.URL+"/api/generate", body, stream)
			text, _, _ := joined(rs)
			last := rs[len(rs)-1]
			if text != "Because of Rayleigh scattering." || last.DoneReason != "stop" || last.EvalCount != 4 || last.Model != "m" {
				t.Errorf("%s %s: %q, %+v", c.name, body, text, last)
			}
			if p := c.b.prompts[len(c.b.prompts)-1]; p != c.prompt {
				t.Errorf("%s: prompt %q, want %q", c.name, p, c.prompt)
			}
			if _, lines := ollamaPost(t, hs.URL+"/api/generate", body); bytes.Contains(bytes.Join(lines, nil), []byte(`"message"`)) {
				t.Errorf("%s: a generate reply carries no message", c.name)
			}
		}
	}
	_, hs := start(t, newFake(words("x")))
	rs := ollamaReplies(t, hs.URL+"/api/generate", `{"model":"m"}`, false)
	if r := rs[0]; r.DoneReason != "load" || r.Response != "" {
		t.Errorf("load: %+v", r)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOllamaOptions: options reach the Backend as Params, over Ollama's
// defaults; num_predict bounds the reply (done_reason "length"), stop cuts
// it; options that cannot apply are ignored.
func TestOllamaOptions(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	i := func(x int) *int { return &x }
	i64 := func(x int64) *int64 { return &x }
	defaults := Params{Temperature: f(0.8), TopP: f(0.9), MinP: f(0), TopK: i(40)}
	with := func(change func(*Params)) Params {
		p := defaults
		change(&p)
		return p
	}
	cases := []struct {
		options string
		want    Params
		reply   string
		reason  string
	}{
		{`null`, defaults, "one two three four", "stop"},
		{`{}`, defaults, "one two three four", "stop"},
		{`{"temperature":0,"seed":42}`, with(func(p *Params) { p.Temperature, p.Seed = f(0), i64(42) }), "one two three four", "stop"},
		{`{"seed":-1,"top_k":0,"top_p":1.5,"min_p":0.05}`, with(func(p *Params) { p.TopK, p.TopP, p.MinP = i(0), f(1), f(0.05) }), "one two three four", "stop"},
		{`{"top_k":-3}`, with(func(p *Params) { p.TopK = i(0) }), "one two three four", "stop"},
		// Clamped as Ollama's sampler clamps them; top_p 0 keeps the likeliest token.
		{`{"temperature":-1,"min_p":2}`, with(func(p *Params) { p.Temperature, p.MinP = f(0), f(1) }), "one two three four", "stop"},
		{`{"top_p":0,"top_k":5}`, with(func(p *Params) { p.TopP, p.TopK = f(1), i(1) }), "one two three four", "stop"},
		{`{"min_p":-0.5}`, with(func(p *Params) { p.MinP = f(0) }), "one two three four", "stop"},
		{`{"repeat_penalty":1.1,"repeat_last_n":-1,"presence_penalty":0.5,"frequency_penalty":-0.5}`,
			with(func(p *Params) {
				p.RepeatPenalty, p.RepeatLastN, p.PresencePenalty, p.FrequencyPenalty = f(1.1), i(-1), f(0.5), f(-0.5)
			}), "one two three four", "stop"},
		{`{"num_predict":2}`, with(func(p *Params) { p.MaxTokens = 2 }), "one two ", "length"},
		{`{"num_predict":2.9}`, with(func(p *Params) { p.MaxTokens = 2 }), "one two ", "length"},
		{`{"num_predict":-1}`, defaults, "one two three four", "stop"},
		{`{"num_predict":-2}`, defaults, "one two three four", "stop"},
		{`{"stop":["thr","zzz"]}`, defaults, "one two ", "stop"},
		{`{"num_ctx":8192,"num_thread":4,"num_gpu":0,"num_batch":64,"main_gpu":0,"use_mmap":false,"num_keep":5,"typical_p":0.7,"mirostat":2,"penalize_newline":true,"temperature":null}`,
			defaults, "one two three four", "stop"},
	}
	for _, c := range cases {
		for _, path := range []string{"/api/chat", "/api/generate"} {
			b := newFake(words("one two three four"))
			_, hs := start(t, b)
			body := `{"model":"m","stream":false,"options":` + c.options + `,"messages":[{"role":"user","content":"count"}],"prompt":"count"}`
			rs := ollamaReplies(t, hs.URL+path, body, false)
			text, _, _ := joined(rs)
			if text != c.reply || rs[0].DoneReason != c.reason {
				t.Errorf("%s %s: %q (%s), want %q (%s)", path, c.options, text, rs[0].DoneReason, c.reply, c.reason)
			}
			if got := mustJSON(t, b.params[0]); !bytes.Equal(got, mustJSON(t, c.want)) {
				t.Errorf("%s %s: Params %s\nwant          %s", path, c.options, got, mustJSON(t, c.want))
			}
		}
	}
}

// TestOllamaFormat: format "json" and a schema reach the Backend as
// Params.JSON and JSONSchema; null and "" ask nothing.
func TestOllamaFormat(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`
	for _, c := range []struct {
		format string
		json   bool
		schema string
	}{
		{`"json"`, true, ""},
		{schema, true, schema},
		{`null`, false, ""},
		{`""`, false, ""},
	} {
		for _, path := range []string{"/api/chat", "/api/generate"} {
			b := newFake(words(`{"a":1}`))
			_, hs := start(t, b)
			rs := ollamaReplies(t, hs.URL+path, `{"model":"m","stream":false,"format":`+c.format+`,"messages":[{"role":"user","content":"x"}],"prompt":"x"}`, false)
			if text, _, _ := joined(rs); text != `{"a":1}` {
				t.Errorf("%s %s: %q", path, c.format, text)
			}
			if p := b.params[0]; p.JSON != c.json || string(p.JSONSchema) != c.schema {
				t.Errorf("%s %s: JSON %v, JSONSchema %s", path, c.format, p.JSON, p.JSONSchema)
			}
		}
	}
}

// TestOllamaToolCalls: a call the model writes comes back in Ollama's
// shape (arguments an object, an id, function.index), streamed and whole;
// the call and its result sent back are rendered by the template.
func TestOllamaToolCalls(t *testing.T) {
	b := newFake(func(prompt string) []string {
		if strings.Contains(prompt, "<tool_response>") {
			return []string{"It is ", "18 °C."}
		}
		return []string{"Let me check.", "<tool_", "call>{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}</tool_call>",
			"<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>"}
	})
	_, hs := start(t, b)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather now","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
		`{"type":"function","function":{"name":"get_time"}}]`
	for _, stream := range []bool{true, false} {
		body := `{"model":"m","messages":[{"role":"user","content":"Weather in Paris?"}],` + tools + map[bool]string{true: "}", false: `,"stream":false}`}[stream]
		rs := ollamaReplies(t, hs.URL+"/api/chat", body, stream)
		text, _, calls := joined(rs)
		if text != "Let me check." || len(calls) != 2 || rs[len(rs)-1].DoneReason != "stop" {
			t.Fatalf("stream %v: %q, %+v", stream, text, calls)
		}
		c := calls[0]
		if c.ID == "" || c.Function.Index != 0 || c.Function.Name != "get_weather" || c.Function.Arguments["city"] != "Paris" ||
			len(c.Function.Arguments["days"].([]any)) != 2 {
			t.Errorf("stream %v: call %+v", stream, c)
		}
		if c := calls[1]; c.Function.Index != 1 || c.Function.Name != "get_time" || c.Function.Arguments == nil || len(c.Function.Arguments) != 0 {
			t.Errorf("stream %v: call %+v", stream, c)
		}
	}
	if !strings.Contains(b.prompts[0], `<tools>{"type": "function", "function": {"name": "get_weather"`) {
		t.Errorf("tools not in the prompt: %q", b.prompts[0])
	}

	// The result goes back with tool_name; arguments are an object (a
	// string holding one is read too).
	for _, args := range []string{`{"city":"Paris"}`, `"{\"city\":\"Paris\"}"`} {
		second := `{"model":"m","stream":false,"messages":[{"role":"user","content":"Weather in Paris?"},
			{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"get_weather","arguments":` + args + `}}]},
			{"role":"tool","content":"18 C","tool_name":"get_weather"}],` + tools + `}`
		rs := ollamaReplies(t, hs.URL+"/api/chat", second, false)
		if text, _, _ := joined(rs); text != "It is 18 °C." {
			t.Errorf("answer %q", text)
		}
		p := b.prompts[len(b.prompts)-1]
		if !strings.Contains(p, `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`) ||
			!strings.Contains(p, "<tool_response>18 C</tool_response>") {
			t.Errorf("history not rendered: %q", p)
		}
	}
}

// TestOllamaThinking: a reasoning block comes back as thinking, apart
// from the content, on both routes; think false reaches the template.
func TestOllamaThinking(t *testing.T) {
	b := newThinkingFake(func(string) []string { return []string{"<think>", "Paris is ", "in France.", "</think>", "\n\nParis."} })
	_, hs := start(t, b)
	for _, c := range []struct{ path, body string }{
		{"/api/chat", `{"model":"m","messages":[{"role":"user","content":"Capital?"}]`},
		{"/api/generate", `{"model":"m","prompt":"Capital?"`},
	} {
		for _, think := range []string{"", `,"think":true`} {
			for _, stream := range []bool{true, false} {
				body := c.body + think + map[bool]string{true: "}", false: `,"stream":false}`}[stream]
				text, thinking, _ := joined(ollamaReplies(t, hs.URL+c.path, body, stream))
				if text != "Paris." || thinking != "Paris is in France." {
					t.Errorf("%s: content %q, thinking %q", body, text, thinking)
				}
			}
		}
		ollamaReplies(t, hs.URL+c.path, c.body+`,"think":false}`, true)
		if p := b.prompts[len(b.prompts)-1]; !strings.HasSuffix(p, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
			t.Errorf("%s think false: prompt %q", c.path, p)
		}
	}
	// A thinking message sent back is the template's reasoning_content.
	ollamaReplies(t, hs.URL+"/api/chat", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b","thinking":"hmm"},{"role":"user","content":"c"}]}`, true)
	if p := b.prompts[len(b.prompts)-1]; !strings.Contains(p, "<|im_start|>assistant\nb<|im_end|>") {
		t.Errorf("prompt %q", p)
	}
}

// TestOllamaBadRequests: every refusal is Ollama's error JSON with the
// status Ollama gives (400 for a request it cannot take); unknown fields
// are ignored.
func TestOllamaBadRequests(t *testing.T) {
	_, hs := start(t, newFake(words("x")), WithMaxBodyBytes(4096))
	plain := newFake(words("x"))
	plain.tmpl = nil
	_, noTemplate := start(t, plain)
	chatMsg := `"messages":[{"role":"user","content":"x"}]`
	cases := []struct {
		name, url, path, body string
		status                int
		msg                   string
	}{
		{"malformed", hs.URL, "/api/chat", `{"messages":[`, 400, "could not parse"},
		{"empty body", hs.URL, "/api/generate", ``, 400, "empty"},
		{"not an object", hs.URL, "/api/chat", `[1]`, 400, "must be a JSON object"},
		{"extra data", hs.URL, "/api/chat", `{} {}`, 400, "extra data"},
		{"stream type", hs.URL, "/api/chat", `{` + chatMsg + `,"stream":"yes"}`, 400, "stream: wrong type"},
		{"messages type", hs.URL, "/api/chat", `{"messages":"hi"}`, 400, "messages: wrong type"},
		{"content type", hs.URL, "/api/chat", `{"messages":[{"role":"user","content":["a"]}]}`, 400, "messages.content: wrong type"},
		{"options type", hs.URL, "/api/chat", `{` + chatMsg + `,"options":[1]}`, 400, "options: wrong type"},
		{"option type", hs.URL, "/api/chat", `{` + chatMsg + `,"options":{"temperature":"hot"}}`, 400, `option "temperature" must be of type float`},
		{"int option type", hs.URL, "/api/generate", `{"prompt":"x","options":{"num_predict":"10"}}`, 400, `option "num_predict" must be of type integer`},
		{"stop type", hs.URL, "/api/generate", `{"prompt":"x","options":{"stop":"x"}}`, 400, `option "stop" must be an array of strings`},
		{"bool option type", hs.URL, "/api/generate", `{"prompt":"x","options":{"use_mmap":1}}`, 400, `option "use_mmap" must be of type boolean`},
		{"empty stop", hs.URL, "/api/generate", `{"prompt":"x","options":{"stop":["a",""]}}`, 400, "must not be empty"},
		{"repeat_penalty", hs.URL, "/api/chat", `{` + chatMsg + `,"options":{"repeat_penalty":0}}`, 400, "options.repeat_penalty must be greater than 0"},
		{"repeat_last_n", hs.URL, "/api/chat", `{` + chatMsg + `,"options":{"repeat_last_n":-2}}`, 400, "options.repeat_last_n must be at least -1"},
		{"images in a message", hs.URL, "/api/chat", `{"messages":[{"role":"user","content":"x","images":["aGk="]}]}`, 400, "images are not supported"},
		{"images", hs.URL, "/api/generate", `{"prompt":"x","images":["aGk="]}`, 400, "images are not supported"},
		{"suffix", hs.URL, "/api/generate", `{"prompt":"x","suffix":"y"}`, 400, "suffix is not supported"},
		{"template", hs.URL, "/api/generate", `{"prompt":"x","template":"{{ .Prompt }}"}`, 400, "template is not supported"},
		{"context", hs.URL, "/api/generate", `{"prompt":"x","context":[1,2]}`, 400, "context is not supported"},
		{"raw with system", hs.URL, "/api/generate", `{"prompt":"x","raw":true,"system":"s"}`, 400, "raw mode does not support system"},
		{"system without a template", noTemplate.URL, "/api/generate", `{"prompt":"x","system":"s"}`, 400, "system needs a chat template"},
		{"chat without a template", noTemplate.URL, "/api/chat", `{` + chatMsg + `}`, 400, "no chat template; use /api/generate with raw"},
		{"tools without a tool syntax", noTemplate.URL, "/api/chat", `{"model":"qwen3",` + chatMsg + `,"tools":[{"type":"function","function":{"name":"f"}}]}`, 400, `"qwen3" does not support tools`},
		{"tool type", hs.URL, "/api/chat", `{` + chatMsg + `,"tools":[{"type":"code","function":{"name":"f"}}]}`, 400, `tools[0].type must be "function"`},
		{"unknown role", hs.URL, "/api/chat", `{"messages":[{"role":"wizard","content":"x"}]}`, 400, `"wizard" is not one of`},
		{"no role", hs.URL, "/api/chat", `{"messages":[{"content":"x"}]}`, 400, "messages[0].role is missing"},
		{"tool calls of a user", hs.URL, "/api/chat", `{"messages":[{"role":"user","content":"x","tool_calls":[{"function":{"name":"f"}}]}]}`, 400, "only assistant messages"},
		{"call without a name", hs.URL, "/api/chat", `{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":{}}}]}]}`, 400, "function.name is missing"},
		{"arguments not an object", hs.URL, "/api/chat", `{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":[1]}}]}]}`, 400, "arguments must be a JSON object"},
		{"format", hs.URL, "/api/chat", `{` + chatMsg + `,"format":"yaml"}`, 400, `invalid format: "yaml"`},
		{"format schema", hs.URL, "/api/generate", `{"prompt":"x","format":{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}}`, 400, `keyword "pattern" is not supported`},
		{"think on a model that does not", hs.URL, "/api/chat", `{"model":"llama3.2",` + chatMsg + `,"think":true}`, 400, `"llama3.2" does not support thinking`},
		{"think level", hs.URL, "/api/generate", `{"prompt":"x","think":"high"}`, 400, `think value "high" is not supported for this model`},
		{"think value", hs.URL, "/api/generate", `{"prompt":"x","think":"lots"}`, 400, `invalid think value: "lots"`},
		{"think type", hs.URL, "/api/generate", `{"prompt":"x","think":1}`, 400, "think must be a boolean or string"},
		{"top_logprobs", hs.URL, "/api/chat", `{` + chatMsg + `,"logprobs":true,"top_logprobs":21}`, 400, "top_logprobs must be between 0 and 20"},
		{"logprobs from a backend without them", hs.URL, "/api/chat", `{` + chatMsg + `,"logprobs":true}`, 400, "logprobs are not supported"},
		{"oversized", hs.URL, "/api/generate", `{"prompt":"` + strings.Repeat("x", 5000) + `"}`, 413, "larger"},
		{"embed input type", hs.URL, "/api/embed", `{"input":[1,2]}`, 400, "invalid input type"},
		{"embed empty string", hs.URL, "/api/embed", `{"input":["a",""]}`, 400, "input[1] is an empty string"},
		{"embed option type", hs.URL, "/api/embed", `{"input":"a","options":{"num_ctx":"big"}}`, 400, `option "num_ctx" must be of type integer`},
		{"embeddings prompt type", hs.URL, "/api/embeddings", `{"prompt":["a"]}`, 400, "prompt: wrong type"},
		{"show body", hs.URL, "/api/show", `{"model":1}`, 400, "model: wrong type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, c.url+c.path, c.body)
			if msg := ollamaErrorJSON(t, resp, body, c.status); !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not say %q", msg, c.msg)
			}
		})
	}
	// Fields Ollama has and this server ignores, and fields nobody has.
	for _, body := range []string{
		`{"model":"m",` + chatMsg + `,"keep_alive":"5m","truncate":false,"shift":false,"_debug_render_only":true,"whatever":[1]}`,
		`{"model":"m",` + chatMsg + `,"keep_alive":-1,"top_logprobs":3}`,
	} {
		if resp, b := post(t, hs.URL+"/api/chat", body); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
}

// TestOllamaEmbeddingOnly: a model that only embeds answers 501 on the
// generation routes, naming /api/embed; a backend that cannot embed
// answers 501 on the embedding routes.
func TestOllamaEmbeddingOnly(t *testing.T) {
	b := newFake(words("x"))
	b.noEmbed = true
	_, hs := start(t, b)
	for _, path := range []string{"/api/embed", "/api/embeddings"} {
		resp, body := post(t, hs.URL+path, `{"model":"m","input":"a","prompt":"a"}`)
		if msg := ollamaErrorJSON(t, resp, body, 501); !strings.Contains(msg, "does not support embeddings") {
			t.Errorf("%s: %q", path, msg)
		}
	}
	_, body := get(t, hs.URL+"/metrics")
	if want := `llm_requests_total{endpoint="/api/embed",code="501"} 1`; !strings.Contains(body, want) {
		t.Errorf("metrics lack %q", want)
	}
}

// TestOllamaEmbed: /api/embed's inputs reach the Backend in order, cut to
// the context by default (truncate), refused with truncate false;
// dimensions cuts as Ollama does; no input is no embeddings.
func TestOllamaEmbed(t *testing.T) {
	long := strings.Repeat("a", 5000) // the fake's context is 4096 bytes
	cases := []struct {
		name, body string
		inputs     []string
		opts       EmbedOptions
		tokens     int
	}{
		{"one", `{"model":"m","input":"hello"}`, []string{"hello"}, EmbedOptions{Truncate: true}, 5},
		{"several", `{"model":"m","input":["a","bc"],"keep_alive":"10m","options":{"num_ctx":512}}`, []string{"a", "bc"}, EmbedOptions{Truncate: true}, 3},
		{"dimensions", `{"model":"m","input":"abc","dimensions":3}`, []string{"abc"}, EmbedOptions{Truncate: true, Dimensions: 3}, 3},
		{"dimensions past the width", `{"model":"m","input":"abc","dimensions":9}`, []string{"abc"}, EmbedOptions{Truncate: true}, 3},
		{"dimensions negative", `{"model":"m","input":"abc","dimensions":-1}`, []string{"abc"}, EmbedOptions{Truncate: true}, 3},
		{"truncated", `{"model":"m","input":["x","` + long + `"]}`, []string{"x", long}, EmbedOptions{Truncate: true}, 1 + 4096},
		{"not truncated", `{"model":"m","input":"abc","truncate":false}`, []string{"abc"}, EmbedOptions{}, 3},
	}
	for _, c := range cases {
		b := newFake(words("x"))
		_, hs := start(t, b)
		resp, body := post(t, hs.URL+"/api/embed", c.body)
		var got struct {
			Model           string
			Embeddings      [][]float32
			TotalDuration   int64 `json:"total_duration"`
			LoadDuration    *int64
			PromptEvalCount int `json:"prompt_eval_count"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, body)
		}
		if got.Model != "m" || len(got.Embeddings) != len(c.inputs) || got.PromptEvalCount != c.tokens || got.TotalDuration <= 0 {
			t.Fatalf("%s: %s", c.name, body)
		}
		for i, text := range c.inputs {
			ids := fakeTokens(EmbedInput{Text: text})
			if len(ids) > 4096 {
				ids = ids[:4096]
			}
			want := fakeEmbedding(ids, c.opts)
			if string(mustJSON(t, got.Embeddings[i])) != string(mustJSON(t, want)) || b.embedOpts[i] != c.opts || b.embeds[i].Text != text {
				t.Errorf("%s: input %d: %v (%+v), want %v (%+v)", c.name, i, got.Embeddings[i], b.embedOpts[i], want, c.opts)
			}
		}
	}

	b := newFake(words("x"))
	_, hs := start(t, b)
	for _, body := range []string{`{"model":"m"}`, `{"model":"m","input":""}`, `{"model":"m","input":[]}`, `{"model":"m","input":null}`} {
		resp, got := post(t, hs.URL+"/api/embed", body)
		if resp.StatusCode != 200 || !strings.Contains(string(got), `"embeddings":[]`) {
			t.Errorf("%s: %d %s", body, resp.StatusCode, got)
		}
	}
	resp, body := post(t, hs.URL+"/api/embed", `{"model":"m","input":["x","`+long+`"],"truncate":false}`)
	if msg := ollamaErrorJSON(t, resp, body, 400); !strings.Contains(msg, "input[1]") || !strings.Contains(msg, "does not fit the context") {
		t.Errorf("truncate false: %q", msg)
	}
	if len(b.embeds) != 2 {
		t.Errorf("the Backend embedded %d inputs, want 2 (none for no input)", len(b.embeds))
	}
}

// TestOllamaEmbeddingsLegacy: /api/embeddings answers the pooled vector
// as it is (Ollama's legacy route does not normalise) and refuses a text
// longer than the context.
func TestOllamaEmbeddingsLegacy(t *testing.T) {
	b := newFake(words("x"))
	_, hs := start(t, b)
	resp, body := post(t, hs.URL+"/api/embeddings", `{"model":"m","prompt":"hello","options":{"temperature":0},"keep_alive":0}`)
	var got struct{ Embedding []float32 }
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	want := fakeEmbedding(fakeTokens(EmbedInput{Text: "hello"}), EmbedOptions{Raw: true})
	if string(mustJSON(t, got.Embedding)) != string(mustJSON(t, want)) || b.embedOpts[0] != (EmbedOptions{Raw: true}) {
		t.Errorf("embedding %v (%+v), want %v", got.Embedding, b.embedOpts[0], want)
	}
	if resp, body := post(t, hs.URL+"/api/embeddings", `{"model":"m"}`); resp.StatusCode != 200 || string(body) != `{"embedding":[]}`+"\n" {
		t.Errorf("no prompt: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, hs.URL+"/api/embeddings", `{"model":"m","prompt":"`+strings.Repeat("a", 5000)+`"}`)
	if msg := ollamaErrorJSON(t, resp, body, 400); !strings.Contains(msg, "does not fit the context") {
		t.Errorf("long prompt: %q", msg)
	}
}

// TestOllamaSlots: the routes share the slots and queue (429 past it, in
// Ollama's error JSON), a client that goes away mid-stream cancels its
// generation within a step, and a draining server answers 503.
func TestOllamaSlots(t *testing.T) {
	b := newFake(func(string) []string { return strings.Split(strings.Repeat("x", 1000), "") })
	b.gate = make(chan struct{}, 1)
	srv, hs := start(t, b, WithQueue(0))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/api/chat", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	b.gate <- struct{}{}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"content":"x"`) {
		t.Fatalf("first line %q: %v", line, err)
	}
	for _, c := range []struct{ path, body string }{
		{"/api/generate", `{"prompt":"y","stream":false}`},
		{"/api/generate", `{"prompt":"y"}`},
		{"/api/embed", `{"input":"y"}`},
	} {
		resp, body := post(t, hs.URL+c.path, c.body)
		if msg := ollamaErrorJSON(t, resp, body, 429); !strings.Contains(msg, "queue is full") || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with the slot busy: %q", c.path, c.body, msg)
		}
	}
	leave(t, srv, b, cancel, resp.Body)

	b.gate = nil
	srv.Shutdown(context.Background())
	for _, path := range []string{"/api/chat", "/api/tags"} {
		resp, body := post(t, hs.URL+path, `{"messages":[{"role":"user","content":"x"}]}`)
		if path == "/api/tags" {
			resp, body = getBytes(t, hs.URL+path)
		}
		if msg := ollamaErrorJSON(t, resp, body, 503); !strings.Contains(msg, "shutting down") {
			t.Errorf("%s while draining: %q", path, msg)
		}
	}
	if resp, _ := get(t, hs.URL+"/"); resp.StatusCode != 503 {
		t.Errorf("GET / while draining: %d", resp.StatusCode)
	}
}
