package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/callgrammar"
)

// ErrToolChoice is what CallSchema's errors wrap: a forced tool call that
// the format or the tools cannot give.
var ErrToolChoice = errors.New("chat: tool choice")

// Forces reports whether an OpenAI tool_choice forces a call: "required"
// or a tool's name do; "", "auto" and "none" do not.
func Forces(choice string) bool { return choice != "" && choice != "auto" && choice != "none" }

// CallSchema describes the one tool call that format f writes for a tool
// choice that Forces one ("required", or a tool's name): the text before
// the call's JSON object and the text after it, and a JSON schema of the
// object — the name of one of tools (of the tool chosen by name) and its
// arguments, which follow that tool's
// Parameters (with several tools, a union told apart by the name, which
// the call writes first). Llama 3's calls are the bare object with "parameters";
// Hermes/Qwen's are wrapped in <tool_call> and </tool_call> with
// "arguments"; Mistral's are a list of the one object after [TOOL_CALLS],
// or in its newer syntax [TOOL_CALLS]name[ARGS] and the arguments alone,
// which needs the name known (a named tool, or a single one), as does
// harmony's (gpt-oss: <|channel|>commentary to=functions.NAME
// <|constrain|>json<|message|> and the arguments, the call's header as the
// model writes it, skipping its analysis). The syntaxes that list calls
// write a list of the one object: Granite's after <|tool_call|>,
// Firefunction v2's after " functools",
// Nemotron's in <TOOLCALL>, Command R7B's in <|START_ACTION|> (its
// object {"tool_call_id": a string, "tool_name", "parameters"}),
// Apertus' in <|tools_prefix|> (its object {NAME: arguments}), LFM2's in
// <|tool_call_start|> (the JSON form llama.cpp forced before it read
// LFM2's Python calls, which the parser reads too). DeepSeek's, R1's
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME and a
// ```json block or V3.1's NAME<｜tool▁sep｜> and the arguments, need the
// name known too, as do Kimi K2's (a section of the one call
// <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|> and the
// arguments). Templates
// without a tool syntax cannot force a call: ErrToolChoice; the XML
// form's calls, Gemma 4's, GLM's and MiniMax-M2's, which are not JSON, are
// CallGrammar's (ErrToolChoice here).
func (f Format) CallSchema(tools []Tool, choice string) (prefix, suffix string, schema []byte, err error) {
	nameKey, args := "name", "arguments"
	switch {
	case f.grammarForm():
		return "", "", nil, fmt.Errorf("%w: the %s syntax's calls are not JSON (see CallGrammar)", ErrToolChoice, f.Tools)
	case f.Tools == ToolsLlama3:
		args = "parameters"
	case f.Tools == ToolsHermes:
		prefix, suffix = hermesOpen, hermesClose
	case f.Tools == ToolsMistral && !f.MistralArgs:
		prefix, suffix = mistralCalls+"[", "]"
	case f.Tools == ToolsGranite:
		prefix, suffix = graniteCall+"[", "]"
	case f.Tools == ToolsFirefunction:
		prefix, suffix = firefunctionCalls, "]"
	case f.Tools == ToolsApertus: // {NAME: arguments}, told apart by no constant
		return namedCall(tools, choice, "Apertus' {NAME: arguments}", func(name string) (string, string) {
			return apertusCallOpen + "[{" + string(jsonText(name)) + ": ", "}]" + apertusCallClose
		})
	case f.Tools == ToolsDeepSeek:
		return namedCall(tools, choice, "DeepSeek's", f.deepseekCallFrame)
	case f.Tools == ToolsKimi:
		return namedCall(tools, choice, "Kimi K2's", kimiCallFrame)
	case f.Tools == ToolsCommandR:
		nameKey, args = "tool_name", "parameters"
		fallthrough
	case f.listsCalls():
		open, close := f.callMarks()
		prefix, suffix = open+"[", "]"+close
	case f.Tools == ToolsMistral:
		return namedCall(tools, choice, "Mistral's name[ARGS]", func(name string) (string, string) { return mistralCalls + name + mistralArgs, "" })
	case f.Tools == ToolsHarmony:
		return namedCall(tools, choice, "harmony's to=functions.NAME", func(name string) (string, string) {
			return harmonyChannel + "commentary to=functions." + name + " " + harmonyConstrain + "json" + harmonyMessage, ""
		})
	default:
		return "", "", nil, fmt.Errorf("%w: forcing a call is not supported for the %s tool syntax", ErrToolChoice, f.Tools)
	}
	names, err := callable(tools, choice)
	if err != nil {
		return "", "", nil, err
	}

	// One object schema a tool; several are a union told apart by the
	// name, which the call then writes first.
	var calls []any
	for _, name := range names {
		props := map[string]any{nameKey: map[string]any{"const": name}, args: parameters(tools, name)}
		required := []string{nameKey, args}
		if f.Tools == ToolsCommandR {
			// llama.cpp holds the ID to ten digits, a pattern the schema
			// subset cannot hold: any string.
			props["tool_call_id"] = map[string]any{"type": "string"}
			required = append([]string{"tool_call_id"}, required...)
		}
		calls = append(calls, map[string]any{
			"type":                 "object",
			"properties":           props,
			"required":             required,
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

// callable are the names of the tools a call may name: all of them for
// "required", else the one chosen by name.
func callable(tools []Tool, choice string) ([]string, error) {
	var names []string
	for _, t := range tools {
		if choice == "required" || t.Name == choice {
			names = append(names, t.Name)
		}
	}
	switch {
	case len(tools) == 0:
		return nil, fmt.Errorf("%w: a call is forced but no tools are given", ErrToolChoice)
	case len(names) == 0:
		return nil, fmt.Errorf("%w: no tool is called %q", ErrToolChoice, choice)
	}
	return names, nil
}

// parameters is the schema of the arguments of the tool called name: its
// Parameters, or any object.
func parameters(tools []Tool, name string) json.RawMessage {
	i := slices.IndexFunc(tools, func(t Tool) bool { return t.Name == name })
	if p := tools[i].Parameters; len(p) > 0 {
		return p
	}
	return json.RawMessage(`{"type": "object"}`)
}

// namedCall is CallSchema for the syntaxes that write the name outside
// the arguments' JSON (syntax names one in errors): the call is framed by
// frame(name), so the name must be known.
func namedCall(tools []Tool, choice, syntax string, frame func(name string) (prefix, suffix string)) (string, string, []byte, error) {
	names, err := callable(tools, choice)
	if err != nil {
		return "", "", nil, err
	}
	if len(names) > 1 {
		return "", "", nil, fmt.Errorf("%w: %s syntax needs the tool named (tool_choice a function, or a single tool)", ErrToolChoice, syntax)
	}
	prefix, suffix := frame(names[0])
	return prefix, suffix, parameters(tools, names[0]), nil
}

// grammarForm reports whether format f's calls are not JSON: the XML
// form, Gemma 4's notation, GLM's pairs, or MiniMax-M2's invocations.
func (f Format) grammarForm() bool {
	switch f.Tools {
	case ToolsSeed, ToolsGemma4, ToolsGLM, ToolsMiniMax:
		return true
	}
	return f.Tools == ToolsHermes && f.XMLCalls
}

// CallGrammar is the grammar of the one call that format f writes for a
// tool choice that Forces one, when f's calls are not JSON: in the XML
// form (Qwen 3.5/3.6 and Qwen3-Coder's <tool_call><function=NAME>
// <parameter=KEY>…, Seed-OSS's in <seed:tool_call>), Gemma 4's
// <|tool_call>call:NAME{KEY:VALUE,…}<tool_call|>, GLM's
// <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…
// </tool_call> or MiniMax-M2's <minimax:tool_call><invoke name="NAME">
// <parameter name="KEY">VALUE</parameter>…</invoke></minimax:tool_call>
// (a part a line, as llama.cpp's grammar lays it out), laid out as their templates lay them out (GLM's a part a
// line where Format.GLMLines says so). The name is one of tools (the tool chosen by
// name), each parameter one of its own, the required ones given, and a
// value follows its schema where bytes can (callgrammar says how). For
// the other formats it is nil (see CallSchema).
func (f Format) CallGrammar(tools []Tool, choice string) (*callgrammar.Grammar, error) {
	if !f.grammarForm() {
		return nil, nil
	}
	names, err := callable(tools, choice)
	if err != nil {
		return nil, err
	}
	l := callgrammar.Layout{Open: hermesOpen, Close: hermesClose, Newlines: true}
	switch f.Tools {
	case ToolsSeed:
		l = callgrammar.Layout{Open: seedCallOpen, Close: seedCallClose}
	case ToolsGemma4:
		l = callgrammar.Layout{Syntax: callgrammar.Gemma4, Open: gemma4CallOpen, Close: gemma4CallClose}
	case ToolsGLM:
		l = callgrammar.Layout{Syntax: callgrammar.GLM, Open: hermesOpen, Close: hermesClose, Newlines: f.GLMLines}
	case ToolsMiniMax:
		l = callgrammar.Layout{Syntax: callgrammar.MiniMax, Open: minimaxCallsOpen, Close: minimaxCallsClose}
	}
	var ts []callgrammar.Tool
	for _, name := range names {
		ts = append(ts, callgrammar.Tool{Name: name, Parameters: parameters(tools, name)})
	}
	g, err := callgrammar.Compile(l, ts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrToolChoice, err)
	}
	return g, nil
}

// CheckToolChoice reports whether format f can force a call for choice
// among tools (nil when choice forces none): the error CallGrammar or
// CallSchema gives.
func (f Format) CheckToolChoice(tools []Tool, choice string) error {
	if !Forces(choice) {
		return nil
	}
	if f.grammarForm() {
		_, err := f.CallGrammar(tools, choice)
		return err
	}
	_, _, _, err := f.CallSchema(tools, choice)
	return err
}
