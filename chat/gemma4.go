package chat

import (
	"encoding/json"
	"strings"

	"github.com/lowmem/llm/internal/jinja"
)

// Gemma 4's chat format. Turns are <|turn>ROLE … <turn|>; the model's
// reasoning is a channel, <|channel>thought … <channel|> (a generation
// prompt without thinking closes an empty one); a call is
// <|tool_call>call:NAME{key:value,…}<tool_call|>, and its answer
// <|tool_response>response:NAME{…}<tool_response|> inside the model's turn.
// The arguments are Gemma's own notation, not JSON: keys are bare, strings
// stand between two <|"|>, and numbers, true, false, null, {…} and […] are
// as in JSON.
const (
	gemma4Detect     = "'<|tool_call>call:'" // llama.cpp's test of the template source
	gemma4Channel    = "<|channel>"
	gemma4ThinkOpen  = "<|channel>thought"
	gemma4ThinkClose = "<channel|>"
	gemma4CallOpen   = "<|tool_call>"
	gemma4CallClose  = "<tool_call|>"
	gemma4Quote      = `<|"|>`
	gemma4CallPrefix = "call:"
	// gemma4Compatible marks the templates that render role tool messages
	// themselves; llama.cpp rewrites the conversation for the others.
	gemma4Compatible = "{#- OpenAI Chat Completions:"
)

// parseGemma4Call reads the body of a call, call:NAME{…}, into a tool call
// with JSON arguments.
func parseGemma4Call(body string) (ToolCall, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(body), gemma4CallPrefix)
	if !ok {
		return ToolCall{}, false
	}
	brace := strings.IndexByte(rest, '{')
	name := ""
	if brace > 0 {
		name = rest[:brace]
	}
	if name == "" || strings.ContainsAny(name, " \t\n\r") {
		return ToolCall{}, false
	}
	r := gemma4Reader{s: rest[brace:]}
	var out strings.Builder
	if !r.dict(&out, 0) || strings.TrimSpace(r.s[r.at:]) != "" {
		return ToolCall{}, false
	}
	return ToolCall{Name: name, Arguments: normalizeArgs(json.RawMessage(out.String()))}, true
}

// gemma4MaxDepth bounds nesting, so that hostile output cannot recurse
// without end.
const gemma4MaxDepth = 64

// gemma4Reader converts Gemma 4's argument notation to JSON, reading it as
// llama.cpp's grammar for it does: a value is a <|"|> string, a dict, an
// array, a JSON number, true, false or null; whitespace may follow "{",
// "[", ":" and "," and precede "}" and "]"; a key is the text up to its
// ":" (none of ":" or "}" in it).
type gemma4Reader struct {
	s  string
	at int
}

func (r *gemma4Reader) space() {
	for r.at < len(r.s) && strings.IndexByte(" \t\n\r", r.s[r.at]) >= 0 {
		r.at++
	}
}

func (r *gemma4Reader) eat(c byte) bool {
	if r.at < len(r.s) && r.s[r.at] == c {
		r.at++
		return true
	}
	return false
}

func (r *gemma4Reader) value(out *strings.Builder, depth int) bool {
	rest := r.s[r.at:]
	switch {
	case depth > gemma4MaxDepth || rest == "":
		return false
	case strings.HasPrefix(rest, gemma4Quote):
		end := strings.Index(rest[len(gemma4Quote):], gemma4Quote)
		if end < 0 {
			return false
		}
		out.Write(jsonText(rest[len(gemma4Quote) : len(gemma4Quote)+end]))
		r.at += 2*len(gemma4Quote) + end
		return true
	case rest[0] == '{':
		return r.dict(out, depth+1)
	case rest[0] == '[':
		return r.array(out, depth+1)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if strings.HasPrefix(rest, lit) {
			out.WriteString(lit)
			r.at += len(lit)
			return true
		}
	}
	n := jsonNumberLen(rest)
	if n == 0 {
		return false
	}
	out.WriteString(rest[:n])
	r.at += n
	return true
}

func (r *gemma4Reader) dict(out *strings.Builder, depth int) bool {
	return r.items(out, '{', '}', func() bool {
		end := strings.IndexAny(r.s[r.at:], ":}")
		if end <= 0 || r.s[r.at+end] != ':' {
			return false
		}
		out.Write(jsonText(r.s[r.at : r.at+end]))
		out.WriteByte(':')
		r.at += end + 1
		r.space()
		return r.value(out, depth)
	})
}

func (r *gemma4Reader) array(out *strings.Builder, depth int) bool {
	return r.items(out, '[', ']', func() bool { return r.value(out, depth) })
}

// items reads a dict's or array's items between open and close, separated
// by commas, each by item.
func (r *gemma4Reader) items(out *strings.Builder, open, close byte, item func() bool) bool {
	if !r.eat(open) {
		return false
	}
	out.WriteByte(open)
	r.space()
	for n := 0; ; n++ {
		if n == 0 && r.eat(close) {
			out.WriteByte(close)
			return true
		}
		if n > 0 {
			out.WriteByte(',')
		}
		if !item() {
			return false
		}
		r.space()
		if r.eat(close) {
			out.WriteByte(close)
			return true
		}
		if !r.eat(',') {
			return false
		}
		r.space()
	}
}

// jsonNumberLen is the length of the JSON number s starts with, 0 for none.
func jsonNumberLen(s string) int {
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return 0
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	return i
}

// gemma4Turns rewrites a conversation for a Gemma 4 template that reads
// tool results as the tool_responses of the model's turn rather than as
// role tool messages, as llama.cpp does for such templates: an assistant
// message with calls takes the tool messages after it (each result's
// content as JSON when it parses, else as text, named by the call in the
// same place, else by its call ID) and the assistant message after those
// when that one only answers (content, no calls), becoming one model turn.
// msgs are the messages' template values, in order; tool messages not
// after calls stay as they are.
func gemma4Turns(msgs []Message, vals []jinja.Value) []jinja.Value {
	var out []jinja.Value
	for i := 0; i < len(msgs); {
		m := msgs[i]
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			out = append(out, vals[i])
			i++
			continue
		}
		turn := jinja.NewDict()
		turn.Set("role", jinja.String(RoleAssistant))
		turn.Set("tool_calls", vals[i].Get("tool_calls"))
		var responses []jinja.Value
		for i++; i < len(msgs) && msgs[i].Role == RoleTool; i++ {
			r := jinja.NewDict()
			name := msgs[i].ToolCallID
			if n := len(responses); n < len(m.ToolCalls) && m.ToolCalls[n].Name != "" {
				name = m.ToolCalls[n].Name
			}
			r.Set("name", jinja.String(name))
			resp, err := jinja.FromJSON([]byte(msgs[i].Content))
			if err != nil {
				resp = jinja.String(msgs[i].Content)
			}
			r.Set("response", resp)
			responses = append(responses, r)
		}
		if len(responses) > 0 {
			turn.Set("tool_responses", jinja.List(responses...))
		}
		if i < len(msgs) && msgs[i].Role == RoleAssistant && len(msgs[i].ToolCalls) == 0 && msgs[i].Content != "" {
			turn.Set("content", vals[i].Get("content"))
			i++
		}
		if m.Thinking != "" {
			turn.Set("reasoning_content", jinja.String(m.Thinking))
		}
		out = append(out, turn)
	}
	return out
}
