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

const (
	xmlFunction  = "<function="
	xmlFuncEnd   = "</function>"
	xmlParameter = "<parameter="
	xmlParamEnd  = "</parameter>"
)

// xmlMarkers are the XML form's tags, which a vocabulary may hold as
// control tokens (llama.cpp preserves them for Seed-OSS and Qwen3-Coder).
var xmlMarkers = []string{xmlFunction, xmlFuncEnd, xmlParameter, xmlParamEnd}

// parseXMLCall reads a call in the XML form from body (what stands between
// <tool_call> and </tool_call>), typing its values by tools' schemas.
func parseXMLCall(body string, tools []Tool) (ToolCall, bool) {
	body = strings.TrimSpace(body)
	rest, ok := strings.CutPrefix(body, xmlFunction)
	if !ok {
		return ToolCall{}, false
	}
	end := strings.IndexByte(rest, '>')
	if end <= 0 {
		return ToolCall{}, false
	}
	name := strings.TrimSpace(rest[:end])
	rest, ok = strings.CutSuffix(strings.TrimSpace(rest[end+1:]), xmlFuncEnd)
	if !ok || name == "" {
		return ToolCall{}, false
	}
	args := newArgs(tools, name)
	for {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		r, ok := strings.CutPrefix(rest, xmlParameter)
		if !ok {
			return ToolCall{}, false
		}
		end := strings.IndexByte(r, '>')
		stop := strings.Index(r, xmlParamEnd)
		if end <= 0 || stop < end {
			return ToolCall{}, false
		}
		value := strings.TrimPrefix(r[end+1:stop], "\n")
		args.add(strings.TrimSpace(r[:end]), strings.TrimSuffix(value, "\n"))
		rest = r[stop+len(xmlParamEnd):]
	}
	return args.call(name), true
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
