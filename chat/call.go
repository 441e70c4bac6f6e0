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
// Parameters when a single tool can be called, and are any object
// otherwise. Llama 3's calls are the bare object with "parameters";
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
	params := json.RawMessage(`{"type": "object"}`)
	if len(names) == 1 {
		i := slices.IndexFunc(tools, func(t Tool) bool { return t.Name == names[0] })
		if p := tools[i].Parameters; len(p) > 0 {
			params = p
		}
	}
	schema, err = json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"enum": names},
			args:   params,
		},
		"required":             []string{"name", args},
		"additionalProperties": false,
	})
	return prefix, suffix, schema, err
}
