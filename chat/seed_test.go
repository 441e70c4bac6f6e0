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

// TestRenderThinkingOff: a Seed-OSS prompt that ends by opening the
// reasoning block, or a MiniMax-M2 one that opens it on a line of its
// own, gets it closed (MiniMax's and a blank line) when thinking is off,
// as llama.cpp does; PromptOpensThinking sees it open otherwise.
func TestRenderThinkingOff(t *testing.T) {
	off, on := false, true
	for _, c := range []struct {
		name, src    string
		open, closed string // the prompt with thinking on (or by default), and off
	}{
		{"seed", "{%- set x = '<seed:tool_call>' -%}{{ messages[0].content }}<seed:bos>assistant\n<seed:think>",
			"hi<seed:bos>assistant\n<seed:think>", "hi<seed:bos>assistant\n<seed:think></seed:think>"},
		{"minimax-m2", "]~!b[]~b]user\n{{ messages[0].content }}[e~[\n]~b]ai\n{{ '<think>\\n' }}",
			"]~!b[]~b]user\nhi[e~[\n]~b]ai\n<think>\n", "]~!b[]~b]user\nhi[e~[\n]~b]ai\n<think>\n</think>\n\n"},
	} {
		for _, thinking := range []*bool{&off, &on, nil} {
			want := c.open
			if thinking == &off {
				want = c.closed
			}
			got, err := Render(c.src, []Message{{Role: RoleUser, Content: "hi"}}, RenderOptions{AddGenerationPrompt: true, EnableThinking: thinking})
			if err != nil || got != want || PromptOpensThinking(got) != (want == c.open) {
				t.Errorf("%s, thinking %v: %q, %v; want %q", c.name, thinking, got, err, want)
			}
		}
	}
}
