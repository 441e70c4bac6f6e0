package chat

import (
	"errors"
	"fmt"
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
	// ToolsHermes: Qwen 2.5/3, Hermes and Xiaomi MiMo write
	// <tool_call>{"name": …, "arguments": {…}}</tool_call>, one per call;
	// Qwen 3.5/3.6 and Qwen3-Coder the XML form inside (xmlcall.go).
	ToolsHermes
	// ToolsMistral: Mistral writes [TOOL_CALLS][{"name": …, "arguments": {…}}, …].
	ToolsMistral
	// ToolsHarmony: gpt-oss writes OpenAI's harmony format, messages on
	// channels (<|channel|>analysis<|message|>… its reasoning, final the
	// answer), and a call as a message to=functions.NAME whose body is the
	// JSON arguments, ended by <|call|>.
	ToolsHarmony
	// ToolsGemma4: Gemma 4 writes <|tool_call>call:NAME{key:value,…}<tool_call|>,
	// its own notation for the arguments (bare keys, strings between
	// <|"|> and <|"|>; see gemma4.go).
	ToolsGemma4
	// ToolsSeed: Seed-OSS writes <seed:tool_call> and </seed:tool_call>
	// around the XML form of a call (<function=NAME><parameter=KEY>value
	// </parameter>…</function>, as in xmlcall.go).
	ToolsSeed
	// ToolsGLM: GLM-4.5/4.6/4.7 write <tool_call>NAME, then a pair
	// <arg_key>KEY</arg_key><arg_value>VALUE</arg_value> an argument, and
	// </tool_call> (glm.go), their reasoning in <think>…</think>.
	ToolsGLM
	// ToolsCommandR: Command R7B writes its reasoning between
	// <|START_THINKING|> and <|END_THINKING|>, its answer between
	// <|START_RESPONSE|> and <|END_RESPONSE|>, and its calls as one JSON
	// list between <|START_ACTION|> and <|END_ACTION|>, each call
	// {"tool_call_id": …, "tool_name": …, "parameters": {…}} (jsonlist.go).
	ToolsCommandR
	// ToolsGranite: Granite 3.x writes <|tool_call|> and a JSON list of
	// {"name": …, "arguments": {…}} as the rest of its reply, its
	// reasoning (when thinking is on) in <think>…</think> and its answer
	// then in <response>…</response>.
	ToolsGranite
	// ToolsNemotron: Nemotron Nano v2 writes a JSON list of {"name": …,
	// "arguments": {…}} between <TOOLCALL> and </TOOLCALL>, its reasoning
	// in <think>…</think>.
	ToolsNemotron
	// ToolsApertus: Apertus writes a JSON list of calls in the short form
	// {NAME: {…arguments}} between <|tools_prefix|> and <|tools_suffix|>,
	// its reasoning between <|inner_prefix|> and <|inner_suffix|>.
	ToolsApertus
	// ToolsLFM2: LFM2 and LFM2.5 write a Python list of calls,
	// [NAME(KEY=VALUE, …), …], between <|tool_call_start|> and
	// <|tool_call_end|> (lfm2.go), their reasoning in <think>…</think>.
	ToolsLFM2
	// ToolsDeepSeek: DeepSeek R1 and V3.1 write their calls in a block
	// between <｜tool▁calls▁begin｜> and <｜tool▁calls▁end｜> (deepseek.go),
	// their reasoning in <think>…</think>.
	ToolsDeepSeek
	// ToolsKimi: Kimi K2 and K2 Thinking write their calls in a section
	// between <|tool_calls_section_begin|> and <|tool_calls_section_end|>,
	// each <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>
	// and the JSON arguments, ended by <|tool_call_end|> (kimi.go), the
	// text before the arguments kept as the call's ID; their reasoning in
	// <think>…</think>.
	ToolsKimi
	// ToolsMiniMax: MiniMax-M2 and M2.1 write their calls between
	// <minimax:tool_call> and </minimax:tool_call>, each <invoke
	// name="NAME"> and a <parameter name="KEY">VALUE</parameter> an
	// argument, ended by </invoke> (the XML form's values, xmlcall.go);
	// their reasoning in <think>…</think>.
	ToolsMiniMax
	// ToolsFirefunction: Firefunction v2 writes " functools" and a JSON
	// list of {"name": …, "arguments": {…}} as the rest of its reply.
	ToolsFirefunction
)

// String returns "none", "llama3", "hermes", "mistral", "harmony", "gemma4",
// "seed", "glm", "commandr", "granite", "nemotron", "apertus", "lfm2",
// "deepseek", "kimi", "minimax" or "firefunction".
func (s ToolSyntax) String() string { return enum.Name(s, toolSyntaxNames[:], "ToolSyntax") }

var toolSyntaxNames = [...]string{ToolsNone: "none", ToolsLlama3: "llama3", ToolsHermes: "hermes", ToolsMistral: "mistral",
	ToolsHarmony: "harmony", ToolsGemma4: "gemma4", ToolsSeed: "seed", ToolsGLM: "glm", ToolsCommandR: "commandr",
	ToolsGranite: "granite", ToolsNemotron: "nemotron", ToolsApertus: "apertus", ToolsLFM2: "lfm2",
	ToolsDeepSeek: "deepseek", ToolsKimi: "kimi", ToolsMiniMax: "minimax",
	ToolsFirefunction: "firefunction"}

// Format is how a model's raw output is structured.
type Format struct {
	Tools ToolSyntax
	// Thinking: the model writes its reasoning in a block: between <think>
	// and </think>, or Gemma 4's <|channel>thought and <channel|>,
	// Magistral's [THINK] and [/THINK] (see MistralThink),
	// Seed-OSS's <seed:think> and </seed:think>, Command R7B's
	// <|START_THINKING|> and <|END_THINKING|> or Apertus'
	// <|inner_prefix|> and <|inner_suffix|> (by Tools). (Harmony's
	// reasoning is a channel of its own: see Reasons.)
	Thinking bool
	// MistralArgs: Mistral's newer calls, name[ARGS]{…} after
	// [TOOL_CALLS], rather than a JSON list.
	MistralArgs bool
	// MistralThink: a Mistral template reasons between [THINK] and
	// [/THINK] (Magistral, Ministral 3's reasoning models), its Thinking
	// on.
	MistralThink bool
	// XMLCalls: a Hermes-syntax template writes the XML form inside
	// <tool_call> (Qwen 3.5/3.6, Qwen3-Coder), which a forced call then
	// takes too. (The parser reads either form whatever it says.)
	XMLCalls bool
	// GLMLines: a GLM template lays a call out a part a line (GLM-4.5 and
	// 4.6: NAME, each <arg_key>…</arg_key> and each <arg_value>…
	// </arg_value> on lines of their own), not back to back (GLM-4.7),
	// which a forced call then follows. (The parser reads either.)
	GLMLines bool
	// DeepSeekV31: a DeepSeek template is V3.1's, whose calls are
	// NAME<｜tool▁sep｜>{…}, not R1's function<｜tool▁sep｜>NAME and a
	// ```json block, which a forced call then follows. (The parser reads
	// either.)
	DeepSeekV31 bool
	// ContentBlocks: a Ministral 3 kind of template ([SYSTEM_PROMPT],
	// [TOOL_CALLS] and [ARGS] without Mistral Small 3.2's [CALL_ID], as
	// llama.cpp tells it) is given system and assistant turns' content
	// as a list of blocks, the reasoning a "thinking" block before the
	// "text" one, as llama.cpp rewrites them: that is the only form in
	// which the template writes past reasoning back ([THINK]…[/THINK]).
	ContentBlocks bool
}

// DetectFormat tells the output format from a chat template's source, by the
// markers llama.cpp's chat layer looks for.
func DetectFormat(template string) Format {
	var f Format
	switch {
	case strings.Contains(template, harmonyChannel): // llama.cpp's test for gpt-oss
		f.Tools = ToolsHarmony
		return f
	case strings.Contains(template, gemma4Detect): // llama.cpp's test for Gemma 4
		f.Tools, f.Thinking = ToolsGemma4, true
		return f
	case strings.Contains(template, seedCallOpen) || strings.Contains(template, seedThinkOpen):
		f.Tools, f.Thinking = ToolsSeed, true
		return f
	case strings.Contains(template, glmDetect) && strings.Contains(template, glmKeyOpen) && strings.Contains(template, glmValueOpen):
		// llama.cpp's test for GLM 4.5, before Hermes' (both write <tool_call>).
		f.Tools = ToolsGLM
		f.GLMLines = strings.Contains(template, glmKeyClose+"\n"+glmValueOpen)
	case strings.Contains(template, deepseekV31Detect) || strings.Contains(template, deepseekCallsOpen):
		// llama.cpp's tests for DeepSeek V3.1 and R1, before Command R7B's.
		f.Tools = ToolsDeepSeek
		f.DeepSeekV31 = strings.Contains(template, deepseekV31Detect)
	case strings.Contains(template, cohereThinkClose+cohereActionOpen): // llama.cpp's test for Command R7B
		f.Tools, f.Thinking = ToolsCommandR, true
		return f
	case strings.Contains(template, "elif thinking") && strings.Contains(template, graniteCall):
		// llama.cpp's test for Granite 3.x, before Hermes' (Granite 4 writes
		// <tool_call> and is Hermes).
		f.Tools = ToolsGranite
	case isLFM2(template):
		f.Tools = ToolsLFM2
	case strings.Contains(template, mistralCalls):
		f.Tools = ToolsMistral
		f.MistralArgs = strings.Contains(template, mistralArgs)
		f.ContentBlocks = f.MistralArgs && strings.Contains(template, mistralSystem) && !strings.Contains(template, mistralCallID)
		if isMagistral(template) {
			f.Thinking, f.MistralThink = true, true
			return f
		}
	case strings.Contains(template, hermesOpen) || isMiMo(template):
		f.Tools = ToolsHermes
		// llama.cpp's test for Qwen3-Coder's XML form.
		f.XMLCalls = strings.Contains(template, xmlFunction) && strings.Contains(template, xmlParameter)
		if isMiMo(template) && !f.XMLCalls {
			// Xiaomi MiMo, told after Qwen3-Coder and before Hermes as
			// llama.cpp tells it: Hermes' calls, reasoning in <think>
			// whatever the template shows.
			f.Thinking = true
			return f
		}
	case strings.Contains(template, nemotronDetect): // llama.cpp's test for Nemotron Nano v2
		f.Tools = ToolsNemotron
	case strings.Contains(template, apertusDetect) && strings.Contains(template, apertusCallOpen):
		f.Tools = ToolsApertus
		f.Thinking = strings.Contains(template, apertusThinkOpen)
		return f
	case strings.Contains(template, minimaxDetect) && strings.Contains(template, minimaxRole):
		// llama.cpp's tests for MiniMax-M2 (its turns' markers) and Kimi
		// K2 (its tool declaration turn, section opener and results
		// heading), after Apertus' and LFM2's as there; both reason in
		// <think> whatever the template shows.
		f.Tools, f.Thinking = ToolsMiniMax, true
		return f
	case strings.Contains(template, kimiDetect) && strings.Contains(template, kimiCallsOpen) && strings.Contains(template, kimiResults):
		f.Tools, f.Thinking = ToolsKimi, true
		return f
	case strings.Contains(template, firefunctionCalls): // llama.cpp's test for Firefunction v2, before Llama 3's
		f.Tools = ToolsFirefunction
		return f
	case strings.Contains(template, "<|start_header_id|>ipython<|end_header_id|>") ||
		strings.Contains(template, "<|python_tag|>"):
		f.Tools = ToolsLlama3
	case isMagistral(template): // llama.cpp's test for Magistral, calls or none
		f.Tools, f.Thinking, f.MistralThink = ToolsMistral, true, true
		return f
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
	if f.Thinking && f.Tools != ToolsGemma4 { // Gemma 4's opener is two tokens, <|channel> and thought
		open, close := f.thinkMarks()
		m = append(m, open, close)
	}
	switch f.Tools {
	case ToolsLlama3:
		m = append(m, llamaPythonTag)
	case ToolsHermes:
		m = append(m, hermesOpen, hermesClose)
		if f.XMLCalls {
			m = append(m, xmlMarkers...)
		}
	case ToolsMistral:
		m = append(m, mistralCalls, mistralArgs)
	case ToolsHarmony:
		m = append(m, harmonyMarkers...)
	case ToolsGemma4:
		m = append(m, gemma4Channel, gemma4ThinkClose, gemma4CallOpen, gemma4CallClose, gemma4Quote)
	case ToolsSeed:
		m = append(m, seedCallOpen, seedCallClose)
		m = append(m, xmlMarkers...)
	case ToolsGLM: // the argument tags too, which GLM's vocabulary holds as control tokens
		m = append(m, hermesOpen, hermesClose, glmKeyOpen, glmKeyClose, glmValueOpen, glmValueClose)
	case ToolsCommandR, ToolsNemotron, ToolsApertus, ToolsLFM2, ToolsMiniMax:
		open, close := f.callMarks()
		m = append(m, open, close)
	case ToolsGranite, ToolsFirefunction:
		m = append(m, f.restMark())
	case ToolsDeepSeek:
		m = append(m, deepseekCallsOpen, deepseekCallsClose, deepseekCallOpen, deepseekCallClose, deepseekSep)
	case ToolsKimi:
		m = append(m, kimiCallsOpen, kimiCallsClose, kimiCallOpen, kimiArgs, kimiCallClose)
	}
	m = append(m, f.dropped()...)
	return m
}

// marks are the texts around a reasoning block and around one tool call
// in each syntax: think falls back to <think>…</think>, and call is "" for
// the syntaxes without such a pair (Llama 3, Mistral, harmony, Granite,
// Firefunction v2).
var marks = [...]struct{ think, call [2]string }{
	ToolsHermes:   {call: [2]string{hermesOpen, hermesClose}},
	ToolsGemma4:   {[2]string{gemma4ThinkOpen, gemma4ThinkClose}, [2]string{gemma4CallOpen, gemma4CallClose}},
	ToolsSeed:     {[2]string{seedThinkOpen, seedThinkClose}, [2]string{seedCallOpen, seedCallClose}},
	ToolsGLM:      {call: [2]string{hermesOpen, hermesClose}},
	ToolsCommandR: {[2]string{cohereThinkOpen, cohereThinkClose}, [2]string{cohereActionOpen, cohereActionClose}},
	ToolsNemotron: {call: [2]string{nemotronCallOpen, nemotronCallClose}},
	ToolsApertus:  {[2]string{apertusThinkOpen, apertusThinkClose}, [2]string{apertusCallOpen, apertusCallClose}},
	ToolsLFM2:     {call: [2]string{lfm2CallOpen, lfm2CallClose}},
	ToolsDeepSeek: {call: [2]string{deepseekCallsOpen, deepseekCallsClose}},
	ToolsKimi:     {call: [2]string{kimiCallsOpen, kimiCallsClose}},
	ToolsMiniMax:  {call: [2]string{minimaxCallsOpen, minimaxCallsClose}},
	ToolsNone:     {}, ToolsLlama3: {}, ToolsMistral: {}, ToolsHarmony: {}, ToolsGranite: {}, ToolsFirefunction: {},
}

// isMiMo reports whether a template is Xiaomi MiMo's, by the markers
// llama.cpp looks for: its tool list, its calls' list and its results.
func isMiMo(template string) bool {
	for _, m := range [...]string{"<tools>", "# Tools", "</tools>", "<tool_calls>", "</tool_calls>", "<tool_response>"} {
		if !strings.Contains(template, m) {
			return false
		}
	}
	return true
}

// isMagistral reports whether a template reasons as Magistral does,
// between [THINK] and [/THINK].
func isMagistral(template string) bool {
	return strings.Contains(template, mistralThinkOpen) && strings.Contains(template, mistralThinkClose)
}

// thinkMarks are the texts that open and close a reasoning block in
// format f.
func (f Format) thinkMarks() (open, close string) {
	if f.MistralThink {
		return mistralThinkOpen, mistralThinkClose
	}
	if m := marks[f.Tools].think; m[0] != "" {
		return m[0], m[1]
	}
	return thinkOpen, thinkClose
}

// thinkLine is the line break MiniMax-M2's prompt opens its reasoning
// with, after <think> (and its closing one after </think>, a blank line),
// "" for the other formats.
func (f Format) thinkLine() string {
	if f.Tools == ToolsMiniMax {
		return "\n"
	}
	return ""
}

// callMarks are the texts around one tool call in format f, "" for the
// syntaxes without such a pair.
func (f Format) callMarks() (open, close string) {
	m := marks[f.Tools].call
	return m[0], m[1]
}

// Reasons reports whether the model writes its reasoning apart from its
// answer: in <think> blocks, or on harmony's analysis channel.
func (f Format) Reasons() bool { return f.Thinking || f.Tools == ToolsHarmony }

// ErrReasoningEffort is what CheckEffort's errors wrap.
var ErrReasoningEffort = errors.New("chat: reasoning effort")

// CheckEffort says whether a template in format f takes the reasoning
// effort level: "" (the template's default) always, "low", "medium" and
// "high" in the harmony format alone (gpt-oss's templates read them as
// reasoning_effort; Ollama refuses levels for every other model, and so
// does this).
func (f Format) CheckEffort(level string) error {
	switch {
	case level == "":
		return nil
	case level != "low" && level != "medium" && level != "high":
		return fmt.Errorf("%w %q: want \"low\", \"medium\" or \"high\"", ErrReasoningEffort, level)
	case f.Tools != ToolsHarmony:
		return fmt.Errorf("%w %q: the template's output format (%s) takes no levels; only gpt-oss's harmony format does", ErrReasoningEffort, level, f.Tools)
	}
	return nil
}
