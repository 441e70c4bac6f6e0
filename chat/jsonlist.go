package chat

import (
	"encoding/json"
	"strings"
)

// The syntaxes whose calls are one JSON list after a marker: Mistral's
// [TOOL_CALLS], Granite's <|tool_call|>, Firefunction v2's " functools"
// (the rest of the reply), and
// those that close it with a marker of their own — Command R7B's
// <|START_ACTION|>…<|END_ACTION|>, Nemotron Nano v2's <TOOLCALL>…
// </TOOLCALL>, Apertus' <|tools_prefix|>…<|tools_suffix|>. Each element
// is a call as the syntax writes one (listedCall); a list that does not
// parse, or holds anything but calls, is content, as llama.cpp gives it.
const (
	cohereThinkOpen     = "<|START_THINKING|>"
	cohereThinkClose    = "<|END_THINKING|>"
	cohereActionOpen    = "<|START_ACTION|>"
	cohereActionClose   = "<|END_ACTION|>"
	cohereResponseOpen  = "<|START_RESPONSE|>"
	cohereResponseClose = "<|END_RESPONSE|>"

	graniteCall          = "<|tool_call|>"
	firefunctionCalls    = " functools["
	graniteResponseOpen  = "<response>"
	graniteResponseClose = "</response>"

	nemotronDetect    = "<SPECIAL_10>"
	nemotronCallOpen  = "<TOOLCALL>"
	nemotronCallClose = "</TOOLCALL>"

	apertusDetect     = "<|system_start|>"
	apertusThinkOpen  = "<|inner_prefix|>"
	apertusThinkClose = "<|inner_suffix|>"
	apertusCallOpen   = "<|tools_prefix|>"
	apertusCallClose  = "<|tools_suffix|>"
)

// dropped are the markers that frame an answer in format f, which are no
// part of its content: Command R7B's <|START_RESPONSE|> and
// <|END_RESPONSE|>, and Granite's <response> and </response> (which it
// writes after its reasoning, and llama.cpp drops whether or not).
func (f Format) dropped() []string {
	switch {
	case f.Tools == ToolsCommandR:
		return []string{cohereResponseOpen, cohereResponseClose}
	case f.Tools == ToolsGranite:
		return []string{graniteResponseOpen, graniteResponseClose}
	}
	return nil
}

// listsCalls reports whether format f writes its calls as a list between
// its call markers (JSON, LFM2's Python, DeepSeek's and Kimi K2's blocks,
// MiniMax-M2's invocations).
func (f Format) listsCalls() bool {
	switch f.Tools {
	case ToolsCommandR, ToolsNemotron, ToolsApertus, ToolsLFM2, ToolsDeepSeek, ToolsKimi, ToolsMiniMax:
		return true
	}
	return false
}

// parseCallList reads a JSON list of calls in format f's syntax, as a
// whole: one element that is no call makes it none.
func (f Format) parseCallList(s string) ([]ToolCall, bool) {
	switch f.Tools {
	case ToolsDeepSeek:
		return parseDeepSeekCalls(s)
	case ToolsKimi:
		return parseKimiCalls(s)
	case ToolsLFM2:
		if calls, ok := parsePythonCalls(s); ok {
			return calls, true
		}
		// else the JSON list llama.cpp's LFM2 format read before its
		// Python calls
	}
	var list []json.RawMessage
	if json.Unmarshal([]byte(strings.TrimSpace(s)), &list) != nil || len(list) == 0 {
		return nil, false
	}
	calls := make([]ToolCall, 0, len(list))
	for _, raw := range list {
		c, ok := f.listedCall(raw)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// listedCall reads one element of a call list: Apertus' {NAME: {…}},
// Command R7B's {"tool_call_id", "tool_name", "parameters"} (its ID the
// call's), or {"name": …, "arguments": {…}} for the others.
func (f Format) listedCall(raw json.RawMessage) (ToolCall, bool) {
	if f.Tools == ToolsApertus {
		var short map[string]json.RawMessage
		if json.Unmarshal(raw, &short) != nil || len(short) != 1 {
			return ToolCall{}, false
		}
		for name, args := range short {
			return ToolCall{Name: name, Arguments: normalizeArgs(args)}, name != ""
		}
	}
	var c callJSON
	if json.Unmarshal(raw, &c) != nil {
		return ToolCall{}, false
	}
	if f.Tools == ToolsCommandR {
		c = callJSON{Name: c.ToolName, ID: c.ToolCallID, Parameters: c.Parameters}
	}
	return c.toolCall()
}
