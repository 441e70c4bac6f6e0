package chat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func seqIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("call_%d", n) }
}

// streamed parses out pushed in pieces of size bytes (with call IDs
// from seqIDs): the sum of the deltas, and the parser's message.
func streamed(out string, f Format, opts ParseOptions, size int) (sum, msg Message) {
	opts.NewID = seqIDs()
	p := NewParser(f, opts)
	sum.Role = RoleAssistant
	add := func(ds []Delta) {
		for _, d := range ds {
			sum.Content += d.Content
			sum.Thinking += d.Thinking
			if d.ToolCall != nil {
				sum.ToolCalls = append(sum.ToolCalls, *d.ToolCall)
			}
		}
	}
	for i := 0; i < len(out); i += size {
		add(p.Push(out[i:min(len(out), i+size)]))
	}
	add(p.Finish())
	return sum, p.Message()
}

// parseCase is output in a format, and the message it parses to.
type parseCase struct {
	name string
	out  string
	f    Format
	opts ParseOptions
	want Message
}

// checkParse parses each case's output whole and streamed in pieces of 1
// to 7 bytes, each of which must give the message wanted.
func checkParse(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.NewID = seqIDs()
			c.want.Role = RoleAssistant
			got := ParseOutput(c.out, c.f, c.opts)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			// Streaming in pieces of every size gives the same message, and
			// the deltas add up to it.
			for size := 1; size <= 7; size++ {
				sum, msg := streamed(c.out, c.f, c.opts, size)
				if !reflect.DeepEqual(sum, c.want) || !reflect.DeepEqual(msg, c.want) {
					t.Fatalf("streamed in %d-byte pieces: deltas %+v, message %+v\nwant %+v", size, sum, msg, c.want)
				}
			}
		})
	}
}

// splitAnywhere parses out whole, and cut in two at every byte, so that
// every marker is split in every place: each cut must give the message
// parsing it whole gives, which it returns.
func splitAnywhere(t *testing.T, out string, f Format, opts ParseOptions) Message {
	t.Helper()
	opts.NewID = seqIDs()
	whole := ParseOutput(out, f, opts)
	for i := range len(out) + 1 {
		opts.NewID = seqIDs()
		p := NewParser(f, opts)
		p.Push(out[:i])
		p.Push(out[i:])
		p.Finish()
		if got := p.Message(); !reflect.DeepEqual(got, whole) {
			t.Fatalf("cut at %d (%q|%q): %+v\nwant %+v", i, out[:i], out[i:], got, whole)
		}
	}
	return whole
}

func TestParseOutput(t *testing.T) {
	hermes := Format{Tools: ToolsHermes, Thinking: true}
	magistral := Format{Tools: ToolsMistral, Thinking: true, MistralThink: true}
	cases := []parseCase{
		{"plain", "Hello there.", Format{}, ParseOptions{}, Message{Content: "Hello there."}},
		{"qwen3 thinking", "<think>\nLet me see.\n</think>\n\nParis.", hermes, ParseOptions{},
			Message{Thinking: "Let me see.", Content: "Paris."}},
		{"thinking opened by prompt", "Let me see.\n</think>\n\nParis.", hermes, ParseOptions{ThinkingOpen: true},
			Message{Thinking: "Let me see.", Content: "Paris."}},
		{"thinking disabled", "Paris.", hermes, ParseOptions{}, Message{Content: "Paris."}},
		{"unterminated thinking", "<think>hmm", hermes, ParseOptions{}, Message{Thinking: "hmm"}},
		{"hermes call", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", hermes, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{"hermes two calls with text", "Checking.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": 1}}\n</tool_call>", hermes, ParseOptions{Tools: true},
			Message{Content: "Checking.", ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: `{}`}, {ID: "call_2", Name: "b", Arguments: `{"x":1}`}}}},
		{"hermes without tools offered", "<tool_call>{\"name\": \"a\"}</tool_call>", hermes, ParseOptions{},
			Message{Content: "<tool_call>{\"name\": \"a\"}</tool_call>"}},
		{"hermes unclosed at end", "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"q\": \"x\"}}", hermes, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: `{"q":"x"}`}}}},
		{"hermes broken json", "<tool_call>not json</tool_call>", hermes, ParseOptions{Tools: true},
			Message{Content: "<tool_call>not json</tool_call>"}},
		{"llama3 json", `{"name": "get_weather", "parameters": {"city": "Paris"}}`, Format{Tools: ToolsLlama3}, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{"llama3 python tag", `<|python_tag|>{"type": "function", "name": "f", "parameters": {"a": 1}}`, Format{Tools: ToolsLlama3}, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}}},
		{"llama3 builtin", `<|python_tag|>brave_search.call(query="weather in \"Paris\"")`, Format{Tools: ToolsLlama3}, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "brave_search", Arguments: `{"query":"weather in \"Paris\""}`}}}},
		{"llama3 plain json answer", `{"answer": 42}`, Format{Tools: ToolsLlama3}, ParseOptions{Tools: true},
			Message{Content: `{"answer": 42}`}},
		{"llama3 text", "The weather is fine.", Format{Tools: ToolsLlama3}, ParseOptions{Tools: true},
			Message{Content: "The weather is fine."}},
		{"mistral array", `[TOOL_CALLS][{"name": "f", "arguments": {"a": "b"}, "id": "abc123def"}]`, Format{Tools: ToolsMistral}, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "abc123def", Name: "f", Arguments: `{"a":"b"}`}}}},
		{"mistral args syntax", `[TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g[ARGS]{}`, Format{Tools: ToolsMistral}, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}, {ID: "call_2", Name: "g", Arguments: `{}`}}}},
		// Magistral and Ministral 3 reason between [THINK] and [/THINK],
		// then answer or call as Mistral does.
		{"magistral reasoning, then calls", "[THINK]Need the weather.[/THINK]Checking.[TOOL_CALLS]" + `[{"name": "f", "arguments": {"a": "b"}, "id": "abc123def"}]`, magistral,
			ParseOptions{Tools: true}, Message{Thinking: "Need the weather.", Content: "Checking.", ToolCalls: []ToolCall{{ID: "abc123def", Name: "f", Arguments: `{"a":"b"}`}}}},
		{"ministral 3 reasoning, then args calls", "[THINK]hm[/THINK][TOOL_CALLS]f[ARGS]{\"a\": 1}", Format{Tools: ToolsMistral, Thinking: true, MistralArgs: true, MistralThink: true},
			ParseOptions{Tools: true}, Message{Thinking: "hm", ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}}},
		{"magistral reasoning opened by the prompt", "hm[/THINK]ok", magistral, ParseOptions{ThinkingOpen: true}, Message{Thinking: "hm", Content: "ok"}},
		{"magistral's <think> is text", "<think>hm</think>ok", magistral, ParseOptions{}, Message{Content: "<think>hm</think>ok"}},
		{"string arguments", "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 2}\"}</tool_call>", hermes, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: `{"x":2}`}}}},
		// Qwen 3.5/3.6's XML form inside <tool_call>: the offered tool's
		// schema keeps a string parameter a string ("12"); other values
		// are the JSON they parse as, or strings; one newline each side
		// of a value is layout.
		{"xml call", "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=zip>\n12\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"unit\": \"C\"}\n</parameter>\n<parameter=note>\ntwo\nlines\n</parameter>\n</function>\n</tool_call>", hermes,
			ParseOptions{Tools: true, Defs: []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"},"days":{"type":"integer"},"opts":{"type":"object"},"note":{"type":"string"}}}`)}}},
			Message{Content: "Let me check.", ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris","zip":"12","days":3,"opts":{"unit":"C"},"note":"two\nlines"}`}}}},
		{"xml call without schemas", "<tool_call>\n<function=f>\n<parameter=n>\n12\n</parameter>\n<parameter=s>\nhello\n</parameter>\n</function>\n</tool_call>", hermes, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"n":12,"s":"hello"}`}}}},
		{"xml call, no parameters, two calls", "<tool_call>\n<function=a>\n</function>\n</tool_call>\n<tool_call>\n<function=b>\n<parameter=x>\ntrue\n</parameter>\n</function>\n</tool_call>", hermes, ParseOptions{Tools: true},
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: `{}`}, {ID: "call_2", Name: "b", Arguments: `{"x":true}`}}}},
		{"xml call unclosed parameter", "<tool_call>\n<function=f>\n<parameter=x>\n1\n</function>\n</tool_call>", hermes, ParseOptions{Tools: true},
			Message{Content: "<tool_call>\n<function=f>\n<parameter=x>\n1\n</function>\n</tool_call>"}},
	}
	checkParse(t, cases)
}

// TestParserHoldsBackMarkers: text that may begin a marker is not shown
// until it is known not to be one.
func TestParserHoldsBackMarkers(t *testing.T) {
	p := NewParser(Format{Tools: ToolsHermes, Thinking: true}, ParseOptions{Tools: true})
	if d := p.Push("Sure <tool_"); len(d) != 1 || d[0].Content != "Sure" {
		t.Fatalf("deltas %+v, want content \"Sure\" only", d)
	}
	if d := p.Push("x> ok"); len(d) != 1 || d[0].Content != " <tool_x> ok" {
		t.Fatalf("deltas %+v", d)
	}
}

func TestPromptOpensThinking(t *testing.T) {
	for prompt, want := range map[string]bool{
		"<|im_start|>assistant\n":                                                    false,
		"<|im_start|>assistant\n<think>\n":                                           true,
		"<|im_start|>assistant\n<think>\n\n</think>\n\n":                             false,
		"<think>x</think> <|im_start|>assistant\n":                                   false,
		"<seed:bos>assistant\n<seed:think>":                                          true,
		"<|turn>model\n<|channel>thought\n<channel|>":                                false,
		"<|turn>model\n<|channel>thought\n":                                          true,
		"<|user|>\nhi<|assistant|><think>":                                           true,
		"<|user|>\nhi<|assistant|>\n<think></think>":                                 false,
		"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>":                 true,
		"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|>": false,
		"<|assistant_start|><|inner_prefix|>":                                        true,
		"<|assistant_start|><|inner_prefix|><|inner_suffix|>":                        false,
		"[INST]hi[/INST][THINK]":                                                     true,
		"[INST]hi[/INST][THINK]hm[/THINK]ok</s>[INST]bye[/INST]":                     false,
	} {
		if got := PromptOpensThinking(prompt); got != want {
			t.Errorf("%q: %v, want %v", prompt, got, want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	for src, want := range map[string]Format{
		"{{ '<tool_call>' }}{{ '<think>' }}":          {Tools: ToolsHermes, Thinking: true},
		"<|start_header_id|>ipython<|end_header_id|>": {Tools: ToolsLlama3},
		"[TOOL_CALLS]": {Tools: ToolsMistral},
		"<|start|>assistant<|channel|>final<|message|>{{ m.content }}<|end|>": {Tools: ToolsHarmony},
		"[TOOL_CALLS]{{ name }}[ARGS]":                                        {Tools: ToolsMistral, MistralArgs: true},
		// Magistral (reasoning in [THINK], calls or none) and Ministral 3;
		// Magistral Small 2506's <think> in a Mistral template is <think>.
		"[THINK]{{ t }}[/THINK][TOOL_CALLS]":                             {Tools: ToolsMistral, Thinking: true, MistralThink: true},
		"[SYSTEM_PROMPT][THINK]{{ t }}[/THINK][TOOL_CALLS]{{ n }}[ARGS]": {Tools: ToolsMistral, Thinking: true, MistralArgs: true, MistralThink: true, ContentBlocks: true},
		// Mistral Small 3.2: [CALL_ID] tells it from Ministral 3, as llama.cpp does.
		"[SYSTEM_PROMPT][TOOL_CALLS]{{ n }}[CALL_ID]{{ i }}[ARGS]": {Tools: ToolsMistral, MistralArgs: true},
		// Mistral Small 4's kind (its reasoning effort in [MODEL_SETTINGS]),
		// which llama.cpp d32676d77 also runs as Ministral 3's.
		"[SYSTEM_PROMPT][MODEL_SETTINGS]{{ e }}[/MODEL_SETTINGS][THINK]{{ t }}[/THINK][TOOL_CALLS]{{ n }}[ARGS]": {Tools: ToolsMistral, Thinking: true, MistralArgs: true, MistralThink: true, ContentBlocks: true},
		"[INST]{{ c }}[/INST][THINK]{{ t }}[/THINK]":                                                             {Tools: ToolsMistral, Thinking: true, MistralThink: true},
		"[TOOL_CALLS]<think>": {Tools: ToolsMistral, Thinking: true},
		// Firefunction v2, before Llama 3's (its template is Llama 3's).
		"<|start_header_id|>ipython<|end_header_id|>{{ ' functools[' }}": {Tools: ToolsFirefunction},
		"functools[": {},
		// Xiaomi MiMo (all six of its markers; reasoning whatever the
		// template shows), Hermes' calls; five of them are no MiMo.
		"# Tools\n<tools>{{ t }}</tools><tool_calls></tool_calls><tool_response>": {Tools: ToolsHermes, Thinking: true},
		"# Tools\n<tools>{{ t }}</tools><tool_calls></tool_calls>":                {},
		"{{- '<|tool_call>call:' + name + '{' -}}<|channel>":                      {Tools: ToolsGemma4, Thinking: true},
		"{%- set toolcall_begin_token = '<seed:tool_call>' -%}":                   {Tools: ToolsSeed, Thinking: true},
		"<tool_call>\n<function=x>\n<parameter=y>\n<think>":                       {Tools: ToolsHermes, Thinking: true, XMLCalls: true},
		strings.Repeat("{{ messages }}", 2):                                       {},
		// GLM-4.5/4.6 (a call's parts a line), GLM-4.7 (back to back); a
		// GLM-4-0414 template (its calls a name and a JSON line, no
		// format in llama.cpp) and a GLM-Z1 one (the same, reasoning).
		"[gMASK]<sop><tool_call>{name}\n<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value><think>":                           {Tools: ToolsGLM, Thinking: true, GLMLines: true},
		"[gMASK]<sop>{{ '<tool_call>' + n + '<arg_key>' + k + '</arg_key><arg_value>' }}<think>":                             {Tools: ToolsGLM, Thinking: true},
		"[gMASK]<sop>{%- if tools -%}<|system|>\n# Tools{%- endif -%}<|user|>\n{{ c }}<|observation|>\n{{ r }}<|assistant|>": {},
		"[gMASK]<sop><|user|>\n{{ c }}<|assistant|>\n<think>":                                                                {Thinking: true},
		// Command R7B; Granite 3.x, before Hermes (Granite 4 writes
		// <tool_call>: Hermes); Nemotron Nano v2; Apertus, with and
		// without its reasoning; Apertus' call marker alone is no Apertus.
		"{{ '<|END_THINKING|><|START_ACTION|>' }}<tool_call>":                            {Tools: ToolsCommandR, Thinking: true},
		"{%- elif thinking %}<think><response>{%- endif %}<|tool_call|><tool_call>":      {Tools: ToolsGranite, Thinking: true},
		"{%- if tools %}<|tool_call|>{%- endif %}":                                       {},
		"<|start_of_role|>{%- if thinking %}{%- endif %}<tool_call>":                     {Tools: ToolsHermes},
		"<SPECIAL_10>System\n<TOOLCALL>[{{ c }}]</TOOLCALL><think>":                      {Tools: ToolsNemotron, Thinking: true},
		"<|system_start|>{{ s }}<|tools_prefix|>{{ c }}<|tools_suffix|><|inner_prefix|>": {Tools: ToolsApertus, Thinking: true},
		"<|system_start|>{{ s }}<|tools_prefix|>":                                        {Tools: ToolsApertus},
		"<|tools_prefix|>": {},
		// LFM2 (the tool list's markers), LFM2.5 (its plain list).
		"List of tools: <|tool_list_start|>[{{ t }}]<|tool_list_end|><think>": {Tools: ToolsLFM2, Thinking: true},
		"List of tools: [{{ t }}]":   {Tools: ToolsLFM2},
		"<|tool_list_start|>{{ t }}": {},
		// DeepSeek R1 (its block's opener), V3.1 (its test of prefix
		// messages), before Hermes'.
		"{{ '<｜tool▁calls▁begin｜>' }}<tool_call><think>":                                                                  {Tools: ToolsDeepSeek, Thinking: true},
		"{%- if message['prefix'] is defined and message['prefix'] and thinking %}<think>{% endif %}<｜tool▁calls▁begin｜>": {Tools: ToolsDeepSeek, Thinking: true, DeepSeekV31: true},
		// MiniMax-M2 (both its turns' markers; reasoning whether the
		// template shows it or not); Kimi K2 (its tool declaration,
		// section opener and results heading, all three).
		"]~!b[]~b]system\n{{ s }}[e~[\n]~b]ai\n<minimax:tool_call>":                                      {Tools: ToolsMiniMax, Thinking: true},
		"]~b]ai\n<minimax:tool_call>":                                                                    {},
		"<|im_system|>tool_declare<|im_middle|>{{ t }}<|tool_calls_section_begin|>## Return of {{ id }}": {Tools: ToolsKimi, Thinking: true},
		"<|im_system|>tool_declare<|im_middle|>{{ t }}<|tool_calls_section_begin|>":                      {},
		"<|tool_calls_section_begin|>## Return of {{ id }}<think>":                                       {Thinking: true},
	} {
		if got := DetectFormat(src); got != want {
			t.Errorf("%q: %+v, want %+v", src, got, want)
		}
	}
}
