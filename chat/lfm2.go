package chat

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LFM2 and LFM2.5 write their calls between <|tool_call_start|> and
// <|tool_call_end|> as a Python list of calls,
//
//	[get_weather(city="Paris", days=3), clock()]
//
// each argument KEY=VALUE, a value a Python literal: a string in double
// or single quotes, a number, True/False/None (or JSON's true/false/null,
// which llama.cpp takes too), a list or a dict of them. Their reasoning,
// where the template has it, is in <think>…</think>. llama.cpp tells them
// by the tool list's markers in the template (LFM2) or by its plain
// "List of tools: [" without them (LFM2.5).
const (
	lfm2ListOpen  = "<|tool_list_start|>"
	lfm2ListClose = "<|tool_list_end|>"
	lfm25Detect   = "List of tools: ["
	lfm2CallOpen  = "<|tool_call_start|>"
	lfm2CallClose = "<|tool_call_end|>"
)

// isLFM2 reports whether a template is LFM2's or LFM2.5's.
func isLFM2(template string) bool {
	list := strings.Contains(template, lfm2ListOpen)
	return list && strings.Contains(template, lfm2ListClose) || !list && strings.Contains(template, lfm25Detect)
}

// parsePythonCalls reads LFM2's list of calls, the whole of s.
func parsePythonCalls(s string) ([]ToolCall, bool) {
	r := pyReader{s: strings.TrimSpace(s)}
	if !r.eat("[") {
		return nil, false
	}
	var calls []ToolCall
	for {
		c, ok := r.call()
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
		if r.eat("]") {
			return calls, r.rest() == ""
		}
		if !r.eat(",") {
			return nil, false
		}
	}
}

// pyReader reads Python literals from s, from i on, passing over spaces
// before each token.
type pyReader struct {
	s string
	i int
}

func (r *pyReader) rest() string { return r.s[r.i:] }

func (r *pyReader) skip() {
	for r.i < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.i]) >= 0 {
		r.i++
	}
}

// eat consumes tok, after spaces, if it comes next.
func (r *pyReader) eat(tok string) bool {
	r.skip()
	if strings.HasPrefix(r.rest(), tok) {
		r.i += len(tok)
		return true
	}
	return false
}

// word consumes a name: letters, digits, '_' and '-'.
func (r *pyReader) word() string {
	r.skip()
	start := r.i
	for r.i < len(r.s) {
		c := r.s[r.i]
		if c != '_' && c != '-' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			break
		}
		r.i++
	}
	return r.s[start:r.i]
}

// call reads NAME(KEY=VALUE, …).
func (r *pyReader) call() (ToolCall, bool) {
	name := r.word()
	if name == "" || !r.eat("(") {
		return ToolCall{}, false
	}
	var args bytes.Buffer
	args.WriteByte('{')
	for !r.eat(")") {
		if args.Len() > 1 && !r.eat(",") {
			return ToolCall{}, false
		}
		key := r.word()
		if key == "" || !r.eat("=") {
			return ToolCall{}, false
		}
		v, ok := r.value()
		if !ok {
			return ToolCall{}, false
		}
		if args.Len() > 1 {
			args.WriteByte(',')
		}
		args.Write(jsonText(key))
		args.WriteByte(':')
		args.Write(v)
	}
	args.WriteByte('}')
	return ToolCall{Name: name, Arguments: normalizeArgs(args.Bytes())}, true
}

// value reads one literal and returns it as JSON.
func (r *pyReader) value() ([]byte, bool) {
	r.skip()
	if r.i >= len(r.s) {
		return nil, false
	}
	switch c := r.s[r.i]; {
	case c == '"' || c == '\'':
		s, ok := r.str()
		return jsonText(s), ok
	case c == '[':
		return r.seq('[', ']', false)
	case c == '{':
		return r.seq('{', '}', true)
	}
	for _, lit := range [...][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}, {"true", "true"}, {"false", "false"}, {"null", "null"}} {
		if strings.HasPrefix(r.rest(), lit[0]) {
			r.i += len(lit[0])
			return []byte(lit[1]), true
		}
	}
	start := r.i
	for r.i < len(r.s) && strings.IndexByte("+-.0123456789eE", r.s[r.i]) >= 0 {
		r.i++
	}
	num := []byte(strings.TrimPrefix(r.s[start:r.i], "+"))
	return num, len(num) > 0 && json.Valid(num)
}

// seq reads a list or, dict set, a dict whose keys are strings.
func (r *pyReader) seq(open, close byte, dict bool) ([]byte, bool) {
	r.i++
	out := []byte{open}
	for !r.eat(string(close)) {
		if len(out) > 1 && !r.eat(",") {
			return nil, false
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		if dict {
			r.skip()
			key, ok := r.str()
			if !ok || !r.eat(":") {
				return nil, false
			}
			out = append(append(out, jsonText(key)...), ':')
		}
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		out = append(out, v...)
	}
	return append(out, close), true
}

// str reads a string in double or single quotes, with Python's escapes.
func (r *pyReader) str() (string, bool) {
	if r.i >= len(r.s) || r.s[r.i] != '"' && r.s[r.i] != '\'' {
		return "", false
	}
	quote := r.s[r.i]
	var b strings.Builder
	for r.i++; r.i < len(r.s); {
		c := r.s[r.i]
		switch {
		case c == quote:
			r.i++
			return b.String(), true
		case c == '\\' && r.i+1 < len(r.s):
			if v, _, tail, err := strconv.UnquoteChar(r.s[r.i:], quote); err == nil {
				b.WriteRune(v)
				r.i = len(r.s) - len(tail)
				continue
			}
			b.WriteByte(r.s[r.i+1]) // an escape Go does not know: the character itself
			r.i += 2
		default:
			_, n := utf8.DecodeRuneInString(r.s[r.i:])
			b.WriteString(r.s[r.i : r.i+n])
			r.i += n
		}
	}
	return "", false
}
