package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
)

// The tests below drive Ollama's routes over FromModel's Backend of real
// (synthetic) models, against what the library gives the same request.

// finishOf is a library finish as done_reason says it.
func finishOf(u llm.Usage) string {
	return map[llm.Finish]string{llm.FinishEnd: "stop", llm.FinishLength: "length"}[u.Finish]
}

// TestOllamaModelChat: /api/chat's reply, streamed and whole, is
// Session.Chat's with the options mapped to the library's (Ollama's
// defaults where a request sets none), and the counts are its usage.
func TestOllamaModelChat(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	msgs := []llm.Message{{Role: "system", Content: "You tell stories."}, {Role: "user", Content: "Once upon a time"}}
	reqMsgs := `"messages":[{"role":"system","content":"You tell stories."},{"role":"user","content":"Once upon a time"}]`
	cases := []struct {
		options string
		lib     []llm.GenerateOption
	}{
		{`{"temperature":0,"num_predict":12}`, []llm.GenerateOption{llm.Temperature(0), llm.MaxTokens(12)}},
		// Ollama's sampler defaults, not the library's (top_p 0.95, min_p 0.05).
		{`{"seed":3,"num_predict":10}`, []llm.GenerateOption{llm.Seed(3), llm.MaxTokens(10), llm.Temperature(0.8), llm.TopK(40), llm.TopP(0.9), llm.MinP(0)}},
		{`{"temperature":0.9,"top_k":5,"top_p":0.8,"min_p":0.1,"repeat_penalty":1.3,"repeat_last_n":16,"presence_penalty":0.2,"frequency_penalty":0.1,"seed":7,"num_predict":10}`,
			[]llm.GenerateOption{llm.Temperature(0.9), llm.TopK(5), llm.TopP(0.8), llm.MinP(0.1), llm.RepeatPenalty(1.3), llm.PenaltyLastN(16),
				llm.PresencePenalty(0.2), llm.FrequencyPenalty(0.1), llm.Seed(7), llm.MaxTokens(10)}},
	}
	for _, c := range cases {
		want, u := llmtest.ChatReply(t, m, msgs, c.lib...)
		for _, stream := range []bool{true, false} {
			body := fmt.Sprintf(`{"model":"tiny","stream":%v,%s,"options":%s}`, stream, reqMsgs, c.options)
			rs := ollamaReplies(t, hs.URL+"/api/chat", body, stream)
			text, _, _ := joined(rs)
			last := rs[len(rs)-1]
			if text != want || last.DoneReason != finishOf(u) || last.EvalCount != u.GeneratedTokens || last.PromptEvalCount != u.PromptTokens {
				t.Errorf("%s: %q (%s, %+v), want %q (%+v)", body, text, last.DoneReason, last.ollamaMetrics, want, u)
			}
		}
	}
}

// completeText is what Session.Complete makes of prompt, as JSON carries
// it (a random-weight model's invalid UTF-8 reads as U+FFFD).
func completeText(t *testing.T, m *llm.Model, prompt string, opts ...llm.GenerateOption) string {
	t.Helper()
	var b strings.Builder
	for tok, err := range newSession(t, m).Complete(context.Background(), prompt, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(tok.Text)
	}
	var text string
	if err := json.Unmarshal(mustJSON(t, b.String()), &text); err != nil {
		t.Fatal(err)
	}
	return text
}

// TestOllamaModelGenerate: /api/generate renders the prompt as a user
// turn (Session.Chat's reply), or with raw takes it as it is
// (Session.Complete's).
func TestOllamaModelGenerate(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	want, u := llmtest.ChatReply(t, m, []llm.Message{{Role: "user", Content: "Once upon a time"}}, llm.Temperature(0), llm.MaxTokens(9))
	rs := ollamaReplies(t, hs.URL+"/api/generate", `{"model":"tiny","prompt":"Once upon a time","options":{"temperature":0,"num_predict":9}}`, true)
	if text, _, _ := joined(rs); text != want || rs[len(rs)-1].EvalCount != u.GeneratedTokens {
		t.Errorf("templated: %q, want %q", text, want)
	}
	want = completeText(t, m, "Once upon a time", llm.Temperature(0), llm.MaxTokens(9))
	rs = ollamaReplies(t, hs.URL+"/api/generate", `{"model":"tiny","prompt":"Once upon a time","raw":true,"stream":false,"options":{"temperature":0,"num_predict":9}}`, false)
	if text, _, _ := joined(rs); text != want || rs[0].DoneReason != "length" || rs[0].EvalCount != 9 {
		t.Errorf("raw: %q (%+v), want %q", text, rs[0], want)
	}
}

// TestOllamaModelLogprobs: logprobs come with the tokens, one entry a
// token, each with the top_logprobs asked for.
func TestOllamaModelLogprobs(t *testing.T) {
	_, _, hs := startModel(t, 1, nil)
	for _, stream := range []bool{true, false} {
		rs := ollamaReplies(t, hs.URL+"/api/chat", fmt.Sprintf(`{"stream":%v,"messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":2,"options":{"temperature":0,"num_predict":6}}`, stream), stream)
		var lps []apiLogprob
		for _, r := range rs {
			lps = append(lps, r.Logprobs...)
		}
		if n := rs[len(rs)-1].EvalCount; len(lps) != n || n == 0 {
			t.Fatalf("stream %v: %d logprobs for %d tokens", stream, len(lps), n)
		}
		for _, lp := range lps {
			if len(lp.TopLogprobs) != 2 || lp.TopLogprobs[0].Logprob != lp.Logprob || lp.Logprob > 0 {
				t.Errorf("stream %v: %+v", stream, lp)
			}
		}
	}
}

// TestOllamaModelEmbed: /api/embed's vectors are Session.EmbedBatch's; a
// text longer than the context is cut by default (Session.Embed with
// WithTruncate) and refused with truncate false; the legacy route's
// vector is the pooled one, not normalised (WithNormalize(false)).
func TestOllamaModelEmbed(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	checkOllamaEmbed(t, m, hs.URL)
}

func checkOllamaEmbed(t *testing.T, m *llm.Model, url string) {
	t.Helper()
	ctx := context.Background()
	s := newSession(t, m)
	texts := []string{"The quick brown fox jumps over the lazy dog.", "a"}
	ids, tokens := llmtest.TokenizeAll(t, m, texts...)
	want, err := s.EmbedBatch(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	type reply struct {
		Embeddings      [][]float32
		PromptEvalCount int `json:"prompt_eval_count"`
	}
	embed := func(body string) reply {
		t.Helper()
		resp, b := post(t, url+"/api/embed", body)
		var got reply
		if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		return got
	}
	got := embed(fmt.Sprintf(`{"model":"m","input":%s}`, mustJSON(t, texts)))
	if got.PromptEvalCount != tokens || len(got.Embeddings) != 2 || !slices.Equal(got.Embeddings[0], want[0]) || !slices.Equal(got.Embeddings[1], want[1]) {
		t.Errorf("embeddings differ from EmbedBatch's, or %d tokens (want %d)", got.PromptEvalCount, tokens)
	}

	long := strings.Repeat("the dog ", m.Info().Context)
	cut, err := s.Embed(ctx, long, llm.WithTruncate(true))
	if err != nil {
		t.Fatal(err)
	}
	got = embed(fmt.Sprintf(`{"input":%q}`, long))
	if !slices.Equal(got.Embeddings[0], cut) || got.PromptEvalCount != s.Context() {
		t.Errorf("truncated: differs from Embed with WithTruncate, or %d tokens (want the context, %d)", got.PromptEvalCount, s.Context())
	}
	resp, b := post(t, url+"/api/embed", fmt.Sprintf(`{"input":%q,"truncate":false}`, long))
	if msg := ollamaErrorJSON(t, resp, b, 400); !strings.Contains(msg, "does not fit the context") {
		t.Errorf("truncate false: %q", msg)
	}

	raw, err := s.Embed(ctx, texts[0], llm.WithNormalize(false))
	if err != nil {
		t.Fatal(err)
	}
	resp, b = post(t, url+"/api/embeddings", fmt.Sprintf(`{"model":"m","prompt":%q}`, texts[0]))
	var legacy struct{ Embedding []float32 }
	if resp.StatusCode != 200 || json.Unmarshal(b, &legacy) != nil || !slices.Equal(legacy.Embedding, raw) {
		t.Errorf("legacy: %d, differs from Embed with WithNormalize(false)", resp.StatusCode)
	}
	if norm := dot(raw, raw); norm > 0.99 && norm < 1.01 {
		t.Errorf("the pooled vector has length %g: the test cannot tell it from a normalised one", norm)
	}
}

// TestOllamaModelEncoder: an encoder embeds on /api/embed, says only
// "embedding" in /api/show (so that Ollama's CLI embeds with it), and its
// generation routes answer 501 naming /api/embed.
func TestOllamaModelEncoder(t *testing.T) {
	m := loadTinyBert(t)
	_, hs := serveModel(t, m, "tiny-bert", 1, nil)
	checkOllamaEmbed(t, m, hs.URL)
	for _, c := range []struct{ path, body, what string }{
		{"/api/chat", `{"model":"bert","messages":[{"role":"user","content":"Hi"}]}`, `"bert" does not support chat`},
		{"/api/generate", `{"model":"bert","prompt":"Hi"}`, `"bert" does not support generate`},
	} {
		resp, body := post(t, hs.URL+c.path, c.body)
		if msg := ollamaErrorJSON(t, resp, body, 501); !strings.Contains(msg, c.what) || !strings.Contains(msg, "/api/embed") {
			t.Errorf("%s: %q", c.path, msg)
		}
	}
	resp, body := post(t, hs.URL+"/api/show", `{"model":"bert"}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"capabilities":["embedding"]`) || !strings.Contains(string(body), `"family":"bert"`) {
		t.Errorf("show: %s", body)
	}
}

// TestOllamaModelQwen3: a real model's file (from the test data; skipped
// without it): /api/show says what the file is and that its template
// calls tools and thinks, and think false reaches the template (which
// then closes the reasoning block in the prompt).
func TestOllamaModelQwen3(t *testing.T) {
	m, hs := startQwen3(t)
	resp, body := post(t, hs.URL+"/api/show", `{"model":"qwen3:0.6b"}`)
	var show struct {
		Details struct {
			Family            string
			ParameterSize     string `json:"parameter_size"`
			QuantizationLevel string `json:"quantization_level"`
		}
		Capabilities []string
		ModelInfo    map[string]any `json:"model_info"`
	}
	info := m.Info()
	if resp.StatusCode != 200 || json.Unmarshal(body, &show) != nil {
		t.Fatalf("show: %d %s", resp.StatusCode, body)
	}
	if d := show.Details; d.Family != "qwen3" || d.ParameterSize != parameterSize(info.Parameters) || d.QuantizationLevel != info.FileType ||
		!slices.Equal(show.Capabilities, []string{"completion", "tools", "thinking"}) || show.ModelInfo["qwen3.context_length"] != 256.0 {
		t.Errorf("show: %s", body)
	}
	count := func(think string) int {
		rs := ollamaReplies(t, hs.URL+"/api/chat", `{"model":"qwen3","stream":false,"messages":[{"role":"user","content":"hi"}],"options":{"num_predict":1}`+think+`}`, false)
		return rs[0].PromptEvalCount
	}
	if on, off := count(""), count(`,"think":false`); off <= on {
		t.Errorf("prompt tokens with think false %d, by default %d: want the closed reasoning block's more", off, on)
	}
}

func TestParameterSize(t *testing.T) {
	for n, want := range map[int64]string{0: "", 999: "999", 1500: "2K", 494_030_000: "494.03M", 7_000_000: "7M", 1_236_000_000: "1.2B", 8_000_000_000: "8B"} {
		if got := parameterSize(n); got != want {
			t.Errorf("parameterSize(%d) = %q, want %q", n, got, want)
		}
	}
}
