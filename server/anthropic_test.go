package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/llmtest"
)

// weatherReply answers a weather question with a Hermes tool call, a tool
// result with a sentence, anything else with a greeting.
func weatherReply(prompt string) []string {
	switch {
	case strings.Contains(prompt, "<tool_response>"):
		return []string{"It is ", "sunny in ", "Paris."}
	case strings.Contains(prompt, "<tools>"):
		return []string{"<tool_call>", `{"name": "get_weather", "arguments": {"city": "Paris"}}`, "</tool_call>"}
	}
	return []string{"Hello", ", ", "world", "!"}
}

const anthropicTools = `"tools":[{"name":"get_weather","description":"Weather now","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]`

// TestAnthropicMessages: Anthropic's Messages API, whole — text, the stop
// reasons (end_turn, max_tokens, stop_sequence with the sequence), the
// system prompt reaching the template, a tool_use block and the turn
// answering its tool_result — and its errors in Anthropic's shape.
func TestAnthropicMessages(t *testing.T) {
	b := newFake(weatherReply)
	_, hs := start(t, b)
	type message struct {
		ID, Type, Role, Model string
		Content               []struct {
			Type, Text, ID, Name string
			Input                json.RawMessage
		}
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
		Usage        struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	send := func(body string) message {
		t.Helper()
		resp, raw := post(t, hs.URL+"/v1/messages", body)
		var m message
		if resp.StatusCode != 200 || json.Unmarshal(raw, &m) != nil {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, raw)
		}
		return m
	}
	m := send(`{"model":"m","max_tokens":64,"system":"Be nice.","messages":[{"role":"user","content":"Hi"}]}`)
	if m.Type != "message" || m.Role != "assistant" || len(m.Content) != 1 || m.Content[0].Text != "Hello, world!" ||
		m.StopReason != "end_turn" || m.StopSequence != nil || m.Usage.OutputTokens != 4 || !strings.HasPrefix(m.ID, "msg_") {
		t.Errorf("message %+v", m)
	}
	if p := b.prompts[len(b.prompts)-1]; !strings.Contains(p, "Be nice.") {
		t.Errorf("the system prompt is not in the prompt %q", p)
	}
	if m := send(`{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`); m.StopReason != "max_tokens" || m.Content[0].Text != "Hello, " {
		t.Errorf("max_tokens: %+v", m)
	}
	if m := send(`{"max_tokens":64,"stop_sequences":["world"],"messages":[{"role":"user","content":"Hi"}]}`); m.StopReason != "stop_sequence" ||
		m.StopSequence == nil || *m.StopSequence != "world" || m.Content[0].Text != "Hello, " {
		t.Errorf("stop sequence: %+v", m)
	}

	m = send(`{"max_tokens":64,` + anthropicTools + `,"messages":[{"role":"user","content":"Weather in Paris?"}]}`)
	if m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Type != "tool_use" || m.Content[0].Name != "get_weather" ||
		string(m.Content[0].Input) != `{"city":"Paris"}` || !strings.HasPrefix(m.Content[0].ID, "toolu_") {
		t.Fatalf("tool use: %+v", m)
	}
	use, _ := json.Marshal(m.Content[0])
	m = send(`{"max_tokens":64,` + anthropicTools + `,"messages":[{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":[` + string(use) +
		`]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + m.Content[0].ID + `","content":"18 C, sunny"}]}]}`)
	if m.StopReason != "end_turn" || m.Content[0].Text != "It is sunny in Paris." {
		t.Errorf("after the tool result: %+v", m)
	}
	if p := b.prompts[len(b.prompts)-1]; !strings.Contains(p, "18 C, sunny") || !strings.Contains(p, `"get_weather"`) {
		t.Errorf("the call and its result are not in the prompt %q", p)
	}

	for _, tc := range []struct{ body, mention string }{
		{`{"messages":[{"role":"user","content":"Hi"}]}`, "max_tokens"},
		{`{"max_tokens":8,"messages":[]}`, "messages"},
		{`{"max_tokens":8,"messages":[{"role":"system","content":"x"}]}`, "messages[0].role"},
		{`{"max_tokens":8,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`, "messages[0].content[0].type"},
		{`{"max_tokens":8,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"x"}]}`, "tools[0].type"},
		{`{"max_tokens":8,"tool_choice":{"type":"maybe"},"messages":[{"role":"user","content":"x"}]}`, "tool_choice.type"},
	} {
		resp, raw := post(t, hs.URL+"/v1/messages", tc.body)
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if resp.StatusCode != 400 || json.Unmarshal(raw, &e) != nil || e.Type != "error" || e.Error.Type != "invalid_request_error" ||
			!strings.Contains(e.Error.Message, tc.mention) {
			t.Errorf("%s: %d %s, want an invalid_request_error naming %s", tc.body, resp.StatusCode, raw, tc.mention)
		}
	}
}

// TestAnthropicStream: the streamed events — message_start, ping, each
// block's start, deltas and stop (text_delta, input_json_delta),
// message_delta with the stop reason and usage, message_stop — named as
// Anthropic's SDKs read them.
func TestAnthropicStream(t *testing.T) {
	_, hs := start(t, newFake(weatherReply))
	for _, tc := range []struct {
		name, body string
		want       []string
		reason     string
		content    string
	}{
		{"text", `{"max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
			[]string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			"end_turn", "Hello, world!"},
		{"tool", `{"max_tokens":64,"stream":true,` + anthropicTools + `,"messages":[{"role":"user","content":"Weather?"}]}`,
			[]string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			"tool_use", `{"city":"Paris"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(hs.URL+"/v1/messages", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var names []string
			var text, reason string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				name, ok := strings.CutPrefix(sc.Text(), "event: ")
				if !ok {
					continue
				}
				sc.Scan()
				data, _ := strings.CutPrefix(sc.Text(), "data: ")
				var ev struct {
					Type  string
					Delta struct {
						Text        string
						PartialJSON string `json:"partial_json"`
						StopReason  string `json:"stop_reason"`
					}
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Type != name {
					t.Fatalf("event %s: data %s", name, data)
				}
				if n := len(names); n == 0 || names[n-1] != name {
					names = append(names, name)
				}
				text += ev.Delta.Text + ev.Delta.PartialJSON
				if ev.Delta.StopReason != "" {
					reason = ev.Delta.StopReason
				}
			}
			if strings.Join(names, " ") != strings.Join(tc.want, " ") || text != tc.content || reason != tc.reason {
				t.Errorf("events %v, content %q, stop %q; want %v, %q, %q", names, text, reason, tc.want, tc.content, tc.reason)
			}
		})
	}
}

// TestAnthropicModel: on FromModel's Backend the Messages API answers what
// Session.Chat answers, and count_tokens counts the prompt's tokens.
func TestAnthropicModel(t *testing.T) {
	m, _, hs := startModel(t, 1, nil)
	msgs := []llm.Message{{Role: "system", Content: "You tell stories."}, {Role: "user", Content: "Once upon a time"}}
	want, u := llmtest.ChatReply(t, m, msgs, llm.MaxTokens(12), llm.Temperature(0))
	body := `{"model":"tiny-chat","max_tokens":12,"temperature":0,"system":"You tell stories.","messages":[{"role":"user","content":"Once upon a time"}]}`
	resp, raw := post(t, hs.URL+"/v1/messages", body)
	var got struct {
		Content []struct{ Text string }
		Usage   struct {
			InputTokens int `json:"input_tokens"`
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &got) != nil || len(got.Content) != 1 || got.Content[0].Text != want {
		t.Errorf("%d %s, want text %q", resp.StatusCode, raw, want)
	}
	resp, raw = post(t, hs.URL+"/v1/messages/count_tokens", body)
	var count struct {
		InputTokens int `json:"input_tokens"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &count) != nil || count.InputTokens != u.PromptTokens || got.Usage.InputTokens != u.PromptTokens {
		t.Errorf("count_tokens %d %s, usage %d; want %d", resp.StatusCode, raw, got.Usage.InputTokens, u.PromptTokens)
	}
}

// TestAnthropicThinking: a reasoning (harmony) model's analysis comes as a
// thinking block before the tool_use block, and a thinking block sent back
// in the assistant turn reaches the template as that turn's reasoning.
func TestAnthropicThinking(t *testing.T) {
	b := newHarmonyFake(harmonyReply)
	_, hs := start(t, b)
	resp, raw := post(t, hs.URL+"/v1/messages", `{"max_tokens":64,`+anthropicTools+`,"messages":[{"role":"user","content":"Weather in Paris?"}]}`)
	var m struct {
		Content []struct {
			Type, Thinking, Name string
			ID                   string
		}
		StopReason string `json:"stop_reason"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &m) != nil || len(m.Content) != 2 || m.Content[0].Type != "thinking" ||
		m.Content[0].Thinking != "The user wants the weather." || m.Content[1].Type != "tool_use" || m.StopReason != "tool_use" {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	resp, raw = post(t, hs.URL+"/v1/messages", `{"max_tokens":64,`+anthropicTools+`,"messages":[{"role":"user","content":"Weather in Paris?"},`+
		`{"role":"assistant","content":[{"type":"thinking","thinking":"Need the tool.","signature":""},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"18 C"}]}]}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if p := b.prompts[len(b.prompts)-1]; !strings.Contains(p, "<|channel|>analysis<|message|>Need the tool.<|end|>") || !strings.Contains(p, `"18 C"`) {
		t.Errorf("prompt %q: want the turn's reasoning before its call, and the result", p)
	}
}
