package chat

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// The XML form of a call, which Qwen 3 Coder, Qwen 3.5 and Qwen 3.6 write
// inside <tool_call> (their templates render calls so), in place of
// Hermes' JSON object:
//
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	…
//	</function>
//
// A value is text: one newline after its opening tag and one before its
// closing tag are layout, not value. As llama.cpp's Qwen3-Coder parser
// reads them, a value stays a string where the offered tool's schema
// types the parameter a string, and otherwise is the JSON it parses as
// (a number, an object …), or a string when it parses as none.
//
// Seed-OSS writes the same form between <seed:tool_call> and
// </seed:tool_call>, values without the newlines around them, and its
// reasoning between <seed:think> and </seed:think>.
const (
	seedThinkOpen  = "<seed:think>"
	seedThinkClose = "</seed:think>"
	seedCallOpen   = "<seed:tool_call>"
	seedCallClose  = "</seed:tool_call>"
)

// MiniMax-M2 and M2.1 write their calls, one <invoke> or more (xmlTags),
// between <minimax:tool_call> and </minimax:tool_call>. llama.cpp tells
// their templates by the markers of their turns.
const (
	minimaxDetect     = "]~!b["
	minimaxRole       = "]~b]"
	minimaxCallsOpen  = "<minimax:tool_call>"
	minimaxCallsClose = "</minimax:tool_call>"
	minimaxInvoke     = `<invoke name="`
	minimaxInvokeEnd  = "</invoke>"
	minimaxParameter  = `<parameter name="`
)

const (
	xmlFunction  = "<function="
	xmlFuncEnd   = "</function>"
	xmlParameter = "<parameter="
	xmlParamEnd  = "</parameter>"
)

// xmlMarkers are the XML form's tags, which a vocabulary may hold as
// control tokens (llama.cpp preserves them for Seed-OSS and Qwen3-Coder).
var xmlMarkers = []string{xmlFunction, xmlFuncEnd, xmlParameter, xmlParamEnd}

// xmlTags are the tags of a call in an XML-like form: the XML form's
// (<function=NAME> …), or MiniMax-M2's
//
//	<invoke name="NAME">
//	<parameter name="KEY">VALUE</parameter>
//	…
//	</invoke>
//
// whose values are the text between the tags as it is (llama.cpp's
// MiniMax-M2 parser trims none), typed as the XML form's.
type xmlTags struct {
	open, nameEnd, close string // around the name, and what ends the call
	param, keyEnd        string // around a parameter's key
	// newlines: one newline after a value's opening tag and one before
	// its closing tag are layout.
	newlines bool
}

var (
	xmlForm     = xmlTags{xmlFunction, ">", xmlFuncEnd, xmlParameter, ">", true}
	minimaxTags = xmlTags{minimaxInvoke, `">`, minimaxInvokeEnd, minimaxParameter, `">`, false}
)

// parseXMLCall reads a call in the XML form from body (what stands between
// <tool_call> and </tool_call>), typing its values by tools' schemas.
func parseXMLCall(body string, tools []Tool) (ToolCall, bool) {
	calls, ok := xmlForm.calls(body, tools)
	if !ok || len(calls) != 1 {
		return ToolCall{}, false
	}
	return calls[0], true
}

// calls reads one call or more in the form t from body, with only
// whitespace around and between them, typing their values by tools'
// schemas.
func (t xmlTags) calls(body string, tools []Tool) ([]ToolCall, bool) {
	var calls []ToolCall
	for rest := strings.TrimSpace(body); rest != ""; rest = strings.TrimSpace(rest) {
		c, r, ok := t.call(rest, tools)
		if !ok {
			return nil, false
		}
		calls, rest = append(calls, c), r
	}
	return calls, len(calls) > 0
}

// call reads the call that s begins with, and returns what follows it.
func (t xmlTags) call(s string, tools []Tool) (ToolCall, string, bool) {
	rest, ok := strings.CutPrefix(s, t.open)
	end := strings.Index(rest, t.nameEnd)
	if !ok || end <= 0 {
		return ToolCall{}, "", false
	}
	name := strings.TrimSpace(rest[:end])
	if name == "" {
		return ToolCall{}, "", false
	}
	args := newArgs(tools, name)
	rest = rest[end+len(t.nameEnd):]
	for {
		rest = strings.TrimSpace(rest)
		if r, ok := strings.CutPrefix(rest, t.close); ok {
			return args.call(name), r, true
		}
		r, ok := strings.CutPrefix(rest, t.param)
		if !ok {
			return ToolCall{}, "", false
		}
		end := strings.Index(r, t.keyEnd)
		stop := strings.Index(r, xmlParamEnd)
		if end <= 0 || stop < end+len(t.keyEnd) {
			return ToolCall{}, "", false
		}
		value := r[end+len(t.keyEnd) : stop]
		if t.newlines {
			value = strings.TrimSuffix(strings.TrimPrefix(value, "\n"), "\n")
		}
		args.add(strings.TrimSpace(r[:end]), value)
		rest = r[stop+len(xmlParamEnd):]
	}
}

// callArgs builds the arguments object of a call whose values are text
// (the XML form's, GLM's), each typed by the called tool's schema
// (xmlValue). A key given again takes the later value in its first place,
// as llama.cpp's object does.
type callArgs struct {
	types  map[string]string
	keys   []string
	values [][]byte
}

// newArgs starts the arguments of a call of the tool called name, among
// tools.
func newArgs(tools []Tool, name string) *callArgs {
	return &callArgs{types: paramTypes(tools, name)}
}

// add sets key to value, typed by the key's schema type.
func (a *callArgs) add(key, value string) {
	v := xmlValue(value, a.types[key])
	if i := slices.Index(a.keys, key); i >= 0 {
		a.values[i] = v
		return
	}
	a.keys = append(a.keys, key)
	a.values = append(a.values, v)
}

// call is the tool call named name with the arguments added.
func (a *callArgs) call(name string) ToolCall {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range a.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonText(k))
		b.WriteByte(':')
		b.Write(a.values[i])
	}
	b.WriteByte('}')
	return ToolCall{Name: name, Arguments: normalizeArgs(b.Bytes())}
}

// xmlValue is a parameter's value as JSON: a string when its schema type
// is "string" or it parses as no JSON, else the JSON it is.
func xmlValue(value, typ string) []byte {
	if typ != "string" {
		if v := []byte(strings.TrimSpace(value)); len(v) > 0 && json.Valid(v) {
			return v
		}
	}
	return jsonText(value)
}

// jsonText is s as a JSON string, with <, > and & as they are (as
// llama.cpp writes arguments), not escaped as json.Marshal escapes them.
func jsonText(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// paramTypes maps the parameters of the tool called name, among tools, to
// their schemas' types ("" where a schema has none, or names several).
func paramTypes(tools []Tool, name string) map[string]string {
	for _, t := range tools {
		if t.Name != name {
			continue
		}
		var schema struct {
			Properties map[string]struct {
				Type json.RawMessage `json:"type"`
			} `json:"properties"`
		}
		if json.Unmarshal(t.Parameters, &schema) != nil {
			return nil
		}
		types := map[string]string{}
		for k, p := range schema.Properties {
			var typ string
			if json.Unmarshal(p.Type, &typ) == nil {
				types[k] = typ
			}
		}
		return types
	}
	return nil
}
