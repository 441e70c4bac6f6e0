package chat

import (
	"encoding/json"
	"strings"
)

// DeepSeek R1 and V3.1 write their calls in one block,
// <｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>, each call
//
//	<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//	```json
//	{…}
//	```<｜tool▁call▁end｜>
//
// in R1's form, NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜> in V3.1's (its
// <｜tool▁call▁begin｜> too, which llama.cpp lets either leave out); their
// reasoning in <think>…</think>. llama.cpp tells V3.1's template by a test
// of its prefix messages, R1's by the block's opener.
const (
	deepseekV31Detect  = "message['prefix'] is defined and message['prefix'] and thinking"
	deepseekCallsOpen  = "<｜tool▁calls▁begin｜>"
	deepseekCallsClose = "<｜tool▁calls▁end｜>"
	deepseekCallOpen   = "<｜tool▁call▁begin｜>"
	deepseekCallClose  = "<｜tool▁call▁end｜>"
	deepseekSep        = "<｜tool▁sep｜>"
)

// deepseekCallFrame is what a forced call of the tool called name is
// written between in format f: R1's form, or V3.1's.
func (f Format) deepseekCallFrame(name string) (prefix, suffix string) {
	if f.DeepSeekV31 {
		return deepseekCallsOpen + deepseekCallOpen + name + deepseekSep, deepseekCallClose + deepseekCallsClose
	}
	return deepseekCallsOpen + deepseekCallOpen + "function" + deepseekSep + name + "\n```json\n", "\n```" + deepseekCallClose + deepseekCallsClose
}

// parseDeepSeekCalls reads the calls in a block (what stands between its
// markers), each in R1's form or V3.1's, with only whitespace around them.
func parseDeepSeekCalls(block string) ([]ToolCall, bool) {
	return blockCalls(block, deepseekCallOpen, deepseekSep, deepseekCallClose, true, func(name, args string) (ToolCall, bool) {
		if strings.TrimSpace(name) == "function" {
			var ok bool
			if name, args, ok = deepseekR1Call(args); !ok {
				return ToolCall{}, false
			}
		}
		return jsonCall(name, args)
	})
}

// blockCalls reads a block of calls each written open HEAD sep ARGS close
// (DeepSeek's, Kimi K2's), with only whitespace around them; open may be
// left out where optional says so. call makes a call of each head and
// arguments, or reports them none, which makes the block none.
func blockCalls(block, open, sep, close string, optional bool, call func(head, args string) (ToolCall, bool)) ([]ToolCall, bool) {
	parts := strings.Split(block, close)
	if strings.TrimSpace(parts[len(parts)-1]) != "" || len(parts) < 2 {
		return nil, false
	}
	calls := make([]ToolCall, 0, len(parts)-1)
	for _, part := range parts[:len(parts)-1] {
		part, opened := strings.CutPrefix(strings.TrimSpace(part), open)
		head, args, ok := strings.Cut(part, sep)
		if !ok || !opened && !optional {
			return nil, false
		}
		c, ok := call(head, args)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// jsonCall is the call of the tool called name (a line of its own, no
// markup) with the JSON arguments args, none when they are no JSON.
func jsonCall(name, args string) (ToolCall, bool) {
	name, args = strings.TrimSpace(name), strings.TrimSpace(args)
	if name == "" || strings.ContainsAny(name, "\n<") || !json.Valid([]byte(args)) {
		return ToolCall{}, false
	}
	return ToolCall{Name: name, Arguments: normalizeArgs(json.RawMessage(args))}, true
}

// deepseekR1Call splits what follows R1's function<｜tool▁sep｜> into the
// name, on its line, and the arguments fenced as JSON below it.
func deepseekR1Call(s string) (name, args string, ok bool) {
	name, fenced, ok := strings.Cut(s, "\n")
	if !ok {
		return "", "", false
	}
	args, ok = strings.CutPrefix(strings.TrimSpace(fenced), "```json")
	if !ok {
		return "", "", false
	}
	args, ok = strings.CutSuffix(strings.TrimSpace(args), "```")
	return name, args, ok
}
