package chat

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestCallSchema(t *testing.T) {
	weather := Tool{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	clock := Tool{Name: "clock"}
	tests := []struct {
		name           string
		f              Format
		tools          []Tool
		call           string
		prefix, suffix string
		names          []string
		args, params   string // the arguments' key and schema
		err            bool
	}{
		{"llama3, any tool", Format{Tools: ToolsLlama3}, []Tool{weather, clock}, "", "", "", []string{"weather", "clock"}, "parameters", `{"type":"object"}`, false},
		{"hermes, named", Format{Tools: ToolsHermes}, []Tool{weather, clock}, "weather", "<tool_call>", "</tool_call>", []string{"weather"}, "arguments", string(weather.Parameters), false},
		{"hermes, one tool without parameters", Format{Tools: ToolsHermes}, []Tool{clock}, "", "<tool_call>", "</tool_call>", []string{"clock"}, "arguments", `{"type":"object"}`, false},
		{"mistral", Format{Tools: ToolsMistral}, []Tool{weather}, "", "", "", nil, "", "", true},
		{"no syntax", Format{}, []Tool{weather}, "", "", "", nil, "", "", true},
		{"no tools", Format{Tools: ToolsHermes}, nil, "", "", "", nil, "", "", true},
		{"unknown name", Format{Tools: ToolsHermes}, []Tool{weather}, "news", "", "", nil, "", "", true},
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
			var s struct {
				Properties map[string]json.RawMessage
				Required   []string
			}
			if err != nil || json.Unmarshal(schema, &s) != nil {
				t.Fatalf("schema %s, %v", schema, err)
			}
			var name struct{ Enum []string }
			json.Unmarshal(s.Properties["name"], &name)
			var params, want any
			json.Unmarshal(s.Properties[tc.args], &params)
			json.Unmarshal([]byte(tc.params), &want)
			if prefix != tc.prefix || suffix != tc.suffix || !equalJSON(params, want) || len(name.Enum) != len(tc.names) || len(s.Required) != 2 {
				t.Fatalf("%q %q %s", prefix, suffix, schema)
			}
			for i, n := range tc.names {
				if name.Enum[i] != n {
					t.Fatalf("names %v, want %v", name.Enum, tc.names)
				}
			}
		})
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
