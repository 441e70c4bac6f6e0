package chat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// TestParseKimiMiniMax: Kimi K2's sections and MiniMax-M2's invocations,
// whole and streamed in pieces of 1 to 7 bytes (checkParse), as
// llama.cpp's parsers for them read them: Kimi's functions.NAME:IDX the
// call's ID and the tool between, MiniMax's values typed by the tool's
// schema; a section cut short, that does not parse, or that holds
// anything but calls is content; a call of a tool not offered is a call
// all the same.
func TestParseKimiMiniMax(t *testing.T) {
	kimi := Format{Tools: ToolsKimi, Thinking: true}
	minimax := Format{Tools: ToolsMiniMax, Thinking: true}
	tools := ParseOptions{Tools: true}
	weather := ParseOptions{Tools: true, Defs: []Tool{{Name: "get_weather", Parameters: json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"},"days":{"type":"integer"},"opts":{"type":"object"}}}`)}}}
	const section = "<|tool_calls_section_begin|><|tool_call_begin|>functions.clock:0<|tool_call_argument_begin|>{}<|tool_call_end|>"
	checkParse(t, slices.Concat(
		family(kimi, []listCase{
			{"reasoning, then an answer", tools, "<think>The capital.</think>Paris.",
				Message{Thinking: "The capital.", Content: "Paris."}},
			{"reasoning opened by the prompt", ParseOptions{Tools: true, ThinkingOpen: true}, "hm</think>\nok", Message{Thinking: "hm", Content: "ok"}},
			{"calls with their IDs", tools, "<think>I need the weather.</think>Checking.<|tool_calls_section_begin|>\n" +
				"<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\n" +
				"<|tool_call_begin|>functions.clock:1<|tool_call_argument_begin|>{}<|tool_call_end|>\n<|tool_calls_section_end|>",
				Message{Thinking: "I need the weather.", Content: "Checking.", ToolCalls: []ToolCall{
					{ID: "functions.get_weather:0", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "functions.clock:1", Name: "clock", Arguments: `{}`}}}},
			{"a bare name, an ID made up", tools, "<|tool_calls_section_begin|><|tool_call_begin|>clock<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
				Message{ToolCalls: oneCall("call_1", "clock", `{}`)}},
			{"an ID without its index names the tool as it is", tools,
				"<|tool_calls_section_begin|><|tool_call_begin|>functions.clock:x<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
				Message{ToolCalls: oneCall("call_1", "functions.clock:x", `{}`)}},
			{"a tool not offered", weather, "<|tool_calls_section_begin|><|tool_call_begin|>functions.news:0<|tool_call_argument_begin|>{\"q\": 1}<|tool_call_end|><|tool_calls_section_end|>",
				Message{ToolCalls: oneCall("functions.news:0", "news", `{"q":1}`)}},
			{"a section cut short", tools, section, Message{Content: section}},
			unparsed("a call cut short", tools, "<|tool_calls_section_begin|><|tool_call_begin|>functions.clock:0<|tool_call_argument_begin|>{}<|tool_calls_section_end|>"),
			unparsed("a call without its opener", tools, "<|tool_calls_section_begin|>functions.clock:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"),
			unparsed("bad JSON", tools, "<|tool_calls_section_begin|><|tool_call_begin|>functions.clock:0<|tool_call_argument_begin|>{,}<|tool_call_end|><|tool_calls_section_end|>"),
			{"no tools offered", ParseOptions{}, section + "<|tool_calls_section_end|>", Message{Content: section + "<|tool_calls_section_end|>"}},
			// Kimi K2 Thinking calls as it reasons: the calls are read, the
			// reasoning goes on after them; a section that does not parse
			// stays reasoning, and without tools offered it is reasoning.
			{"calls inside the reasoning", tools, "<think>I need the time." + section + "<|tool_calls_section_end|>\nThen answer.</think>It is noon.",
				Message{Thinking: "I need the time.\nThen answer.", Content: "It is noon.", ToolCalls: oneCall("functions.clock:0", "clock", `{}`)}},
			{"calls inside the reasoning opened by the prompt", ParseOptions{Tools: true, ThinkingOpen: true}, "hm" + section + "<|tool_calls_section_end|>",
				Message{Thinking: "hm", ToolCalls: oneCall("functions.clock:0", "clock", `{}`)}},
			{"bad JSON inside the reasoning", tools, "<think>hm<|tool_calls_section_begin|>x<|tool_calls_section_end|> so</think>ok",
				Message{Thinking: "hm<|tool_calls_section_begin|>x<|tool_calls_section_end|> so", Content: "ok"}},
			{"a section cut short inside the reasoning", tools, "<think>hm" + section, Message{Thinking: "hm" + section}},
			{"no tools offered, reasoning", ParseOptions{}, "<think>hm" + section + "<|tool_calls_section_end|></think>ok",
				Message{Thinking: "hm" + section + "<|tool_calls_section_end|>", Content: "ok"}},
		}),
		family(minimax, []listCase{
			{"reasoning, then an answer", tools, "<think>\nThe capital.\n</think>\n\nParis.",
				Message{Thinking: "The capital.", Content: "Paris."}},
			// zip stays the string "075", days is a number, opts an object.
			{"calls typed by the schema", weather, "<think>need it</think>\nChecking.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n" +
				"<parameter name=\"city\">Paris</parameter>\n<parameter name=\"zip\">075</parameter>\n<parameter name=\"days\">3</parameter>\n" +
				"<parameter name=\"opts\">{\"unit\": \"C\"}</parameter>\n</invoke>\n<invoke name=\"clock\">\n</invoke>\n</minimax:tool_call>",
				Message{Thinking: "need it", Content: "Checking.", ToolCalls: []ToolCall{
					{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris","zip":"075","days":3,"opts":{"unit":"C"}}`}, {ID: "call_2", Name: "clock", Arguments: `{}`}}}},
			{"without schemas, JSON where it parses", tools, "<minimax:tool_call><invoke name=\"f\"><parameter name=\"n\">12</parameter>" +
				"<parameter name=\"s\">\ntwo lines\n</parameter></invoke></minimax:tool_call>",
				Message{ToolCalls: oneCall("call_1", "f", `{"n":12,"s":"\ntwo lines\n"}`)}},
			unparsed("a block cut short", tools, "<minimax:tool_call><invoke name=\"clock\"></invoke>"),
			unparsed("an invocation cut short", tools, "<minimax:tool_call><invoke name=\"clock\"></minimax:tool_call>"),
			unparsed("a parameter cut short", tools, "<minimax:tool_call><invoke name=\"f\"><parameter name=\"x\">1</invoke></minimax:tool_call>"),
			unparsed("the XML form is no MiniMax call", tools, "<minimax:tool_call><function=f></function></minimax:tool_call>"),
			unparsed("no tools offered", ParseOptions{}, "<minimax:tool_call><invoke name=\"clock\"></invoke></minimax:tool_call>"),
		}),
	))
}

// TestRenderMiniMax: testutil.MiniMaxTemplate, this repository's template
// in MiniMax-M2's format, is detected as MiniMax's and renders a call
// that parses back to it, its string value a string and its number a
// number.
func TestRenderMiniMax(t *testing.T) {
	tmpl, err := Parse(testutil.MiniMaxTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if f := tmpl.Format(); f != (Format{Tools: ToolsMiniMax, Thinking: true}) {
		t.Fatalf("format %+v, want MiniMax-M2's", f)
	}
	call := ToolCall{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris","days":2}`}
	out, err := tmpl.Render([]Message{{Role: RoleUser, Content: "Weather?"}, {Role: RoleAssistant, Content: "Checking.", ToolCalls: []ToolCall{call}}},
		RenderOptions{Tools: []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	_, reply, ok := strings.Cut(out, "]~b]ai\n")
	reply, _, _ = strings.Cut(reply, "[e~[")
	got := ParseOutput(reply, tmpl.Format(), ParseOptions{Tools: true, NewID: func() string { return "c1" }})
	if !ok || got.Content != "Checking." || len(got.ToolCalls) != 1 || got.ToolCalls[0] != call {
		t.Errorf("rendered %q, parsed back %+v", out, got)
	}
}
