// Package xmlgrammar holds generated text to one tool call in the XML form
// that Qwen 3.5/3.6, Qwen3-Coder and Seed-OSS write:
//
//	<tool_call>
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	</function>
//	</tool_call>
//
// (Seed-OSS's markers are <seed:tool_call> and </seed:tool_call>, and its
// values stand right after <parameter=KEY> and before </parameter>, without
// the newlines.) The name is one of the tools', each key one of that
// tool's parameters, at most once, and the call cannot close before its
// required parameters are given. A value follows its parameter's schema
// where a grammar of bytes can: an object's is JSON that the schema allows
// (jsonprefix), a number's or integer's a JSON number, a boolean's true or
// false, an enum's one of its strings; any other value (a string, an
// array, a parameter with no type or several) is free text that ends at
// the first </parameter>.
//
// A Machine recognizes the prefixes of such a call a byte at a time; a
// Filter is its sampler.Allower over a vocabulary, as jsonprefix.Filter
// is JSON's.
package xmlgrammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/jsonprefix"
)

// ErrGrammar is what Compile's errors wrap.
var ErrGrammar = errors.New("xml call grammar")

// MaxParameters bounds a tool's parameters, and the tools, which a Machine
// follows as bit sets.
const MaxParameters = 64

// Layout is how a model lays the call out.
type Layout struct {
	// Open and Close are the call's markers: "<tool_call>" and
	// "</tool_call>" (Qwen), "<seed:tool_call>" and "</seed:tool_call>".
	Open, Close string
	// Newlines: a line break after <parameter=KEY> and one before
	// </parameter> lay the value out (Qwen's templates); without them the
	// value stands between the tags (Seed-OSS's).
	Newlines bool
}

// Tool is a function the call may name, and the JSON schema of its
// arguments object.
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// Grammar is a compiled call grammar. It is immutable and may be shared.
type Grammar struct {
	open, close string
	term        string // what ends a value: [\n]</parameter>
	tools       []tool
	names       []string
}

type tool struct {
	params   []param
	names    []string
	required uint64
}

// kind is what a parameter's value is held to.
type kind uint8

const (
	kText    kind = iota // free text up to </parameter>
	kObject              // a JSON object its schema allows
	kNumber              // a JSON number
	kInteger             // a JSON number without fraction or exponent
	kChoice              // one of a list of texts (an enum, true/false)
)

type param struct {
	kind    kind
	object  *jsonprefix.Schema
	choices []string
}

// Compile builds the grammar of one call of one of tools laid out as l.
// A tool's parameters that are not a JSON object schema, or that name
// more than MaxParameters properties, are an error; a property's schema
// the grammar cannot follow makes its value free text.
func Compile(l Layout, tools []Tool) (*Grammar, error) {
	if len(tools) == 0 {
		return nil, fmt.Errorf("%w: no tools", ErrGrammar)
	}
	g := &Grammar{open: l.Open, close: l.Close, term: "</parameter>"}
	if l.Newlines {
		g.term = "\n" + g.term
	}
	if len(tools) > MaxParameters {
		return nil, fmt.Errorf("%w: %d tools, more than %d", ErrGrammar, len(tools), MaxParameters)
	}
	for _, t := range tools {
		if t.Name == "" || slices.Contains(g.names, t.Name) || containsAny(t.Name, ">\n") {
			return nil, fmt.Errorf("%w: tool name %q is empty, repeated or holds '>' or a line break", ErrGrammar, t.Name)
		}
		ct, err := compileTool(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %s: %w", ErrGrammar, t.Name, err)
		}
		g.tools = append(g.tools, ct)
		g.names = append(g.names, t.Name)
	}
	return g, nil
}

func containsAny(s, chars string) bool {
	for i := range len(s) {
		for j := range len(chars) {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

// compileTool reads the properties and required list of a parameters
// schema (none: a call without arguments).
func compileTool(raw json.RawMessage) (tool, error) {
	var t tool
	if len(raw) == 0 {
		return t, nil
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return t, fmt.Errorf("parameters are not a JSON object schema: %w", err)
	}
	if len(schema.Properties) > MaxParameters {
		return t, fmt.Errorf("%d parameters, more than %d", len(schema.Properties), MaxParameters)
	}
	for name := range schema.Properties {
		if name == "" || containsAny(name, ">\n") {
			return t, fmt.Errorf("parameter name %q is empty or holds '>' or a line break", name)
		}
		t.names = append(t.names, name)
	}
	slices.Sort(t.names)
	for i, name := range t.names {
		t.params = append(t.params, compileParam(schema.Properties[name]))
		if slices.Contains(schema.Required, name) {
			t.required |= 1 << i
		}
	}
	return t, nil
}

// compileParam is what a property's schema holds its value to.
func compileParam(raw json.RawMessage) param {
	var s struct {
		Type json.RawMessage `json:"type"`
		Enum []any           `json:"enum"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return param{}
	}
	var typ string
	_ = json.Unmarshal(s.Type, &typ) // a list of types, or none, is free text
	switch typ {
	case "string":
		var choices []string
		for _, v := range s.Enum {
			str, ok := v.(string)
			if !ok || str == "" || containsAny(str, "<\n") { // a value ends at the first '<' or line break
				return param{}
			}
			choices = append(choices, str)
		}
		if len(choices) > 0 && len(choices) <= 64 {
			return param{kind: kChoice, choices: choices}
		}
	case "object":
		if schema, err := jsonprefix.CompileLoose(raw); err == nil {
			return param{kind: kObject, object: schema}
		}
	case "number":
		return param{kind: kNumber}
	case "integer":
		return param{kind: kInteger}
	case "boolean":
		return param{kind: kChoice, choices: []string{"true", "false"}}
	}
	return param{}
}
