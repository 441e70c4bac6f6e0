package callgrammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/jsonprefix"
)

// ErrGrammar is what Compile's errors wrap.
var ErrGrammar = errors.New("call grammar")

// MaxParameters bounds a tool's parameters, and the tools, which a Machine
// follows as bit sets.
const MaxParameters = 64

// MaxDepth bounds how deep a Gemma 4 value's {…} and […] nest (as JSON's).
const MaxDepth = jsonprefix.MaxDepth

// Syntax is the notation of a call.
type Syntax uint8

// Syntaxes of a call.
const (
	XML     Syntax = iota // <function=NAME><parameter=KEY>VALUE</parameter>…
	Gemma4                // call:NAME{KEY:VALUE,…}
	GLM                   // NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…
	MiniMax               // <invoke name="NAME"><parameter name="KEY">VALUE</parameter>…
)

// xmlTags are the texts of a call in the XML form's syntaxes (XML's and
// MiniMax-M2's): before the name and after it, after a parameter's '<p'
// and after its key, and after the '</' that ends the call. The byte a
// name or a key ends at is the first of nameEnd and keyEnd.
var xmlTags = [...]struct{ function, nameEnd, param, keyEnd, end string }{
	XML:     {"<function=", ">", "arameter=", ">", "function>"},
	MiniMax: {`<invoke name="`, `">`, `arameter name="`, `">`, "invoke>"},
	Gemma4:  {}, GLM: {},
}

// Layout is how a model lays the call out.
type Layout struct {
	Syntax Syntax
	// Open and Close are the call's markers: "<tool_call>" and
	// "</tool_call>" (Qwen, GLM: its Close must begin with "</"),
	// "<seed:tool_call>" and "</seed:tool_call>", "<|tool_call>" and
	// "<tool_call|>" (Gemma 4), "<minimax:tool_call>" and
	// "</minimax:tool_call>" (MiniMax-M2, laid out as Seed-OSS's: its
	// Newlines false).
	Open, Close string
	// Newlines: a line break after <parameter=KEY> and one before
	// </parameter> lay the value out (Qwen's templates); without them the
	// value stands between the tags (Seed-OSS's). In GLM's syntax, a line
	// break after the name, after each </arg_key> and after each
	// </arg_value> (GLM-4.5's templates); without them the parts stand
	// back to back (GLM-4.7's).
	Newlines bool
}

// glmNameStop are the bytes a tool's name may not hold in GLM's syntax:
// those the chat parser refuses in one (it reads the name up to <arg_key>
// and trims it).
const glmNameStop = "<>\"\n\r\t "

// Tool is a function the call may name, and the JSON schema of its
// arguments object.
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// Grammar is a compiled call grammar. It is immutable and may be shared.
type Grammar struct {
	syntax      Syntax
	open, close string
	term        string // what ends a value: [\n]</parameter>, </arg_value>, or Gemma 4's string quote
	sep         string // XML, GLM: what follows a value's end and the name's line: "\n" or ""
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
	kString              // Gemma 4: a <|"|> string
	kBool                // true or false
	kAny                 // Gemma 4: any value of its notation
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
	g := &Grammar{syntax: l.Syntax, open: l.Open, close: l.Close, term: xmlParamEnd, sep: "\n"}
	// What a name or key may not hold: the byte that ends it, and a line
	// break or the separators that would make it ambiguous.
	nameStop, keyStop := ">\n", ">\n"
	switch {
	case l.Syntax == Gemma4:
		g.term = gemma4Quote
		nameStop, keyStop = "{\n", ":},{\n"
	case l.Syntax == GLM:
		g.term, nameStop, keyStop = glmValueEnd, glmNameStop, "<>\n"
		if !l.Newlines {
			g.sep = ""
		}
	case l.Syntax == MiniMax: // a name or key ends at its closing quote
		nameStop, keyStop = "\"\n", "\"\n"
	case l.Newlines:
		g.term = "\n" + g.term
	}
	if len(tools) > MaxParameters {
		return nil, fmt.Errorf("%w: %d tools, more than %d", ErrGrammar, len(tools), MaxParameters)
	}
	for _, t := range tools {
		if t.Name == "" || slices.Contains(g.names, t.Name) || containsAny(t.Name, nameStop) {
			return nil, fmt.Errorf("%w: tool name %q is empty, repeated or holds one of %q", ErrGrammar, t.Name, nameStop)
		}
		ct, err := compileTool(t.Parameters, l.Syntax, keyStop)
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
func compileTool(raw json.RawMessage, syntax Syntax, keyStop string) (tool, error) {
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
		if name == "" || containsAny(name, keyStop) || name[0] == ' ' || name[0] == '\t' {
			return t, fmt.Errorf("parameter name %q is empty, begins with a space or holds one of %q", name, keyStop)
		}
		t.names = append(t.names, name)
	}
	slices.Sort(t.names)
	for i, name := range t.names {
		t.params = append(t.params, compileParam(schema.Properties[name], syntax))
		if slices.Contains(schema.Required, name) {
			t.required |= 1 << i
		}
	}
	return t, nil
}

// compileParam is what a property's schema holds its value to.
func compileParam(raw json.RawMessage, syntax Syntax) param {
	p := compileXMLParam(raw)
	if syntax == Gemma4 {
		switch p.kind {
		case kText:
			var s struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(raw, &s) == nil && s.Type == "string" {
				return param{kind: kString}
			}
			return param{kind: kAny}
		case kObject:
			return param{kind: kAny}
		}
	}
	return p
}

// compileXMLParam is what a property's schema holds its value to in the
// XML form.
func compileXMLParam(raw json.RawMessage) param {
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
		return param{kind: kBool, choices: []string{"true", "false"}}
	}
	return param{}
}
