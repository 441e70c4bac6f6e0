package chat

import "strings"

// GLM-4.5's chat format, which GLM-4.6, GLM-4.7 and GLM-4.7-Flash share.
// Turns open with <|system|>, <|user|>, <|assistant|> or <|observation|>;
// the model reasons in <think>…</think> (on by default: enable_thinking
// false makes the template close an empty block, and a user's /nothink
// asks the model for one); a call is
//
//	<tool_call>NAME
//	<arg_key>KEY</arg_key>
//	<arg_value>VALUE</arg_value>
//	…
//	</tool_call>
//
// (GLM-4.7 writes the parts back to back), a value the text itself where
// the tool's schema types the parameter a string and JSON otherwise, as
// in the XML form (xmlcall.go); results come back as <tool_response>
// blocks of an <|observation|> turn.
//
// GLM-4-0414 and GLM-Z1 share the turns and [gMASK]<sop> but call a tool
// by writing its name and a line of JSON. llama.cpp gives them no format
// of its own (its generic JSON format, held by a grammar, answers any
// template it does not know that is offered tools; this package has no
// such format), so DetectFormat finds no tool syntax in their templates:
// their replies are content, with Z1's <think> blocks as reasoning.
const (
	glmDetect     = "[gMASK]<sop>"
	glmKeyOpen    = "<arg_key>"
	glmKeyClose   = "</arg_key>"
	glmValueOpen  = "<arg_value>"
	glmValueClose = "</arg_value>"
)

// parseGLMCall reads a call from body (what stands between <tool_call>
// and </tool_call>): the name up to the first <arg_key>, then its pairs,
// with only whitespace around and between them; values are typed by
// tools' schemas.
func parseGLMCall(body string, tools []Tool) (ToolCall, bool) {
	i := strings.Index(body, glmKeyOpen)
	if i < 0 {
		i = len(body)
	}
	name := strings.TrimSpace(body[:i])
	if name == "" || strings.ContainsAny(name, " \t\r\n<>\"") { // a JSON body is no name
		return ToolCall{}, false
	}
	args := newArgs(tools, name)
	rest := body[i:]
	for {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return args.call(name), true
		}
		r, ok := strings.CutPrefix(rest, glmKeyOpen)
		if !ok {
			return ToolCall{}, false
		}
		key, r, ok := strings.Cut(r, glmKeyClose)
		if !ok {
			return ToolCall{}, false
		}
		if r, ok = strings.CutPrefix(strings.TrimSpace(r), glmValueOpen); !ok {
			return ToolCall{}, false
		}
		value, r, ok := strings.Cut(r, glmValueClose)
		if !ok {
			return ToolCall{}, false
		}
		args.add(key, value)
		rest = r
	}
}
