package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
)

// glmPieces are a GLM-4.5 reply in pieces that split its markers: its
// reasoning, a line of content and a call with a string and an integer.
var glmPieces = []string{"<thi", "nk>need the wea", "ther</th", "ink>\nLet me check.\n<tool_", "call>get_weather\n<arg_",
	"key>city</arg_key>\n<arg_value>Par", "is</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_v", "alue>\n</tool_call>"}

const glmArgs = `{"city":"Paris","days":3}`

func newGLMFake() *fakeBackend {
	b := newFake(func(string) []string { return glmPieces })
	t, err := chat.Parse(testutil.GLMTemplate)
	if err != nil {
		panic(err)
	}
	b.tmpl = t
	return b
}

// TestToolCallGLM: a model with a GLM-4.5 template (testutil.GLMTemplate)
// reasons in <think> and calls with <arg_key>/<arg_value> pairs; the
// OpenAI endpoint gives reasoning_content and a call with JSON arguments
// typed by the tool's schema, whole and streamed, and the next prompt
// holds the call and its result in an <|observation|> turn.
func TestToolCallGLM(t *testing.T) {
	b := newGLMFake()
	_, hs := start(t, b)
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}}]`
	got, body := postChat(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	c := got.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.ReasoningContent != "need the weather" || c.Message.Content == nil || *c.Message.Content != "Let me check." ||
		len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "get_weather" || c.Message.ToolCalls[0].Function.Arguments != glmArgs {
		t.Errorf("choice %s", body)
	}
	_, chunks := stream[chunkChoice](t, hs.URL+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"Weather?"}],`+tools+`}`)
	reasoning, content, args, _ := joinDeltas(chunks)
	if reasoning != "need the weather" || content != "Let me check." || args != glmArgs {
		t.Errorf("streamed reasoning %q, content %q, arguments %q", reasoning, content, args)
	}
	postChat(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"Weather?"},`+
		`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":3}"}}]},`+
		`{"role":"tool","tool_call_id":"c1","content":"{\"sky\":\"sunny\"}"}],`+tools+`}`)
	prompt := b.lastPrompt()
	if want := "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>" +
		"<|observation|>\n<tool_response>\n{\"sky\":\"sunny\"}\n</tool_response><|assistant|>"; !strings.HasSuffix(prompt, want) {
		t.Errorf("prompt %q does not end with %q", prompt, want)
	}
}

// TestAnthropicGLM: the same GLM reply through Anthropic's Messages API
// is a thinking block, a text block and a tool_use block.
func TestAnthropicGLM(t *testing.T) {
	_, hs := start(t, newGLMFake())
	resp, raw := post(t, hs.URL+"/v1/messages", `{"max_tokens":64,"tools":[{"name":"get_weather","input_schema":{"type":"object",`+
		`"properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}],"messages":[{"role":"user","content":"Weather?"}]}`)
	var m struct {
		Content []struct {
			Type, Thinking, Text, Name string
			Input                      json.RawMessage
		}
		StopReason string `json:"stop_reason"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &m) != nil || len(m.Content) != 3 || m.StopReason != "tool_use" ||
		m.Content[0].Type != "thinking" || m.Content[0].Thinking != "need the weather" || m.Content[1].Type != "text" || m.Content[1].Text != "Let me check." ||
		m.Content[2].Type != "tool_use" || m.Content[2].Name != "get_weather" || string(m.Content[2].Input) != glmArgs {
		t.Errorf("%d %s", resp.StatusCode, raw)
	}
}

// TestOllamaGLM: the same GLM reply through Ollama's /api/chat, whole and
// streamed, is thinking, content and a call; think false reaches the
// template, which asks for no reasoning (/nothink, an empty <think>).
func TestOllamaGLM(t *testing.T) {
	b := newGLMFake()
	_, hs := start(t, b)
	const req = `{"model":"m","messages":[{"role":"user","content":"Weather?"}],"tools":[{"type":"function","function":{"name":"get_weather",` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}}]`
	for _, stream := range []bool{true, false} {
		rs := ollamaReplies(t, hs.URL+"/api/chat", req+map[bool]string{true: "}", false: `,"stream":false}`}[stream], stream)
		text, thinking, calls := joined(rs)
		if text != "Let me check." || thinking != "need the weather" || len(calls) != 1 || calls[0].Function.Name != "get_weather" ||
			calls[0].Function.Arguments["city"] != "Paris" || calls[0].Function.Arguments["days"] != float64(3) {
			t.Errorf("stream %v: content %q, thinking %q, calls %+v", stream, text, thinking, calls)
		}
	}
	ollamaReplies(t, hs.URL+"/api/chat", req+`,"think":false}`, true)
	prompt := b.lastPrompt()
	if !strings.HasSuffix(prompt, "<|user|>\nWeather?/nothink<|assistant|>\n<think></think>") {
		t.Errorf("think false: prompt %q", prompt)
	}
}
