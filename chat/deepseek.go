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
	parts := strings.Split(block, deepseekCallClose)
	if strings.TrimSpace(parts[len(parts)-1]) != "" || len(parts) < 2 {
		return nil, false
	}
	calls := make([]ToolCall, 0, len(parts)-1)
	for _, part := range parts[:len(parts)-1] {
		part = strings.TrimPrefix(strings.TrimSpace(part), deepseekCallOpen)
		name, args, ok := strings.Cut(part, deepseekSep)
		if ok && strings.TrimSpace(name) == "function" {
			name, args, ok = deepseekR1Call(args)
		}
		name, args = strings.TrimSpace(name), strings.TrimSpace(args)
		if !ok || name == "" || strings.ContainsAny(name, "\n<") || !json.Valid([]byte(args)) {
			return nil, false
		}
		calls = append(calls, ToolCall{Name: name, Arguments: normalizeArgs(json.RawMessage(args))})
	}
	return calls, true
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
