package chat

import (
	"encoding/json"
	"errors"
	"testing"
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
