package chat

import "strings"

// Kimi K2 and K2 Thinking write their calls in one section,
//
//	<|tool_calls_section_begin|>
//	<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|>
//	…
//	<|tool_calls_section_end|>
//
// the text before <|tool_call_argument_begin|> the call's ID, which names
// the tool between "functions." and ":IDX" (llama.cpp takes a head of
// another shape for the name as it is, and so does this); their reasoning
// in <think>…</think>. llama.cpp tells Kimi K2's template by its tool
// declaration turn, the section's opener and the heading of a call's
// results.
const (
	kimiDetect     = "<|im_system|>tool_declare<|im_middle|>"
	kimiResults    = "## Return of"
	kimiCallsOpen  = "<|tool_calls_section_begin|>"
	kimiCallsClose = "<|tool_calls_section_end|>"
	kimiCallOpen   = "<|tool_call_begin|>"
	kimiArgs       = "<|tool_call_argument_begin|>"
	kimiCallClose  = "<|tool_call_end|>"
	kimiIDPrefix   = "functions."
)

// parseKimiCalls reads the calls in a section (what stands between its
// markers), each opened by <|tool_call_begin|>.
func parseKimiCalls(section string) ([]ToolCall, bool) {
	return blockCalls(section, kimiCallOpen, kimiArgs, kimiCallClose, false, func(head, args string) (ToolCall, bool) {
		head = strings.TrimSpace(head)
		name := kimiName(head)
		c, ok := jsonCall(name, args)
		if name != head {
			c.ID = head
		}
		return c, ok
	})
}

// kimiName is the tool an ID functions.NAME:IDX names, or the ID itself
// when it has another shape.
func kimiName(id string) string {
	rest, ok := strings.CutPrefix(id, kimiIDPrefix)
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 0 || i == len(rest)-1 || strings.Trim(rest[i+1:], "0123456789") != "" {
		return id
	}
	return rest[:i]
}

// kimiCallFrame is what a forced call of the tool called name is written
// between: a section of the one call, its ID functions.NAME:0.
func kimiCallFrame(name string) (prefix, suffix string) {
	return kimiCallsOpen + kimiCallOpen + kimiIDPrefix + name + ":0" + kimiArgs, kimiCallClose + kimiCallsClose
}
