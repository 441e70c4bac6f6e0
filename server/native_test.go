package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// nativeAnswer is what the tests read of a /completion answer.
type nativeAnswer struct {
	Index              int
	Content            string
	Tokens             []int32
	Stop               bool
	Model              string
	Prompt             string
	TokensPredicted    int            `json:"tokens_predicted"`
	TokensEvaluated    int            `json:"tokens_evaluated"`
	StopType           string         `json:"stop_type"`
	StoppingWord       string         `json:"stopping_word"`
	GenerationSettings map[string]any `json:"generation_settings"`
	Timings            map[string]float64
	Probs              []nativeProb `json:"completion_probabilities"`
	IDSlot             int          `json:"id_slot"`
}

func postNative(t *testing.T, url, body string) nativeAnswer {
	t.Helper()
	resp, b := post(t, url, body)
	var got nativeAnswer
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
		t.Fatalf("%s: status %d: %s", body, resp.StatusCode, b)
	}
	return got
}

// nativeStream posts body and decodes the SSE chunks (no [DONE]: llama-server's
// native stream ends with the chunk whose stop is true).
func nativeStream(t *testing.T, url, body string) []nativeAnswer {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: status %d %s: %s", body, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var out []nativeAnswer
	for _, e := range sseEvents(t, resp.Body) {
		var c nativeAnswer
		if e == "[DONE]" || json.Unmarshal([]byte(e), &c) != nil {
			t.Fatalf("event %q is not a native chunk", e)
		}
		out = append(out, c)
	}
	return out
}

// TestNativeCompletion: /completion (and /completions) answers a text
// prompt in llama-server's JSON — content, stop, stop_type eos, word or
// limit, the stopping word, token counts, timings, generation_settings —
// and several prompts with an array told apart by index.
func TestNativeCompletion(t *testing.T) {
	_, hs := start(t, newFake(words("one two three")))
	for _, tc := range []struct {
		path, body, content, stopType, word string
		predicted                           int
	}{
		{"/completion", `{"prompt":"a b"}`, "one two three", "eos", "", 3},
		{"/completions", `{"prompt":"a b","stop":["two"]}`, "one ", "word", "two", 2},
		{"/completion", `{"prompt":"a b","n_predict":2}`, "one two ", "limit", "", 2},
		{"/completion", `{"prompt":"a b","max_tokens":1,"stop":""}`, "one ", "limit", "", 1},
	} {
		got := postNative(t, hs.URL+tc.path, tc.body)
		if got.Content != tc.content || !got.Stop || got.StopType != tc.stopType || got.StoppingWord != tc.word ||
			got.TokensPredicted != tc.predicted || got.TokensEvaluated != 2 || got.Model != "fake-model" {
			t.Errorf("%s %s: %+v", tc.path, tc.body, got)
		}
		if got.Tokens == nil || len(got.Tokens) != 0 {
			t.Errorf("%s: tokens %v without return_tokens, want []", tc.body, got.Tokens)
		}
		for _, k := range []string{"prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "predicted_per_second", "cache_n"} {
			if _, ok := got.Timings[k]; !ok {
				t.Errorf("%s: timings lacks %s: %v", tc.body, k, got.Timings)
			}
		}
		if got.Timings["predicted_n"] != float64(tc.predicted) {
			t.Errorf("%s: timings %v", tc.body, got.Timings)
		}
	}
	got := postNative(t, hs.URL+"/completion", `{"prompt":"x","temperature":0.5,"top_k":7,"min_p":0.1,"repeat_penalty":1.1,"repeat_last_n":32,"seed":9,"n_predict":5}`)
	gs := got.GenerationSettings
	for k, want := range map[string]float64{"temperature": 0.5, "top_k": 7, "min_p": 0.1, "repeat_penalty": 1.1, "repeat_last_n": 32, "seed": 9, "n_predict": 5, "top_p": 0.95} {
		if gs[k] != want {
			t.Errorf("generation_settings.%s = %v, want %v", k, gs[k], want)
		}
	}

	resp, body := post(t, hs.URL+"/completion", `{"prompt":["a","b c"]}`)
	var many []nativeAnswer
	if resp.StatusCode != 200 || json.Unmarshal(body, &many) != nil || len(many) != 2 || many[0].Index != 0 || many[1].Index != 1 ||
		many[1].TokensEvaluated != 2 || many[0].Content != "one two three" {
		t.Errorf("two prompts: %d %s", resp.StatusCode, body)
	}
}

// TestNativeCompletionParams: the native sampling fields reach the
// Backend's Params, as /v1/completions' mapping makes them.
func TestNativeCompletionParams(t *testing.T) {
	b := newFake(words("x"))
	_, hs := start(t, b)
	postNative(t, hs.URL+"/completion", `{"prompt":"p","temperature":0.25,"top_p":0.5,"top_k":-3,"min_p":0.2,"repeat_penalty":1.3,"repeat_last_n":-1,"presence_penalty":0.5,"frequency_penalty":0.25,"seed":4,"n_predict":9,"json_schema":{"type":"object"}}`)
	p := b.params[len(b.params)-1]
	if *p.Temperature != 0.25 || *p.TopP != 0.5 || *p.TopK != 0 || *p.MinP != 0.2 || *p.RepeatPenalty != 1.3 || *p.RepeatLastN != -1 ||
		*p.PresencePenalty != 0.5 || *p.FrequencyPenalty != 0.25 || *p.Seed != 4 || p.MaxTokens != 9 || !p.JSON || string(p.JSONSchema) != `{"type":"object"}` {
		t.Errorf("params %+v", p)
	}
	postNative(t, hs.URL+"/completion", `{"prompt":"p","n_predict":-1}`)
	if p := b.params[len(b.params)-1]; p.MaxTokens != 0 {
		t.Errorf("n_predict -1: MaxTokens %d, want 0 (until the context is full)", p.MaxTokens)
	}
	// n_predict 0 evaluates the prompt and passes nothing on.
	got := postNative(t, hs.URL+"/completion", `{"prompt":"p","n_predict":0}`)
	if got.Content != "" || got.TokensPredicted != 0 || got.StopType != "limit" {
		t.Errorf("n_predict 0: %+v", got)
	}
}

// TestNativeCompletionStream: a stream is chunks of content with stop
// false, then one with stop true, empty content and the final fields;
// no [DONE].
func TestNativeCompletionStream(t *testing.T) {
	_, hs := startBackend(t, vocabFake{newFake(words("one two three"))})
	chunks := nativeStream(t, hs.URL+"/completion", `{"prompt":"a","stream":true,"stop":["thr"]}`)
	var text strings.Builder
	for i, c := range chunks[:len(chunks)-1] {
		if c.Stop || c.TokensPredicted != i+1 || c.TokensEvaluated != 1 {
			t.Errorf("chunk %d: %+v", i, c)
		}
		text.WriteString(c.Content)
	}
	last := chunks[len(chunks)-1]
	if text.String() != "one two " || !last.Stop || last.Content != "" || last.StopType != "word" || last.StoppingWord != "thr" ||
		last.TokensPredicted != 3 || last.GenerationSettings == nil || last.Timings == nil {
		t.Errorf("text %q, last %+v", text.String(), last)
	}
}

// nativeErr is llama-server's error JSON.
type nativeErr struct {
	Error *struct {
		Code    int
		Message string
		Type    string
		NPrompt *int `json:"n_prompt_tokens"`
		NCtx    *int `json:"n_ctx"`
	}
}

// TestNativeErrors: bad requests get llama-server's error JSON, with the
// status as its code, naming what is wrong.
func TestNativeErrors(t *testing.T) {
	_, hs := startBackend(t, vocabFake{newFake(words("x"))})
	long := strings.Repeat("a", 5000) // 5000 tokens in a context of 4096
	for _, tc := range []struct {
		path, body string
		status     int
		typ, want  string
	}{
		{"/completion", `{"prompt":`, 400, "invalid_request_error", "could not parse"},
		{"/completion", `[1]`, 400, "invalid_request_error", "JSON object"},
		{"/completion", `{"prompt":"a","n_predict":"x"}`, 400, "invalid_request_error", "n_predict"},
		{"/completion", `{"prompt":"a","n_predict":-2}`, 400, "invalid_request_error", "n_predict"},
		{"/completion", `{"prompt":"a","n_probs":101}`, 400, "invalid_request_error", "n_probs must be between 0 and 100"},
		{"/completion", `{"prompt":"a","n_probs":-1}`, 400, "invalid_request_error", "n_probs"},
		{"/completion", `{"prompt":"a","grammar":"root ::= \"x\""}`, 400, "invalid_request_error", "grammar"},
		{"/completion", `{"prompt":"a","json_schema":{"type":"object","patternProperties":{}}}`, 400, "invalid_request_error", "json_schema"},
		{"/completion", `{"prompt":"a","repeat_last_n":-5}`, 400, "invalid_request_error", "repeat_last_n"},
		{"/completion", `{"prompt":"a","min_p":2}`, 400, "invalid_request_error", "min_p"},
		{"/completion", `{"prompt":"a","n":2}`, 400, "invalid_request_error", "n other than 1"},
		{"/completion", `{}`, 400, "invalid_request_error", `"prompt" is required`},
		{"/completion", `{"prompt":[]}`, 400, "invalid_request_error", "must not be empty"},
		{"/completion", `{"prompt":[1,{"a":1}]}`, 400, "invalid_request_error", "prompt[1]"},
		{"/completion", `{"prompt":[1,300]}`, 400, "invalid_request_error", "300 is not a token"},
		{"/completion", `{"prompt":[true]}`, 400, "invalid_request_error", "prompt[0]"},
		{"/completion", `{"prompt":"` + long + `"}`, 400, "exceed_context_size_error", "exceeds the available context size"},
		{"/infill", `{"input_suffix":"b"}`, 400, "invalid_request_error", `"input_prefix" is required`},
		{"/infill", `{"input_prefix":"a"}`, 400, "invalid_request_error", `"input_suffix" is required`},
		{"/infill", `{"input_prefix":"a","input_suffix":"b","prompt":[1]}`, 400, "invalid_request_error", `"prompt" must be a string`},
		{"/infill", `{"input_prefix":"a","input_suffix":"b","input_extra":{}}`, 400, "invalid_request_error", "input_extra"},
		{"/infill", `{"input_prefix":"a","input_suffix":"b","input_extra":[{"filename":"f"}]}`, 400, "invalid_request_error", `"text" field`},
		{"/infill", `{"input_prefix":"a","input_suffix":"b","input_extra":[{"text":"t","filename":3}]}`, 400, "invalid_request_error", `"filename" field`},
		{"/embedding", `{}`, 400, "invalid_request_error", `"input" or "content"`},
		{"/embedding", `{"content":"a","embd_normalize":1}`, 400, "invalid_request_error", "embd_normalize"},
	} {
		resp, body := post(t, hs.URL+tc.path, tc.body)
		var e nativeErr
		if resp.StatusCode != tc.status || json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Code != tc.status ||
			e.Error.Type != tc.typ || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s %.60s: %d %s, want %d %s %q", tc.path, tc.body, resp.StatusCode, body, tc.status, tc.typ, tc.want)
		}
		if tc.typ == "exceed_context_size_error" && (e.Error.NPrompt == nil || *e.Error.NPrompt != 5000 || *e.Error.NCtx != 4096) {
			t.Errorf("context error %s lacks n_prompt_tokens 5000, n_ctx 4096", body)
		}
	}
}

// TestNativeNoVocabulary: a Backend without a vocabulary or FIM tokens
// refuses prompts of token ids and /infill with llama-server's 501.
func TestNativeNoVocabulary(t *testing.T) {
	_, hs := start(t, newFake(words("x")))
	for _, tc := range []struct{ path, body, want string }{
		{"/completion", `{"prompt":[1,2]}`, "prompts of token ids"},
		{"/infill", `{"input_prefix":"a","input_suffix":"b"}`,
			"Infill is not supported by this model: prefix token is missing. suffix token is missing. middle token is missing. "},
	} {
		resp, body := post(t, hs.URL+tc.path, tc.body)
		var e nativeErr
		if resp.StatusCode != 501 || json.Unmarshal(body, &e) != nil || e.Error.Code != 501 || e.Error.Type != "not_supported_error" ||
			!strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: %d %s, want 501 %q", tc.path, resp.StatusCode, body, tc.want)
		}
	}
}

// TestInfillTokens: the infill prompt is llama-server's
// format_prompt_infill token by token: the extra context (repo-level
// tokens when the vocabulary has them, snippet separators when not)
// before BOS and <PRE>prefix prompt<SUF>suffix<MID>, each part cut to its
// share of a batch (the extra to the context beyond one).
func TestInfillTokens(t *testing.T) {
	v := vocabFake{}
	ids := func(s string) []int32 { return fakeTokens(EmbedInput{Text: s}) }
	cat := func(parts ...[]int32) []int32 { return slices.Concat(parts...) }
	one := func(id int32) []int32 { return []int32{id} }
	noRepo := fakeFIM
	noRepo.Rep, noRepo.Sep = -1, -1
	extra := []infillChunk{{Filename: "a.go", Text: "x := 1"}, {Filename: "tmp", Text: "y"}}
	long := strings.Repeat("p", 2000)
	longSuffix := strings.Repeat("s", 600)
	for _, tc := range []struct {
		name           string
		fim            FIMTokens
		prefix, suffix string
		extra          []infillChunk
		prompt         string
		nCtx           int
		want           []int32
	}{
		{"repo-level", fakeFIM, "func f() {", "}", extra, "\treturn", 4096, cat(
			one(fakeFIM.Rep), ids("myproject\n"),
			one(fakeFIM.Sep), ids("a.go\n"), ids("x := 1"),
			one(fakeFIM.Sep), ids("tmp\n"), ids("y"),
			one(fakeFIM.Sep), ids("filename\n"),
			one(fakeFIM.Pre), ids("func f() {"), ids("\treturn"), one(fakeFIM.Suf), ids("}"), one(fakeFIM.Mid))},
		{"snippets", noRepo, "a", "b", extra, "", 4096, cat(
			ids("\n\n--- snippet ---\n\n"), ids("x := 1"), ids("\n\n--- snippet ---\n\n"), ids("y"),
			one(fakeFIM.Pre), ids("a"), one(fakeFIM.Suf), ids("b"), one(fakeFIM.Mid))},
		// The extra keeps its last nCtx-2048+2 tokens (n_predict -1 makes
		// the 2): with a context of one batch, 2 tokens, as llama-server.
		{"small context", fakeFIM, "a", "b", extra, "", 2048, cat(
			ids("e\n"), one(fakeFIM.Pre), ids("a"), one(fakeFIM.Suf), ids("b"), one(fakeFIM.Mid))},
		{"extra cut", noRepo, "a", "b", []infillChunk{{Text: "0123456789"}}, "", 2048 + 3, cat(
			ids("56789"), one(fakeFIM.Pre), ids("a"), one(fakeFIM.Suf), ids("b"), one(fakeFIM.Mid))},
		// The prefix keeps its last 1536 tokens, the suffix its first
		// 512-2-len(prompt).
		{"cut", noRepo, long, longSuffix, nil, "zz", 4096, cat(
			one(fakeFIM.Pre), ids(long[2000-1536:]), ids("zz"), one(fakeFIM.Suf), ids(longSuffix[:512-2-2]), one(fakeFIM.Mid))},
	} {
		got, err := infillTokens(v, tc.fim, false, ids(tc.prefix), ids(tc.suffix), tc.extra, ids(tc.prompt), tc.nCtx)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v %v\nwant %v", tc.name, got, err, tc.want)
		}
	}
}

// TestNativeEmbeddingSlotsMetrics: /embedding answers llama-server's
// native array ({"index", "embedding": [vector]}, unit length unless
// embd_normalize is -1), GET /slots lists the slots, and /metrics counts
// the native endpoints.
func TestNativeEmbeddingSlotsMetrics(t *testing.T) {
	b := newFake(words("x"))
	_, hs := startBackend(t, vocabFake{b}, WithParallel(2))
	resp, body := post(t, hs.URL+"/embedding", `{"content":["ab",[1,2]],"embd_normalize":-1}`)
	var got []struct {
		Index     int
		Embedding [][]float32
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || len(got) != 2 || got[1].Index != 1 ||
		len(got[0].Embedding) != 1 || !slices.Equal(got[0].Embedding[0], fakeEmbedding([]int32{'a', 'b'}, EmbedOptions{Raw: true})) ||
		!slices.Equal(got[1].Embedding[0], fakeEmbedding([]int32{1, 2}, EmbedOptions{Raw: true})) {
		t.Errorf("/embedding: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, hs.URL+"/embeddings", `{"input":"ab"}`)
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || !slices.Equal(got[0].Embedding[0], fakeEmbedding([]int32{'a', 'b'}, EmbedOptions{})) {
		t.Errorf("/embeddings: %d %s", resp.StatusCode, body)
	}

	r, err := http.Get(hs.URL + "/slots")
	if err != nil {
		t.Fatal(err)
	}
	var slots []map[string]any
	err = json.NewDecoder(r.Body).Decode(&slots)
	r.Body.Close()
	if err != nil || len(slots) != 2 || slots[1]["id"] != 1.0 || slots[0]["n_ctx"] != 4096.0 || slots[0]["is_processing"] != false {
		t.Errorf("/slots: %v %v", slots, err)
	}

	postNative(t, hs.URL+"/completion", `{"prompt":"a"}`)
	post(t, hs.URL+"/infill", `{"input_suffix":"b"}`)
	r, err = http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(r.Body)
	r.Body.Close()
	for _, want := range []string{`endpoint="/completion",code="200"} 1`, `endpoint="/infill",code="400"} 1`,
		`endpoint="/embedding",code="200"} 2`, `endpoint="/slots",code="200"} 1`} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, m)
		}
	}
}

// TestNativeDisconnect: a client that leaves a /completion stream (of a
// prompt of token ids, the first of two) cancels its generation within one
// step, the second prompt is not run, and the slot serves the next
// request.
func TestNativeDisconnect(t *testing.T) {
	b := newFake(func(string) []string { return strings.Split(strings.Repeat("x", 1000), "") })
	b.gate = make(chan struct{}, 1)
	srv, hs := startBackend(t, vocabFake{b})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/completion", strings.NewReader(`{"stream":true,"prompt":[[1,2],"x"]}`))
	b.gate <- struct{}{}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.Contains(line, `"stop":false`) {
		t.Fatalf("first chunk %q: %v", line, err)
	}
	leave(t, srv, b, cancel, resp.Body)
	waitFor(t, func() bool {
		srv.metrics.mu.Lock()
		defer srv.metrics.mu.Unlock()
		return srv.metrics.requests[[2]string{"/completion", "200"}] == 1
	})
	if b.mu.Lock(); len(b.prompts) != 1 {
		t.Errorf("prompts run after the client left: %q", b.prompts)
	}
	b.mu.Unlock()
	b.gate = nil
	b.reply = words("ok")
	if got := postNative(t, hs.URL+"/completion", `{"prompt":"x"}`); got.Content != "ok" {
		t.Fatalf("after disconnect: %+v", got)
	}
}

// TestNativeCodeLimits: llama.vim's and llama.vscode's fields act as
// llama-server's — n_indent stops at a line indented less (the answer cut
// before its text), t_max_predict_ms at a line break past the time, both
// with stop_type limit — and response_fields keeps only the fields named,
// a path under its whole name.
func TestNativeCodeLimits(t *testing.T) {
	b := newFake(func(string) []string { return []string{"a\n", "  b\n", "c", "d", "e"} })
	_, hs := start(t, b)
	got := postNative(t, hs.URL+"/completion", `{"prompt":"p","n_indent":2}`)
	if got.Content != "a\n  b\n" || got.StopType != "limit" || got.TokensPredicted != 4 {
		t.Errorf("n_indent: %+v", got)
	}
	if got = postNative(t, hs.URL+"/completion", `{"prompt":"p","n_indent":1}`); got.Content != "a\n  b\n" || got.StopType != "limit" {
		t.Errorf("n_indent 1: %+v", got)
	}
	if got = postNative(t, hs.URL+"/completion", `{"prompt":"p"}`); got.Content != "a\n  b\ncde" || got.StopType != "eos" {
		t.Errorf("no n_indent: %+v", got)
	}

	// Two steps at once, then a pause past the limit before the rest.
	b.reply = func(string) []string { return []string{"a", "b\n", "c\n", "d"} }
	gate := make(chan struct{}, 4)
	b.gate = gate
	go func() {
		gate <- struct{}{}
		gate <- struct{}{}
		time.Sleep(400 * time.Millisecond)
		gate <- struct{}{}
		gate <- struct{}{}
	}()
	got = postNative(t, hs.URL+"/completion", `{"prompt":"p","t_max_predict_ms":200}`)
	if got.Content != "ab\nc\n" || got.StopType != "limit" {
		t.Errorf("t_max_predict_ms: %+v", got)
	}
	b.gate = nil

	resp, body := post(t, hs.URL+"/completion", `{"prompt":"p","response_fields":["content","timings/predicted_n","generation_settings/n_predict","nope","stop/x"]}`)
	var fields map[string]json.RawMessage
	if resp.StatusCode != 200 || json.Unmarshal(body, &fields) != nil || len(fields) != 3 ||
		string(fields["timings/predicted_n"]) != "4" || string(fields["generation_settings/n_predict"]) != "-1" || string(fields["content"]) != `"ab\nc\nd"` {
		t.Errorf("response_fields: %d %s", resp.StatusCode, body)
	}
}

// TestIDSlot: a request's id_slot (llama-server's) runs it on that slot,
// whatever the other slots cache; -1 leaves the choice to the server; an
// id no slot has is a 400 naming id_slot (llama-server would defer the
// task for ever), on the native and the OpenAI routes.
func TestIDSlot(t *testing.T) {
	_, hs := startBackend(t, newFake(words("x")), WithParallel(3))
	for _, tc := range []struct {
		id     int
		prompt string
	}{{2, "other"}, {0, "same prompt"}, {1, "other"}, {0, "other"}, {2, "same prompt"}} {
		got := postNative(t, hs.URL+"/completion", fmt.Sprintf(`{"prompt":%q,"id_slot":%d}`, tc.prompt, tc.id))
		if got.IDSlot != tc.id {
			t.Errorf("id_slot %d ran on slot %d", tc.id, got.IDSlot)
		}
	}
	// Slot 2 ran "same prompt" last: without id_slot its cache wins.
	if got := postNative(t, hs.URL+"/completion", `{"prompt":"same prompt","id_slot":-1}`); got.IDSlot != 2 {
		t.Errorf("id_slot -1 ran on slot %d, want 2 (the cached prompt)", got.IDSlot)
	}
	for _, tc := range []struct{ path, body string }{
		{"/completion", `{"prompt":"a","id_slot":3}`},
		{"/completion", `{"prompt":"a","id_slot":-2}`},
		{"/v1/completions", `{"prompt":"a","id_slot":3}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"id_slot":99}`},
	} {
		resp, body := post(t, hs.URL+tc.path, tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), "id_slot") && !strings.Contains(string(body), "slot ID") {
			t.Errorf("%s %s: %d %s, want a 400 naming id_slot", tc.path, tc.body, resp.StatusCode, body)
		}
	}
	for _, tc := range []struct{ path, body string }{
		{"/v1/completions", `{"prompt":"a","id_slot":1}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"id_slot":0}`},
	} {
		if resp, body := post(t, hs.URL+tc.path, tc.body); resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, resp.StatusCode, body)
		}
	}
}
