package chat

import (
	"encoding/json"
	"testing"
)

func TestParseSeed(t *testing.T) {
	s := Format{Tools: ToolsSeed, Thinking: true}
	weather := ParseOptions{Tools: true, Defs: []Tool{{Name: "get_weather", Parameters: json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"},"days":{"type":"integer"}}}`)}}}
	checkParse(t, []parseCase{
		{"plain", "Hello.", s, ParseOptions{}, Message{Content: "Hello."}},
		{"thinking", "<seed:think>Let me think.</seed:think>The answer.", s, ParseOptions{},
			Message{Thinking: "Let me think.", Content: "The answer."}},
		{"thinking opened by prompt", "hm</seed:think>\nok", s, ParseOptions{ThinkingOpen: true},
			Message{Thinking: "hm", Content: "ok"}},
		// Values typed by the tool's schema: zip stays the string "075".
		{"call", "<seed:think>need a tool</seed:think>\nChecking.\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n<parameter=zip>075</parameter>\n<parameter=days>3</parameter>\n</function>\n</seed:tool_call>", s, weather,
			Message{Thinking: "need a tool", Content: "Checking.", ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris","zip":"075","days":3}`}}}},
		{"two calls, lines in a value", "<seed:tool_call>\n<function=a>\n<parameter=note>two\nlines</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=b>\n</function>\n</seed:tool_call>", s, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: `{"note":"two\nlines"}`}, {ID: "call_2", Name: "b", Arguments: `{}`}}}},
		{"json body is no seed call", "<seed:tool_call>{\"name\": \"a\"}</seed:tool_call>", s, ParseOptions{Tools: true},
			Message{Content: "<seed:tool_call>{\"name\": \"a\"}</seed:tool_call>"}},
		{"no tools offered", "<seed:tool_call>\n<function=a>\n</function>\n</seed:tool_call>", s, ParseOptions{},
			Message{Content: "<seed:tool_call>\n<function=a>\n</function>\n</seed:tool_call>"}},
	})
}

// TestRenderSeedThinkingOff: a Seed-OSS prompt that ends by opening the
// reasoning block gets it closed when thinking is off, as llama.cpp does.
func TestRenderSeedThinkingOff(t *testing.T) {
	const src = "{%- set x = '<seed:tool_call>' -%}{{ messages[0].content }}<seed:bos>assistant\n<seed:think>"
	off, on := false, true
	for _, c := range []struct {
		thinking *bool
		want     string
	}{{&off, "hi<seed:bos>assistant\n<seed:think></seed:think>"}, {&on, "hi<seed:bos>assistant\n<seed:think>"}, {nil, "hi<seed:bos>assistant\n<seed:think>"}} {
		got, err := Render(src, []Message{{Role: RoleUser, Content: "hi"}}, RenderOptions{AddGenerationPrompt: true, EnableThinking: c.thinking})
		if err != nil || got != c.want {
			t.Errorf("thinking %v: %q, %v; want %q", c.thinking, got, err, c.want)
		}
	}
}
