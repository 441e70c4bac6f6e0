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
	f.Add("<think>\nhm\n</think>\n\nok", uint8(1), uint8(3))
	f.Add("<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>", uint8(1), uint8(5))
	f.Add(`{"name": "f", "parameters": {"a": 1}}`, uint8(2), uint8(2))
	f.Add(`[TOOL_CALLS][{"name": "f", "arguments": {}}]`, uint8(3), uint8(7))
	f.Add("<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>ok", uint8(4), uint8(2))
	f.Add("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}", uint8(24), uint8(3))
	f.Add("<|channel>thought\nhm<channel|>ok<|tool_call>call:f{a:<|\"|>x<|\"|>,b:[1,{c:null}]}<tool_call|>", uint8(12), uint8(2))
	f.Add("<seed:think>hm</seed:think>\n<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>", uint8(13), uint8(4))
	f.Add("<think>hm</think>\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", uint8(15), uint8(5))
	f.Add("hm</think><tool_call>f<arg_key>s</arg_key><arg_value>x</tool_call></arg_value><arg_key>n</arg_key><arg_value>2.5</arg_value></tool_call>", uint8(31), uint8(3))
	f.Add("<tool_call>f<arg_key>n</arg_key><arg_value>{\"a\":[1]}", uint8(47), uint8(1))
	// The syntaxes that list calls (bit 64; the syntax ToolsCommandR +
	// syntax%5: Command R7B 110, Granite 76, Nemotron 77, Apertus 78,
	// LFM2 79, each with tools offered and thinking on).
	f.Add("<|START_THINKING|>hm<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {\"a\": 1}}]<|END_ACTION|>", uint8(110), uint8(3))
	f.Add("<|START_RESPONSE|>ok<|END_RESPONSE|>", uint8(64+30), uint8(5))
	f.Add("<think>hm</think><response>x</response><|tool_call|>[{\"name\": \"f\", \"arguments\": {}}]", uint8(76), uint8(2))
	f.Add("<think>hm</think><TOOLCALL>[{\"name\": \"f\", \"arguments\": {\"s\": \"</TOOLCALL>\"}}]</TOOLCALL>", uint8(77), uint8(4))
	f.Add("<|inner_prefix|>hm<|inner_suffix|><|tools_prefix|>[{\"f\": {\"n\": 2}}]<|tools_suffix|>", uint8(78), uint8(6))
	f.Add("<think>hm</think>ok<|tool_call_start|>[f(s='a\\'b', n=-1.5e3, l=[True, None, {'k': \"v\"}]), g()]<|tool_call_end|>", uint8(79), uint8(5))
	defs := []Tool{{Name: "f", Parameters: []byte(`{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"}}}`)}}
	f.Fuzz(func(t *testing.T, out string, syntax, size uint8) {
		fm := Format{Tools: ToolSyntax(syntax % 8), Thinking: syntax&4 != 0}
		if syntax&64 != 0 {
			fm.Tools = ToolsCommandR + ToolSyntax(syntax%5)
		}
		opts := ParseOptions{Tools: syntax&8 != 0, ThinkingOpen: syntax&16 != 0}
		if syntax&32 != 0 {
			opts.Defs = defs // values typed by a schema (the XML form's, GLM's)
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
