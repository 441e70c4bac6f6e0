package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ErrToolChoice is what CallSchema's errors wrap: a forced tool call that
// the format or the tools cannot give.
var ErrToolChoice = errors.New("chat: tool choice")

// CallSchema describes the one tool call that format f writes when a call
// is forced (OpenAI's tool_choice "required", or a tool's name): the text
// before the call's JSON object and the text after it, and a JSON schema
// of the object — the name of one of tools (of the tool called name, when
// name is not empty) and its arguments, which follow that tool's
// Parameters (with several tools, a union told apart by the name, which
// the call writes first). Llama 3's calls are the bare object with "parameters";
// Hermes/Qwen's are wrapped in <tool_call> and </tool_call> with
// "arguments". Mistral's calls (a list after [TOOL_CALLS]) and templates
// without a tool syntax cannot be forced: ErrToolChoice.
func (f Format) CallSchema(tools []Tool, name string) (prefix, suffix string, schema []byte, err error) {
	args := "arguments"
	switch f.Tools {
	case ToolsLlama3:
		args = "parameters"
	case ToolsHermes:
		prefix, suffix = hermesOpen, hermesClose
	default:
		return "", "", nil, fmt.Errorf("%w: forcing a call is not supported for the %s tool syntax", ErrToolChoice, f.Tools)
	}
	var names []string
	for _, t := range tools {
		if name == "" || t.Name == name {
			names = append(names, t.Name)
		}
	}
	switch {
	case len(tools) == 0:
		return "", "", nil, fmt.Errorf("%w: a call is forced but no tools are given", ErrToolChoice)
	case len(names) == 0:
		return "", "", nil, fmt.Errorf("%w: no tool is called %q", ErrToolChoice, name)
	}
	// One object schema a tool; several are a union told apart by the
	// name, which the call then writes first.
	var calls []any
	for _, name := range names {
		params := json.RawMessage(`{"type": "object"}`)
		i := slices.IndexFunc(tools, func(t Tool) bool { return t.Name == name })
		if p := tools[i].Parameters; len(p) > 0 {
			params = p
		}
		calls = append(calls, map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name": map[string]any{"const": name},
				args:   params,
			},
			"required":             []string{"name", args},
			"additionalProperties": false,
		})
	}
	if len(calls) == 1 {
		schema, err = json.Marshal(calls[0])
	} else {
		schema, err = json.Marshal(map[string]any{"anyOf": calls})
	}
	return prefix, suffix, schema, err
}
