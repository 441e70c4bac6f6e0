package chat

import (
	"encoding/json"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// glmWeather offers a tool whose parameters have every schema type, so
// that a call's values are typed by it.
var glmWeather = ParseOptions{Tools: true, Defs: []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{
	"city":{"type":"string"},"zip":{"type":"string"},"days":{"type":"integer"},"temp":{"type":"number"},"metric":{"type":"boolean"},
	"opts":{"type":"object"},"tags":{"type":"array"},"unit":{"type":"string","enum":["c","f"]}}}`)}}}

// TestParseGLM: GLM-4.5's output, whole and streamed in pieces of 1 to 7
// bytes (checkParse), in GLM-4.5/4.6's layout (a part a line) and
// GLM-4.7's (back to back), as llama.cpp's GLM 4.5 parser reads it.
func TestParseGLM(t *testing.T) {
	g := Format{Tools: ToolsGLM, Thinking: true}
	tools := ParseOptions{Tools: true}
	call := func(name, args string) []ToolCall { return []ToolCall{{ID: "call_1", Name: name, Arguments: args}} }
	checkParse(t, []parseCase{
		{"content only", "Hello, world!\nWhat's up?", g, tools, Message{Content: "Hello, world!\nWhat's up?"}},
		{"reasoning", "\n<think>I'm\nthinking</think>\nHello, world!", g, tools,
			Message{Thinking: "I'm\nthinking", Content: "Hello, world!"}},
		{"reasoning opened by the prompt (GLM-4.7-Flash)", "I'm\nthinking</think>Hello, world!", g, ParseOptions{ThinkingOpen: true},
			Message{Thinking: "I'm\nthinking", Content: "Hello, world!"}},
		{"empty reasoning (/nothink)", "<think></think>\nHi.", g, tools, Message{Content: "Hi."}},
		{"the line after the prompt's <think></think> (thinking off)", "\n\nHi.", g, ParseOptions{}, Message{Content: "Hi."}},
		{"one call, GLM-4.6's layout", "<tool_call>special_function\n<arg_key>arg1</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", g, tools,
			Message{ToolCalls: call("special_function", `{"arg1":1}`)}},
		{"one call, GLM-4.7's layout, after reasoning", "I'm\nthinking</think><tool_call>special_function<arg_key>arg1</arg_key><arg_value>1</arg_value></tool_call>",
			g, ParseOptions{Tools: true, ThinkingOpen: true}, Message{Thinking: "I'm\nthinking", ToolCalls: call("special_function", `{"arg1":1}`)}},
		{"two calls", "<tool_call>special_function<arg_key>arg1</arg_key><arg_value>1</arg_value></tool_call>" +
			"<tool_call>special_function_with_opt<arg_key>arg1</arg_key><arg_value>1</arg_value><arg_key>arg2</arg_key><arg_value>2</arg_value></tool_call>", g, tools,
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "special_function", Arguments: `{"arg1":1}`},
				{ID: "call_2", Name: "special_function_with_opt", Arguments: `{"arg1":1,"arg2":2}`}}}},
		{"content, then a call without arguments", "Let me check.\n<tool_call>clock\n</tool_call>\n", g, tools,
			Message{Content: "Let me check.", ToolCalls: call("clock", `{}`)}},
		// A string parameter's value is its text, whatever it looks like
		// (zip "075", city "12"); the others are JSON; an enum is a string.
		{"values typed by the schema", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>12</arg_value>\n" +
			"<arg_key>zip</arg_key>\n<arg_value>075</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n" +
			"<arg_key>temp</arg_key>\n<arg_value>-1.5e2</arg_value>\n<arg_key>metric</arg_key>\n<arg_value>true</arg_value>\n" +
			"<arg_key>opts</arg_key>\n<arg_value>{\"a\": [1, null]}</arg_value>\n<arg_key>tags</arg_key>\n<arg_value>[\"x\"]</arg_value>\n" +
			"<arg_key>unit</arg_key>\n<arg_value>c</arg_value>\n</tool_call>", g, glmWeather,
			Message{ToolCalls: call("get_weather", `{"city":"12","zip":"075","days":3,"temp":-1.5e2,"metric":true,"opts":{"a":[1,null]},"tags":["x"],"unit":"c"}`)}},
		// A value's text is kept as it is: lines, spaces, tags, even a
		// </tool_call>; a key given twice takes the later value.
		{"raw text values", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value> two\nlines <b></tool_call></arg_value>\n" +
			"<arg_key>zip</arg_key><arg_value>1</arg_value><arg_key>zip</arg_key><arg_value>2</arg_value>\n</tool_call>", g, glmWeather,
			Message{ToolCalls: call("get_weather", `{"city":" two\nlines <b></tool_call>","zip":"2"}`)}},
		{"untyped values: JSON when they parse", "<tool_call>f<arg_key>a</arg_key><arg_value>{\"x\":1}</arg_value><arg_key>b</arg_key><arg_value>Paris</arg_value></tool_call>", g, tools,
			Message{ToolCalls: call("f", `{"a":{"x":1},"b":"Paris"}`)}},
		{"a call cut before </tool_call>", "<tool_call>clock<arg_key>tz</arg_key><arg_value>UTC</arg_value>", g, tools,
			Message{ToolCalls: call("clock", `{"tz":"UTC"}`)}},
		{"a call cut inside a value", "<tool_call>clock<arg_key>tz</arg_key><arg_value>UT", g, tools,
			Message{Content: "<tool_call>clock<arg_key>tz</arg_key><arg_value>UT"}},
		{"text between the pairs", "<tool_call>f<arg_key>a</arg_key>x<arg_value>1</arg_value></tool_call>", g, tools,
			Message{Content: "<tool_call>f<arg_key>a</arg_key>x<arg_value>1</arg_value></tool_call>"}},
		{"hermes' JSON is no GLM call", `<tool_call>{"name": "f", "arguments": {}}</tool_call>`, g, tools,
			Message{Content: `<tool_call>{"name": "f", "arguments": {}}</tool_call>`}},
		{"no tools offered", "<tool_call>clock\n</tool_call>", g, ParseOptions{}, Message{Content: "<tool_call>clock\n</tool_call>"}},
		// GLM-4-0414 writes a call as its name and a JSON line; llama.cpp
		// has no format for it, and neither does this package: content.
		{"GLM-4-0414's call is content", "get_weather\n{\"city\": \"Paris\"}", Format{}, tools,
			Message{Content: "get_weather\n{\"city\": \"Paris\"}"}},
	})
}

// TestParseGLMSplitAnywhere: an output cut in two at every byte, so that
// every marker is split in every place, parses as it does whole.
func TestParseGLMSplitAnywhere(t *testing.T) {
	const out = "<think>need\nthe weather</think>\nLet me check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n" +
		"<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call><tool_call>clock<arg_key>tz</arg_key><arg_value>UTC</arg_value></tool_call>"
	f := Format{Tools: ToolsGLM, Thinking: true}
	whole := splitAnywhere(t, out, f, glmWeather)
	if len(whole.ToolCalls) != 2 || whole.Thinking != "need\nthe weather" || whole.Content != "Let me check." ||
		whole.ToolCalls[0].Arguments != `{"city":"Paris","days":3}` || whole.ToolCalls[1].Arguments != `{"tz":"UTC"}` {
		t.Fatalf("whole: %+v", whole)
	}
}

// TestRenderGLM: testutil.GLMTemplate, this repository's template in
// GLM-4.5's format, rendered by the package's Jinja with tools, thinking
// on and off, a call and its results; its format is detected as GLM's.
func TestRenderGLM(t *testing.T) {
	tmpl, err := Parse(testutil.GLMTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if f := tmpl.Format(); f != (Format{Tools: ToolsGLM, Thinking: true, GLMLines: true}) {
		t.Fatalf("format %+v, want GLM's with its calls a part a line", f)
	}
	if c := tmpl.Caps(); !c.Tools || !c.ToolCalls || !c.ObjectArguments || !c.ParallelToolCalls {
		t.Errorf("caps %+v: want tools, calls with object arguments, parallel calls", c)
	}
	tools := []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}
	conv := []Message{{Role: RoleUser, Content: "Weather?"},
		{Role: RoleAssistant, Thinking: "need it", Content: "Checking.", ToolCalls: []ToolCall{
			{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris","days":2,"opts":{"metric":true}}`}, {ID: "c2", Name: "clock", Arguments: `{}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: `{"sky":"sunny"}`}, {Role: RoleTool, ToolCallID: "c2", Content: "12:00"}}
	const head = "[gMASK]<sop><|system|>\n# Tools\n\nYou can call these functions, each described in JSON between <tools> and </tools>:\n<tools>\n" +
		`{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}` +
		"\n</tools>\n\nTo call one, write:\n<tool_call>{function-name}\n<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n...\n</tool_call>"
	const calls = "<|assistant|>\n<think>need it</think>\nChecking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n" +
		"<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n<arg_key>opts</arg_key>\n<arg_value>{\"metric\": true}</arg_value>\n</tool_call>\n" +
		"<tool_call>clock\n</tool_call><|observation|>\n<tool_response>\n{\"sky\":\"sunny\"}\n</tool_response>\n<tool_response>\n12:00\n</tool_response>"
	off, on := false, true
	for _, c := range []struct {
		name     string
		msgs     []Message
		tools    []Tool
		thinking *bool
		want     string
	}{
		{"plain, thinking on by default", []Message{{Role: RoleSystem, Content: "Be brief."}, {Role: RoleUser, Content: "Hi"}}, nil, nil,
			"[gMASK]<sop><|system|>\nBe brief.<|user|>\nHi<|assistant|>"},
		{"plain, thinking off", []Message{{Role: RoleUser, Content: "Hi"}}, nil, &off,
			"[gMASK]<sop><|user|>\nHi/nothink<|assistant|>\n<think></think>"},
		{"tools, a call and its results, thinking on", conv, tools, &on, head + "<|user|>\nWeather?" + calls + "<|assistant|>"},
		{"tools, a call and its results, thinking off", conv, tools, &off,
			head + "<|user|>\nWeather?/nothink" + calls + "<|assistant|>\n<think></think>"},
		// Reasoning before the last user turn is left out.
		{"an earlier turn's reasoning", []Message{{Role: RoleUser, Content: "Hi"}, {Role: RoleAssistant, Thinking: "hm", Content: "Hello."},
			{Role: RoleUser, Content: "Bye"}}, nil, nil,
			"[gMASK]<sop><|user|>\nHi<|assistant|>\n<think></think>\nHello.<|user|>\nBye<|assistant|>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tmpl.Render(c.msgs, RenderOptions{AddGenerationPrompt: true, Tools: c.tools, EnableThinking: c.thinking})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestRenderGLMThinkingOff: a GLM prompt that ends by opening the
// reasoning block (GLM-4.7-Flash's) gets it closed when thinking is off,
// as llama.cpp does; PromptOpensThinking sees it open otherwise.
func TestRenderGLMThinkingOff(t *testing.T) {
	const src = "[gMASK]<sop>{%- set x = '<arg_key>k</arg_key><arg_value>v</arg_value>' -%}<|user|>{{ messages[0].content }}<|assistant|><think>"
	if f := DetectFormat(src); f != (Format{Tools: ToolsGLM, Thinking: true}) {
		t.Fatalf("format %+v, want GLM's, calls back to back", f)
	}
	off, on := false, true
	for _, c := range []struct {
		thinking *bool
		want     string
		open     bool
	}{{&off, "[gMASK]<sop><|user|>hi<|assistant|><think></think>", false}, {&on, "[gMASK]<sop><|user|>hi<|assistant|><think>", true}, {nil, "[gMASK]<sop><|user|>hi<|assistant|><think>", true}} {
		got, err := Render(src, []Message{{Role: RoleUser, Content: "hi"}}, RenderOptions{AddGenerationPrompt: true, EnableThinking: c.thinking})
		if err != nil || got != c.want || PromptOpensThinking(got) != c.open {
			t.Errorf("thinking %v: %q, %v; want %q (open %v)", c.thinking, got, err, c.want, c.open)
		}
	}
}
