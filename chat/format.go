package chat

import (
	"strings"

	"github.com/lowmem/llm/internal/enum"
)

// ToolSyntax is how a model writes tool calls.
type ToolSyntax uint8

// Tool call syntaxes.
const (
	// ToolsNone: no tool-call syntax is known for the template; output is
	// plain content.
	ToolsNone ToolSyntax = iota
	// ToolsLlama3: Llama 3.x writes {"name": …, "parameters": {…}} as the
	// whole message, optionally after <|python_tag|>.
	ToolsLlama3
	// ToolsHermes: Qwen 2.5/3 and Hermes write
	// <tool_call>{"name": …, "arguments": {…}}</tool_call>, one per call.
	ToolsHermes
	// ToolsMistral: Mistral writes [TOOL_CALLS][{"name": …, "arguments": {…}}, …].
	ToolsMistral
)

// String returns "none", "llama3", "hermes" or "mistral".
func (s ToolSyntax) String() string { return enum.Name(s, toolSyntaxNames[:], "ToolSyntax") }

var toolSyntaxNames = [...]string{ToolsNone: "none", ToolsLlama3: "llama3", ToolsHermes: "hermes", ToolsMistral: "mistral"}

// Format is how a model's raw output is structured.
type Format struct {
	Tools ToolSyntax
	// Thinking: the model writes its reasoning between <think> and </think>.
	Thinking bool
	// MistralArgs: Mistral's newer calls, name[ARGS]{…} after
	// [TOOL_CALLS], rather than a JSON list.
	MistralArgs bool
}

// DetectFormat tells the output format from a chat template's source, by the
// markers llama.cpp's chat layer looks for.
func DetectFormat(template string) Format {
	var f Format
	switch {
	case strings.Contains(template, "[TOOL_CALLS]"):
		f.Tools = ToolsMistral
		f.MistralArgs = strings.Contains(template, mistralArgs)
	case strings.Contains(template, "<tool_call>"):
		f.Tools = ToolsHermes
	case strings.Contains(template, "<|start_header_id|>ipython<|end_header_id|>") ||
		strings.Contains(template, "<|python_tag|>"):
		f.Tools = ToolsLlama3
	}
	f.Thinking = strings.Contains(template, "<think>")
	return f
}

// Markers are the texts that structure output in format f: <think> and
// </think> for reasoning, and the tool-call markers of its syntax. A
// vocabulary may hold them as control tokens, whose text a detokenizer
// leaves out of plain output; a chat session must keep it for the parser
// (llama.cpp calls these preserved tokens).
func (f Format) Markers() []string {
	var m []string
	if f.Thinking {
		m = append(m, thinkOpen, thinkClose)
	}
	switch f.Tools {
	case ToolsLlama3:
		m = append(m, llamaPythonTag)
	case ToolsHermes:
		m = append(m, hermesOpen, hermesClose)
	case ToolsMistral:
		m = append(m, mistralCalls, mistralArgs)
	}
	return m
}
