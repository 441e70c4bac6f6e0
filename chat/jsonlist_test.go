package chat

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// oneCall is a reply's calls when it makes the one call named name with
// the arguments args (JSON text) under id.
func oneCall(id, name, args string) []ToolCall {
	return []ToolCall{{ID: id, Name: name, Arguments: args}}
}

// TestParseCallLists: the syntaxes that write their calls as a list (in
// JSON: Command R7B, Granite 3.x, Nemotron Nano v2, Apertus; in Python:
// LFM2; DeepSeek R1's and V3.1's blocks), whole and
// streamed in pieces of 1 to 7 bytes (checkParse), as llama.cpp's parsers
// for them read it: a list cut short, that does not parse, or that holds
// an element that is no call in the syntax is content; a call of a tool
// not offered is a call all the same.
func TestParseCallLists(t *testing.T) {
	cohere := Format{Tools: ToolsCommandR, Thinking: true}
	granite := Format{Tools: ToolsGranite, Thinking: true}
	nemotron := Format{Tools: ToolsNemotron, Thinking: true}
	apertus := Format{Tools: ToolsApertus, Thinking: true}
	lfm2 := Format{Tools: ToolsLFM2, Thinking: true}
	deepseek := Format{Tools: ToolsDeepSeek, Thinking: true}
	firefunction := Format{Tools: ToolsFirefunction}
	tools := ParseOptions{Tools: true}
	weather := ParseOptions{Tools: true, Defs: []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	two := []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_2", Name: "clock", Arguments: `{}`}}
	checkParse(t, slices.Concat(
		family(cohere, []listCase{
			{"an answer", tools, "<|START_RESPONSE|>Hello.<|END_RESPONSE|>",
				Message{Content: "Hello."}},
			{"reasoning, then an answer", tools, "<|START_THINKING|>The capital.<|END_THINKING|><|START_RESPONSE|>Paris.<|END_RESPONSE|>",
				Message{Thinking: "The capital.", Content: "Paris."}},
			{"reasoning opened by the prompt", ParseOptions{ThinkingOpen: true}, "hm<|END_THINKING|>\n<|START_RESPONSE|>ok<|END_RESPONSE|>",
				Message{Thinking: "hm", Content: "ok"}},
			{"calls with their IDs", tools, "<|START_THINKING|>I need the weather.<|END_THINKING|><|START_ACTION|>[\n" +
				`    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},` + "\n" +
				`    {"tool_call_id": "1", "tool_name": "clock", "parameters": {}}` + "\n]<|END_ACTION|>",
				Message{Thinking: "I need the weather.", ToolCalls: []ToolCall{{ID: "0", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "1", Name: "clock", Arguments: `{}`}}}},
			{"a call without an ID gets one", tools, `<|START_ACTION|>[{"tool_name": "clock", "parameters": {}}]<|END_ACTION|>`,
				Message{ToolCalls: oneCall("call_1", "clock", `{}`)}},
			{"a tool not offered", weather, `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "news", "parameters": {"q": 1}}]<|END_ACTION|>`,
				Message{ToolCalls: oneCall("0", "news", `{"q":1}`)}},
			unparsed("an action cut short", tools, `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "clock", "parameters": {}}]`),
			unparsed("bad JSON", tools, `<|START_ACTION|>[{"tool_name": "clock",}]<|END_ACTION|>`),
			unparsed("hermes' keys are no call", tools, `<|START_ACTION|>[{"name": "clock", "arguments": {}}]<|END_ACTION|>`),
			unparsed("no tools offered", ParseOptions{}, `<|START_ACTION|>[{"tool_name": "clock", "parameters": {}}]<|END_ACTION|>`),
		}),
		family(granite, []listCase{
			{"reasoning, then an answer", tools, "<think>The capital.</think><response>Paris.</response>",
				Message{Thinking: "The capital.", Content: "Paris."}},
			{"content, then calls", tools, `Checking.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "clock", "arguments": {}}]`,
				Message{Content: "Checking.", ToolCalls: two}},
			unparsed("a list cut short", tools, `<|tool_call|>[{"name": "clock", "arguments": {`),
			unparsed("text after the list", tools, `<|tool_call|>[{"name": "clock", "arguments": {}}] done`),
		}),
		family(Format{Tools: ToolsGranite}, []listCase{
			{"without reasoning", tools, `<|tool_call|>[{"name": "clock", "arguments": "{}"}]`,
				Message{ToolCalls: oneCall("call_1", "clock", `{}`)}},
		}),
		family(nemotron, []listCase{
			{"reasoning, then calls", tools, "<think>hm</think>\n<TOOLCALL>[" + `{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "clock", "arguments": {}}` + "]</TOOLCALL>",
				Message{Thinking: "hm", ToolCalls: two}},
			{"content, then a call", tools, `Sure.<TOOLCALL>[{"name": "clock", "arguments": {}}]</TOOLCALL>`,
				Message{Content: "Sure.", ToolCalls: oneCall("call_1", "clock", `{}`)}},
			unparsed("a call cut short", tools, `<TOOLCALL>[{"name": "clock", "arguments": {}}]`),
			unparsed("an object, not a list", tools, `<TOOLCALL>{"name": "clock", "arguments": {}}</TOOLCALL>`),
			unparsed("an element without a name", tools, `<TOOLCALL>[{"arguments": {}}]</TOOLCALL>`),
		}),
		family(apertus, []listCase{
			{"reasoning, then an answer", tools, "<|inner_prefix|>The capital.<|inner_suffix|>Paris.",
				Message{Thinking: "The capital.", Content: "Paris."}},
			{"calls in the short form", tools, `<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"clock": {}}]<|tools_suffix|>`,
				Message{ToolCalls: two}},
			{"arguments as a JSON string", tools, `<|tools_prefix|>[{"clock": "{\"tz\": \"UTC\"}"}]<|tools_suffix|>`,
				Message{ToolCalls: oneCall("call_1", "clock", `{"tz":"UTC"}`)}},
			unparsed("two names in one element", tools, `<|tools_prefix|>[{"clock": {}, "news": {}}]<|tools_suffix|>`),
			unparsed("a list cut short", tools, `<|tools_prefix|>[{"clock": {}}]`),
		}),
		family(lfm2, []listCase{
			{"reasoning, then an answer", tools, "<think>The capital.</think>Paris.",
				Message{Thinking: "The capital.", Content: "Paris."}},
			{"content, then calls", tools, `Checking.<|tool_call_start|>[get_weather(city="Paris"), clock()]<|tool_call_end|>`,
				Message{Content: "Checking.", ToolCalls: two}},
			{"Python's values", tools, `<|tool_call_start|>[f(s='it\'s', n=-1.5e3, b=True, z=None, j=false, l=[1, 'a'], d={'k': "v", "n": {}})]<|tool_call_end|>`,
				Message{ToolCalls: oneCall("call_1", "f", `{"s":"it's","n":-1.5e3,"b":true,"z":null,"j":false,"l":[1,"a"],"d":{"k":"v","n":{}}}`)}},
			{"escapes", tools, `<|tool_call_start|>[f(s="a\"b\u00e9\n<")]<|tool_call_end|>`,
				Message{ToolCalls: oneCall("call_1", "f", `{"s":"a\"bé\n<"}`)}},
			{"the JSON list", tools, `<|tool_call_start|>[{"name": "clock", "arguments": {}}]<|tool_call_end|>`,
				Message{ToolCalls: oneCall("call_1", "clock", `{}`)}},
			unparsed("a list cut short", tools, `<|tool_call_start|>[clock()]`),
			unparsed("an argument without a value", tools, `<|tool_call_start|>[f(x)]<|tool_call_end|>`),
			unparsed("an unterminated string", tools, `<|tool_call_start|>[f(x="a)]<|tool_call_end|>`),
		}),
		family(firefunction, []listCase{
			{"content, then calls", tools, `Checking. functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "clock", "arguments": {}}]`,
				Message{Content: "Checking.", ToolCalls: two}},
			{"calls alone", tools, ` functools[{"name": "clock", "arguments": "{}"}]`, Message{ToolCalls: oneCall("call_1", "clock", `{}`)}},
			unparsed("a list cut short", tools, ` functools[{"name": "clock", "arguments": {`),
			unparsed("text after the list", tools, ` functools[{"name": "clock", "arguments": {}}] done`),
			unparsed("functools without its bracket", tools, ` functools {"name": "clock"}`),
			unparsed("no tools offered", ParseOptions{}, ` functools[{"name": "clock", "arguments": {}}]`),
		}),
		family(deepseek, []listCase{
			{"reasoning, then an answer", tools, "<think>The capital.</think>\n\nParis.",
				Message{Thinking: "The capital.", Content: "Paris."}},
			{"R1's calls", tools, "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n" +
				"<｜tool▁call▁begin｜>function<｜tool▁sep｜>clock\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
				Message{Content: "Checking.", ToolCalls: two}},
			{"V3.1's calls", tools, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>" +
				"clock<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
				Message{ToolCalls: two}},
			unparsed("a block cut short", tools, "<｜tool▁calls▁begin｜>clock<｜tool▁sep｜>{}<｜tool▁call▁end｜>"),
			unparsed("a call cut short", tools, "<｜tool▁calls▁begin｜>clock<｜tool▁sep｜>{}<｜tool▁calls▁end｜>"),
			unparsed("bad JSON", tools, "<｜tool▁calls▁begin｜>clock<｜tool▁sep｜>{,}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
			unparsed("R1's call without its fence", tools, "<｜tool▁calls▁begin｜>function<｜tool▁sep｜>clock\n{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
		}),
	))
}

// listCase is output in one of the syntaxes that list calls, the options
// it is parsed with, and the message it parses to.
type listCase struct {
	name string
	opts ParseOptions
	out  string
	want Message
}

// unparsed is the case of output that is no call in its syntax, which
// is content as it is.
func unparsed(name string, opts ParseOptions, out string) listCase {
	return listCase{name, opts, out, Message{Content: out}}
}

// family are cases of output in format f, named after its syntax.
func family(f Format, cases []listCase) []parseCase {
	out := make([]parseCase, len(cases))
	for i, c := range cases {
		out[i] = parseCase{f.Tools.String() + ": " + c.name, c.out, f, c.opts, c.want}
	}
	return out
}

// TestParseCallListsSplitAnywhere: each syntax's output cut in two at
// every byte parses as it does whole (Kimi K2's and MiniMax-M2's too,
// Kimi's calls inside its reasoning).
func TestParseCallListsSplitAnywhere(t *testing.T) {
	for _, c := range []struct {
		f   Format
		out string
	}{
		{Format{Tools: ToolsCommandR, Thinking: true}, "<|START_THINKING|>need it<|END_THINKING|><|START_ACTION|>[" +
			`{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}, {"tool_call_id": "1", "tool_name": "clock", "parameters": {}}]<|END_ACTION|>`},
		{Format{Tools: ToolsGranite, Thinking: true}, `<think>need it</think>Checking.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "clock", "arguments": {}}]`},
		{Format{Tools: ToolsNemotron, Thinking: true}, `<think>need it</think>Checking.<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "clock", "arguments": {}}]</TOOLCALL>`},
		{Format{Tools: ToolsApertus, Thinking: true}, `<|inner_prefix|>need it<|inner_suffix|>Checking.<|tools_prefix|>[{"get_weather": {"city": "Paris"}}, {"clock": {}}]<|tools_suffix|>`},
		{Format{Tools: ToolsLFM2, Thinking: true}, `<think>need it</think>Checking.<|tool_call_start|>[get_weather(city='Paris'), clock()]<|tool_call_end|>`},
		{Format{Tools: ToolsDeepSeek, Thinking: true}, "<think>need it</think>Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" +
			`{"city": "Paris"}` + "\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>clock<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
		{Format{Tools: ToolsFirefunction}, `Checking. functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "clock", "arguments": {}}]`},
		{Format{Tools: ToolsKimi, Thinking: true}, "<think>need it<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0" +
			`<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.clock:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>` +
			"</think>Checking."},
		{Format{Tools: ToolsMiniMax, Thinking: true}, `<think>need it</think>Checking.<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris</parameter>` +
			`</invoke><invoke name="clock"></invoke></minimax:tool_call>`},
	} {
		t.Run(c.f.Tools.String(), func(t *testing.T) {
			whole := splitAnywhere(t, c.out, c.f, ParseOptions{Tools: true})
			if len(whole.ToolCalls) != 2 || c.f.Thinking && whole.Thinking != "need it" || whole.ToolCalls[0].Arguments != `{"city":"Paris"}` || whole.ToolCalls[1].Name != "clock" {
				t.Fatalf("whole: %+v", whole)
			}
		})
	}
}

// TestCallSchemaLists: a forced call in the syntaxes that list calls is a
// list of the one object between the syntax's markers, and what a model
// writes so parses back to the call.
func TestCallSchemaLists(t *testing.T) {
	weather := Tool{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	clock := Tool{Name: "clock"}
	for _, c := range []struct {
		name           string
		f              Format
		tools          []Tool
		prefix, suffix string
		schema         string
		object         string // an object the schema takes
	}{
		{"granite", Format{Tools: ToolsGranite}, []Tool{weather}, "<|tool_call|>[", "]",
			`{"additionalProperties":false,"properties":{"arguments":` + string(weather.Parameters) + `,"name":{"const":"weather"}},"required":["name","arguments"],"type":"object"}`,
			`{"name": "weather", "arguments": {"city": "Paris"}}`},
		{"nemotron", Format{Tools: ToolsNemotron, Thinking: true}, []Tool{weather}, "<TOOLCALL>[", "]</TOOLCALL>",
			`{"additionalProperties":false,"properties":{"arguments":` + string(weather.Parameters) + `,"name":{"const":"weather"}},"required":["name","arguments"],"type":"object"}`,
			`{"name": "weather", "arguments": {"city": "Paris"}}`},
		{"command r7b", Format{Tools: ToolsCommandR, Thinking: true}, []Tool{weather}, "<|START_ACTION|>[", "]<|END_ACTION|>",
			`{"additionalProperties":false,"properties":{"parameters":` + string(weather.Parameters) + `,"tool_call_id":{"type":"string"},"tool_name":{"const":"weather"}},` +
				`"required":["tool_call_id","tool_name","parameters"],"type":"object"}`,
			`{"tool_call_id": "0", "tool_name": "weather", "parameters": {"city": "Paris"}}`},
		{"lfm2, in JSON", Format{Tools: ToolsLFM2}, []Tool{weather}, "<|tool_call_start|>[", "]<|tool_call_end|>",
			`{"additionalProperties":false,"properties":{"arguments":` + string(weather.Parameters) + `,"name":{"const":"weather"}},"required":["name","arguments"],"type":"object"}`,
			`{"name": "weather", "arguments": {"city": "Paris"}}`},
		{"deepseek r1", Format{Tools: ToolsDeepSeek}, []Tool{clock, weather}, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>weather\n```json\n",
			"\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>", string(weather.Parameters), `{"city": "Paris"}`},
		{"deepseek v3.1", Format{Tools: ToolsDeepSeek, DeepSeekV31: true}, []Tool{weather}, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>weather<｜tool▁sep｜>",
			"<｜tool▁call▁end｜><｜tool▁calls▁end｜>", string(weather.Parameters), `{"city": "Paris"}`},
		{"firefunction v2", Format{Tools: ToolsFirefunction}, []Tool{weather}, " functools[", "]",
			`{"additionalProperties":false,"properties":{"arguments":` + string(weather.Parameters) + `,"name":{"const":"weather"}},"required":["name","arguments"],"type":"object"}`,
			`{"name": "weather", "arguments": {"city": "Paris"}}`},
		{"kimi k2", Format{Tools: ToolsKimi, Thinking: true}, []Tool{clock, weather}, "<|tool_calls_section_begin|><|tool_call_begin|>functions.weather:0<|tool_call_argument_begin|>",
			"<|tool_call_end|><|tool_calls_section_end|>", string(weather.Parameters), `{"city": "Paris"}`},
		{"apertus, one tool", Format{Tools: ToolsApertus}, []Tool{weather}, `<|tools_prefix|>[{"weather": `, "}]<|tools_suffix|>", string(weather.Parameters),
			`{"city": "Paris"}`},
		{"apertus, named", Format{Tools: ToolsApertus}, []Tool{clock, weather}, `<|tools_prefix|>[{"weather": `, "}]<|tools_suffix|>", string(weather.Parameters),
			`{"city": "Paris"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			prefix, suffix, schema, err := c.f.CallSchema(c.tools, "weather")
			if err != nil || prefix != c.prefix || suffix != c.suffix || normal(schema) != normal([]byte(c.schema)) {
				t.Fatalf("%q %q %s, %v\nwant %q %q %s", prefix, suffix, schema, err, c.prefix, c.suffix, c.schema)
			}
			got := ParseOutput(prefix+c.object+suffix, c.f, ParseOptions{Tools: true, NewID: seqIDs()})
			if len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "weather" || got.ToolCalls[0].Arguments != `{"city":"Paris"}` || got.Content != "" {
				t.Errorf("parsed back %+v", got)
			}
			if err := c.f.CheckToolChoice(c.tools, "weather"); err != nil {
				t.Errorf("CheckToolChoice: %v", err)
			}
		})
	}
	// Apertus' objects are told apart by no constant, and Kimi K2 names
	// the tool outside its arguments: several tools need one named.
	for _, f := range []Format{{Tools: ToolsApertus}, {Tools: ToolsKimi}} {
		if err := f.CheckToolChoice([]Tool{clock, weather}, "required"); !errors.Is(err, ErrToolChoice) {
			t.Errorf("%s, several tools: %v, want ErrToolChoice", f.Tools, err)
		}
	}
}
