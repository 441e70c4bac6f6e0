package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
)

// TestModelResponses: /v1/responses on FromModel's Backend answers what a
// chat turn of the same conversation answers (instructions as the system
// message), with its usage.
func TestModelResponses(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	msgs := []llm.Message{{Role: "system", Content: "You tell stories."}, {Role: "user", Content: "Once upon a time"}}
	want, u := llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0))
	resp, body := post(t, hs.URL+"/v1/responses", `{"model":"tiny-chat","instructions":"You tell stories.","input":"Once upon a time","max_output_tokens":12,"temperature":0}`)
	var got struct {
		Status string
		Output []struct {
			Type    string
			Content []struct{ Text string }
		}
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || len(got.Output) != 1 || len(got.Output[0].Content) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	// JSON carries invalid UTF-8 as U+FFFD, as ChatReply's want does.
	if text := got.Output[0].Content[0].Text; text != want {
		t.Errorf("output %q, want %q", text, want)
	}
	status := map[llm.Finish]string{llm.FinishEnd: "completed", llm.FinishLength: "incomplete"}[u.Finish]
	if got.Status != status || got.Usage.InputTokens != u.PromptTokens || got.Usage.OutputTokens != u.GeneratedTokens {
		t.Errorf("status %q usage %+v, want %q, %d and %d tokens", got.Status, got.Usage, status, u.PromptTokens, u.GeneratedTokens)
	}
}

// TestResponsesRefusals: what the Responses API asks that this server does
// not do, or a malformed input, is a 400 naming the field.
func TestResponsesRefusals(t *testing.T) {
	_, hs := start(t, newFake(words("hi")))
	for _, tc := range []struct{ body, param string }{
		{`{}`, "input"},
		{`{"input":[]}`, "input"},
		{`{"input":[{"role":"robot","content":"x"}]}`, "input[0].role"},
		{`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"u"}]}]}`, "input[0].content[0].type"},
		{`{"input":[{"type":"web_search_call"}]}`, "input[0].type"},
		{`{"input":[{"type":"function_call","call_id":"1"}]}`, "input[0].name"},
		{`{"input":"x","tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{`{"input":"x","previous_response_id":"resp_1"}`, "previous_response_id"},
		{`{"input":"x","max_output_tokens":0}`, "max_output_tokens"},
		{`{"input":"x","text":{"format":{"type":"json_schema"}}}`, "text.format.schema"},
		{`{"input":"x","tool_choice":{"type":"mcp"}}`, "tool_choice"},
	} {
		resp, body := post(t, hs.URL+"/v1/responses", tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.body, resp.StatusCode, body, tc.param)
		}
	}
}
