package chat

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/lowmem/llm/internal/testutil"
)

// FuzzRender: any template and message either renders or fails with one of
// the package's errors; it never panics or runs unbounded.
func FuzzRender(f *testing.F) {
	f.Add(ChatML, "Hello", true)
	f.Add("{% for m in messages %}{{ m.role }}: {{ m.content|trim }}\n{% endfor %}", " hi ", false)
	f.Add("{{ raise_exception('x') }}", "", true)
	f.Add(testutil.GLMTemplate, "Hi/nothink", true)
	f.Fuzz(func(t *testing.T, src, content string, agp bool) {
		msgs := []Message{
			{Role: RoleSystem, Content: content},
			{Role: RoleUser, Content: content},
			{Role: RoleAssistant, Content: content, ToolCalls: []ToolCall{{Name: "f", Arguments: content}}},
		}
		_, err := Render(src, msgs, RenderOptions{
			AddGenerationPrompt: agp,
			BOSToken:            "<s>",
			Now:                 time.Unix(0, 0),
			Tools:               []Tool{{Name: "f", Parameters: []byte(`{"type":"object"}`)}},
			Limits:              Limits{MaxSteps: 200_000, MaxBytes: 16 << 20},
		})
		if err != nil && !errors.Is(err, ErrTemplate) && !errors.Is(err, ErrNoTemplate) && !errors.Is(err, ErrBadMessage) {
			t.Fatalf("error wraps no chat sentinel: %v", err)
		}
	})
}

// FuzzParseOutput: streaming any output in any piece size gives the message
// parsing it whole gives.
func FuzzParseOutput(f *testing.F) {
	for _, seed := range []struct {
		out          string
		syntax, size uint8
	}{
		{"<think>\nhm\n</think>\n\nok", 130, 3},
		{"<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>", 10, 5},
		{`{"name": "f", "parameters": {"a": 1}}`, 9, 2},
		{`[TOOL_CALLS][{"name": "f", "arguments": {}}]`, 11, 7},
		{"<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>ok", 4, 2},
		{"<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}", 12, 3},
		{"<|channel>thought\nhm<channel|>ok<|tool_call>call:f{a:<|\"|>x<|\"|>,b:[1,{c:null}]}<tool_call|>", 141, 2},
		{"<seed:think>hm</seed:think>\n<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>", 142, 4},
		{"<think>hm</think>\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", 143, 5},
		{"hm</think><tool_call>f<arg_key>s</arg_key><arg_value>x</tool_call></arg_value><arg_key>n</arg_key><arg_value>2.5</arg_value></tool_call>", 159, 3},
		{"<tool_call>f<arg_key>n</arg_key><arg_value>{\"a\":[1]}", 47, 1},
		// The syntaxes that list calls (bit 64; ToolsCommandR + the low
		// bits, each with tools offered and thinking on: Command R7B 232,
		// Granite 233, Nemotron 234, Apertus 235 with the schema's types too,
		// LFM2 204, DeepSeek 205, Kimi K2 206 and 222 with the reply opened
		// in thinking, MiniMax-M2 239 with the schema's types).
		{"<|START_THINKING|>hm<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {\"a\": 1}}]<|END_ACTION|>", 232, 3},
		{"<|START_RESPONSE|>ok<|END_RESPONSE|>", 64, 5},
		{"<think>hm</think><response>x</response><|tool_call|>[{\"name\": \"f\", \"arguments\": {}}]", 233, 2},
		{"<think>hm</think><TOOLCALL>[{\"name\": \"f\", \"arguments\": {\"s\": \"</TOOLCALL>\"}}]</TOOLCALL>", 234, 4},
		{"<|inner_prefix|>hm<|inner_suffix|><|tools_prefix|>[{\"f\": {\"n\": 2}}]<|tools_suffix|>", 235, 6},
		{"<think>hm</think>ok<|tool_call_start|>[f(s='a\\'b', n=-1.5e3, l=[True, None, {'k': \"v\"}]), g()]<|tool_call_end|>", 204, 5},
		{"<think>hm</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"n\": 1}\n```<｜tool▁call▁end｜>" +
			"<｜tool▁call▁begin｜>g<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", 205, 7},
		{"<think>hm</think>ok<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"n\": 1}<|tool_call_end|>" +
			"<|tool_call_begin|>g<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>", 206, 3},
		{"hm<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|> more</think>ok", 222, 5},
		{"<think>hm</think>ok<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"s\">1</parameter>\n<parameter name=\"n\">2</parameter>\n" +
			"</invoke>\n<invoke name=\"g\">\n</invoke>\n</minimax:tool_call>", 239, 4},
		// Magistral: Mistral's with thinking on and bit 32 (168 + 3).
		{"[THINK]hm[/THINK]ok[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]", 171, 3},
		// Firefunction v2: no syntax with tools and bit 32 (40).
		{"ok functools[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]", 40, 4},
	} {
		f.Add(seed.out, seed.syntax, seed.size)
	}
	defs := []Tool{{Name: "f", Parameters: []byte(`{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"}}}`)}}
	f.Fuzz(func(t *testing.T, out string, syntax, size uint8) {
		// Bits 0-2 pick the syntax (with bit 64, one of the eight that list
		// calls), 8 offers tools, 16 opens the reply in thinking, 32 types
		// values by a schema (Mistral's, which has none, reasons in
		// Magistral's [THINK] with it, and no syntax becomes Firefunction
		// v2's), 128 turns thinking on: each on its own bits, so that every
		// seed below runs the parser its text is for.
		fm := Format{Tools: ToolSyntax(syntax & 7), Thinking: syntax&128 != 0}
		if syntax&64 != 0 {
			fm.Tools = ToolsCommandR + ToolSyntax(syntax&7)
		}
		opts := ParseOptions{Tools: syntax&8 != 0, ThinkingOpen: syntax&16 != 0}
		if syntax&32 != 0 {
			opts.Defs = defs // values typed by a schema (the XML form's, GLM's)
			fm.MistralThink = fm.Tools == ToolsMistral && fm.Thinking
			if fm.Tools == ToolsNone {
				fm.Tools = ToolsFirefunction
			}
		}
		opts.NewID = seqIDs()
		whole := ParseOutput(out, fm, opts)
		opts.NewID = seqIDs()
		p := NewParser(fm, opts)
		n := int(size%16) + 1
		for i := 0; i < len(out); i += n {
			p.Push(out[i:min(len(out), i+n)])
		}
		p.Finish()
		if !reflect.DeepEqual(p.Message(), whole) {
			t.Fatalf("streamed %+v\nwhole    %+v", p.Message(), whole)
		}
	})
}
