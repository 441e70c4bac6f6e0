package chat

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/lowmem/llm/internal/callgrammar"
)

func TestCallSchema(t *testing.T) {
	weather := Tool{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	clock := Tool{Name: "clock"}
	call := func(args, name, params string) string {
		return `{"additionalProperties":false,"properties":{"` + args + `":` + params + `,"name":{"const":"` + name + `"}},"required":["name","` + args + `"],"type":"object"}`
	}
	tests := []struct {
		name           string
		f              Format
		tools          []Tool
		call           string
		prefix, suffix string
		schema         string
		err            bool
	}{
		{"llama3, any tool", Format{Tools: ToolsLlama3}, []Tool{weather, clock}, "required", "", "",
			`{"anyOf":[` + call("parameters", "weather", string(weather.Parameters)) + `,` + call("parameters", "clock", `{"type":"object"}`) + `]}`, false},
		{"hermes, named", Format{Tools: ToolsHermes}, []Tool{weather, clock}, "weather", "<tool_call>", "</tool_call>", call("arguments", "weather", string(weather.Parameters)), false},
		{"hermes, one tool without parameters", Format{Tools: ToolsHermes}, []Tool{clock}, "required", "<tool_call>", "</tool_call>", call("arguments", "clock", `{"type":"object"}`), false},
		{"mistral", Format{Tools: ToolsMistral}, []Tool{weather}, "required", "[TOOL_CALLS][", "]", call("arguments", "weather", string(weather.Parameters)), false},
		{"mistral [ARGS], named", Format{Tools: ToolsMistral, MistralArgs: true}, []Tool{weather, clock}, "weather", "[TOOL_CALLS]weather[ARGS]", "", string(weather.Parameters), false},
		{"mistral [ARGS], one tool", Format{Tools: ToolsMistral, MistralArgs: true}, []Tool{clock}, "required", "[TOOL_CALLS]clock[ARGS]", "", `{"type":"object"}`, false},
		{"mistral [ARGS], several", Format{Tools: ToolsMistral, MistralArgs: true}, []Tool{weather, clock}, "required", "", "", "", true},
		{"harmony, named", Format{Tools: ToolsHarmony}, []Tool{weather, clock}, "weather", "<|channel|>commentary to=functions.weather <|constrain|>json<|message|>", "", string(weather.Parameters), false},
		{"harmony, one tool", Format{Tools: ToolsHarmony}, []Tool{clock}, "required", "<|channel|>commentary to=functions.clock <|constrain|>json<|message|>", "", `{"type":"object"}`, false},
		{"harmony, several", Format{Tools: ToolsHarmony}, []Tool{weather, clock}, "required", "", "", "", true},
		{"no syntax", Format{}, []Tool{weather}, "required", "", "", "", true},
		{"gemma 4", Format{Tools: ToolsGemma4, Thinking: true}, []Tool{weather}, "required", "", "", "", true},
		{"xml form", Format{Tools: ToolsHermes, XMLCalls: true}, []Tool{weather}, "required", "", "", "", true},
		{"seed", Format{Tools: ToolsSeed, Thinking: true}, []Tool{weather}, "required", "", "", "", true},
		{"minimax-m2", Format{Tools: ToolsMiniMax, Thinking: true}, []Tool{weather}, "required", "", "", "", true},
		{"no tools", Format{Tools: ToolsHermes}, nil, "required", "", "", "", true},
		{"unknown name", Format{Tools: ToolsHermes}, []Tool{weather}, "news", "", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix, suffix, schema, err := tc.f.CallSchema(tc.tools, tc.call)
			if tc.err {
				if !errors.Is(err, ErrToolChoice) {
					t.Fatalf("err %v, want ErrToolChoice", err)
				}
				return
			}
			if err != nil || prefix != tc.prefix || suffix != tc.suffix || normal(schema) != normal([]byte(tc.schema)) {
				t.Fatalf("%q %q %s, %v\nwant schema %s", prefix, suffix, schema, err, tc.schema)
			}
		})
	}
}

// normal is JSON written again with Go's key order, to compare texts.
func normal(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return "invalid: " + string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestForces(t *testing.T) {
	for choice, want := range map[string]bool{"": false, "auto": false, "none": false, "required": true, "weather": true} {
		if Forces(choice) != want {
			t.Errorf("Forces(%q) = %v, want %v", choice, !want, want)
		}
	}
}

// TestCallGrammar: the formats whose calls are not JSON (the XML form's,
// Gemma 4's) force a call by a grammar whose calls parse back to the tool
// called; the others have none; a choice of no tool is ErrToolChoice.
func TestCallGrammar(t *testing.T) {
	weather := Tool{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`)}
	clock := Tool{Name: "clock"}
	qwen := Format{Tools: ToolsHermes, Thinking: true, XMLCalls: true}
	seed := Format{Tools: ToolsSeed, Thinking: true}
	for _, c := range []struct {
		name   string
		f      Format
		choice string
		out    string // a call the grammar takes whole
		want   ToolCall
	}{
		{"qwen, named", qwen, "weather", "<tool_call>\n<function=weather>\n<parameter=days>\n3\n</parameter>\n<parameter=city>\n12\n</parameter>\n</function>\n</tool_call>",
			ToolCall{ID: "call_1", Name: "weather", Arguments: `{"days":3,"city":"12"}`}},
		{"qwen, any", qwen, "required", "<tool_call>\n<function=clock>\n</function>\n</tool_call>", ToolCall{ID: "call_1", Name: "clock", Arguments: `{}`}},
		{"seed", seed, "weather", "<seed:tool_call>\n<function=weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
			ToolCall{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`}},
		{"gemma 4", Format{Tools: ToolsGemma4, Thinking: true}, "required", `<|tool_call>call:weather{days:3,city:<|"|>Paris<|"|>}<tool_call|>`,
			ToolCall{ID: "call_1", Name: "weather", Arguments: `{"days":3,"city":"Paris"}`}},
		{"glm 4.5", Format{Tools: ToolsGLM, Thinking: true, GLMLines: true}, "weather",
			"<tool_call>weather\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n<arg_key>city</arg_key>\n<arg_value>12</arg_value>\n</tool_call>",
			ToolCall{ID: "call_1", Name: "weather", Arguments: `{"days":3,"city":"12"}`}},
		{"glm 4.7", Format{Tools: ToolsGLM, Thinking: true}, "required", "<tool_call>clock</tool_call>", ToolCall{ID: "call_1", Name: "clock", Arguments: `{}`}},
		{"minimax-m2", Format{Tools: ToolsMiniMax, Thinking: true}, "weather", "<minimax:tool_call>\n<invoke name=\"weather\">\n" +
			"<parameter name=\"days\">3</parameter>\n<parameter name=\"city\">12</parameter>\n</invoke>\n</minimax:tool_call>",
			ToolCall{ID: "call_1", Name: "weather", Arguments: `{"days":3,"city":"12"}`}},
		{"minimax-m2, any", Format{Tools: ToolsMiniMax, Thinking: true}, "required", "<minimax:tool_call>\n<invoke name=\"clock\">\n</invoke>\n</minimax:tool_call>",
			ToolCall{ID: "call_1", Name: "clock", Arguments: `{}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := c.f.CallGrammar([]Tool{weather, clock}, c.choice)
			if err != nil || g == nil {
				t.Fatalf("grammar %v, %v", g, err)
			}
			m := callgrammar.NewMachine(g)
			if !m.Write([]byte(c.out)) || !m.Done() {
				t.Fatalf("the grammar does not take %q whole", c.out)
			}
			got := ParseOutput(c.out, c.f, ParseOptions{Tools: true, Defs: []Tool{weather, clock}, NewID: seqIDs()})
			if len(got.ToolCalls) != 1 || got.ToolCalls[0] != c.want || got.Content != "" {
				t.Errorf("parsed %+v, want %+v", got, c.want)
			}
			if err := c.f.CheckToolChoice([]Tool{weather, clock}, c.choice); err != nil {
				t.Errorf("CheckToolChoice: %v", err)
			}
		})
	}
	if g, err := (Format{Tools: ToolsHermes}).CallGrammar([]Tool{weather}, "required"); g != nil || err != nil {
		t.Errorf("hermes' JSON: grammar %v, %v; want none", g, err)
	}
	for name, check := range map[string]error{
		"no such tool":     qwen.CheckToolChoice([]Tool{weather}, "news"),
		"no tools":         seed.CheckToolChoice(nil, "required"),
		"gemma 4, {":       Format{Tools: ToolsGemma4}.CheckToolChoice([]Tool{{Name: "a{"}}, "required"),
		"glm, a space":     Format{Tools: ToolsGLM}.CheckToolChoice([]Tool{{Name: "a b"}}, "required"),
		"minimax, a quote": Format{Tools: ToolsMiniMax}.CheckToolChoice([]Tool{{Name: `a"b`}}, "required"),
	} {
		if !errors.Is(check, ErrToolChoice) {
			t.Errorf("%s: %v, want ErrToolChoice", name, check)
		}
	}
	if err := (Format{}).CheckToolChoice(nil, "auto"); err != nil {
		t.Errorf("auto: %v", err)
	}
}
