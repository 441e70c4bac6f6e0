package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lowmem/llm/internal/jinja"
)

// Roles of the messages in a conversation.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Errors callers can branch on with errors.Is.
var (
	// ErrNoTemplate: the template source is empty.
	ErrNoTemplate = errors.New("chat: no chat template")
	// ErrTemplate: the template cannot be parsed or its render failed
	// (including the template raising an exception on purpose, and a render
	// that went past its limits).
	ErrTemplate = errors.New("chat: template error")
	// ErrBadMessage: a message or tool cannot be rendered (for example tool
	// call arguments that are not JSON).
	ErrBadMessage = errors.New("chat: bad message")
)

// Message is one turn of a conversation.
type Message struct {
	// Role is RoleSystem, RoleUser, RoleAssistant or RoleTool. "developer"
	// is read as "system"; other roles are passed to the template as they are.
	Role string `json:"role"`
	// Content is the text of the message.
	Content string `json:"content"`
	// Thinking is an assistant message's reasoning text, kept apart from
	// Content (templates read it as reasoning_content).
	Thinking string `json:"reasoning_content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names, in a tool message, the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is, in a tool message, the name of the tool that answered.
	Name string `json:"name,omitempty"`
}

// ToolCall is one function call made by the model.
type ToolCall struct {
	// ID identifies the call so that a tool message can answer it.
	ID string `json:"id,omitempty"`
	// Name is the function's name.
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments object.
	Arguments string `json:"arguments"`
}

// Tool describes a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// RenderOptions are the inputs of a render besides the messages.
type RenderOptions struct {
	// AddGenerationPrompt ends the prompt with the opening of an assistant
	// turn, so that the model writes the answer next.
	AddGenerationPrompt bool
	// BOSToken and EOSToken are the texts of the vocabulary's BOS and EOS
	// tokens; templates print them as bos_token and eos_token.
	BOSToken, EOSToken string
	// Now is the time templates see through strftime_now, date_string and
	// datetime. Zero means the current time.
	Now time.Time
	// Tools are passed to the template as tools (when there are any).
	Tools []Tool
	// EnableThinking is passed as enable_thinking; nil passes true, as
	// llama.cpp does. Templates such as Qwen3's close the reasoning block
	// in the prompt when it is false.
	EnableThinking *bool
	// StripBOS drops a BOSToken the template printed at the very start,
	// because the tokenizer adds BOS itself (llama.cpp does this when the
	// vocabulary's add_bos is set). StripEOS does the same for a trailing
	// EOSToken when the tokenizer adds EOS.
	StripBOS, StripEOS bool
	// ReasoningEffort is passed as reasoning_effort when not empty: "low",
	// "medium" or "high", which gpt-oss's templates put in their system
	// message (Format.CheckEffort says which templates take it; Render
	// passes any value on).
	ReasoningEffort string
	// Kwargs are further template variables (llama.cpp's
	// chat_template_kwargs); they override the ones above. Values must
	// encode to JSON.
	Kwargs map[string]any
	// Limits bound the render; zero fields take jinja's defaults.
	Limits Limits
}

// Limits bound one render. See internal/jinja.Limits; zero means default.
type Limits struct {
	MaxSteps, MaxBytes, MaxOutput int64
	MaxDepth                      int
}

// Caps are what a template was found to understand, by rendering probe
// conversations and recording which parts it read (as llama.cpp does).
type Caps struct {
	SystemRole        bool // reads a leading system message
	StringContent     bool // renders when content is a string
	TypedContent      bool // reads content as a list of typed parts
	Tools             bool // reads the tool list
	ToolCalls         bool // reads assistant tool calls
	ParallelToolCalls bool // reads a second tool call
	ObjectArguments   bool // reads tool call arguments as an object
	Reasoning         bool // reads reasoning_content of past assistant turns
}

// ChatML is the template llama.cpp falls back to when a model has none.
const ChatML = "{%- for message in messages -%}\n" +
	"  {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}\n" +
	"{%- endfor -%}\n" +
	"{%- if add_generation_prompt -%}\n" +
	"  {{- '<|im_start|>assistant\\n' -}}\n" +
	"{%- endif -%}"

// Template is a parsed chat template with its capabilities and output
// format. It is immutable and safe for concurrent use.
type Template struct {
	src    string
	tmpl   *jinja.Template
	caps   Caps
	format Format
}

// Parse parses a chat template and probes its capabilities.
func Parse(source string) (*Template, error) {
	if strings.TrimSpace(source) == "" {
		return nil, ErrNoTemplate
	}
	src := patchSource(source)
	tmpl, err := jinja.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	t := &Template{src: source, tmpl: tmpl, format: DetectFormat(source)}
	t.caps = probeCaps(tmpl)
	return t, nil
}

// Source returns the template source as given to Parse.
func (t *Template) Source() string { return t.src }

// Caps returns what the template was found to understand.
func (t *Template) Caps() Caps { return t.caps }

// Format returns the output format detected from the template source.
func (t *Template) Format() Format { return t.format }

// Render renders msgs with template source src. It parses the template
// each time; keep a *Template (Parse) to render it repeatedly.
func Render(src string, msgs []Message, opts RenderOptions) (string, error) {
	t, err := Parse(src)
	if err != nil {
		return "", err
	}
	return t.Render(msgs, opts)
}

// Render formats msgs as llama.cpp's Jinja path does.
func (t *Template) Render(msgs []Message, opts RenderOptions) (string, error) {
	vars, err := t.vars(msgs, opts)
	if err != nil {
		return "", err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	out, err := t.tmpl.Render(vars, jinja.Options{Now: now, Limits: jinja.Limits(opts.Limits)})
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTemplate, err)
	}
	if opts.StripBOS && opts.BOSToken != "" {
		out = strings.TrimPrefix(out, opts.BOSToken)
	}
	if opts.StripEOS && opts.EOSToken != "" {
		out = strings.TrimSuffix(out, opts.EOSToken)
	}
	if t.format.Tools == ToolsHarmony && !opts.AddGenerationPrompt {
		out = harmonyContinue(out)
	}
	if t.format.Tools == ToolsGemma4 && opts.AddGenerationPrompt && strings.HasSuffix(out, "<turn|>\n") {
		// As llama.cpp: a model turn that closed after its tool results
		// (thinking on, so no empty thought block follows) gets the next
		// model turn opened, or the model would not start its reasoning.
		out += "<|turn>model\n"
	}
	if open, close := t.format.thinkMarks(); (t.format.Tools == ToolsSeed || t.format.Tools == ToolsGLM || t.format.Tools == ToolsMiniMax) &&
		opts.EnableThinking != nil && !*opts.EnableThinking && strings.HasSuffix(out, open+t.format.thinkLine()) {
		// As llama.cpp: a prompt that opens Seed-OSS's, GLM's or
		// MiniMax-M2's reasoning (GLM-4.7-Flash's opens it always) with
		// thinking off closes it at once.
		out += close + t.format.thinkLine() + t.format.thinkLine()
	}
	return out, nil
}

// vars builds the template's global variables in llama.cpp's order: messages,
// bos_token, eos_token, enable_thinking, tools, date_string and datetime,
// reasoning_effort, the caller's kwargs, add_generation_prompt.
func (t *Template) vars(msgs []Message, opts RenderOptions) (map[string]jinja.Value, error) {
	msgs = t.adjust(msgs)
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		v, err := messageValue(m, t.caps, t.format)
		if err != nil {
			return nil, fmt.Errorf("%w: message %d: %w", ErrBadMessage, i, err)
		}
		list[i] = v
	}
	if t.format.Tools == ToolsGemma4 && !strings.Contains(t.src, gemma4Compatible) {
		list = gemma4Turns(msgs, list)
	}
	thinking := true
	if opts.EnableThinking != nil {
		thinking = *opts.EnableThinking
	}
	vars := map[string]jinja.Value{
		"messages":        jinja.List(list...),
		"bos_token":       jinja.String(opts.BOSToken),
		"eos_token":       jinja.String(opts.EOSToken),
		"enable_thinking": jinja.Bool(thinking),
	}
	if len(opts.Tools) > 0 {
		tools := make([]jinja.Value, len(opts.Tools))
		for i, tool := range opts.Tools {
			v, err := toolValue(tool)
			if err != nil {
				return nil, fmt.Errorf("%w: tool %d (%s): %w", ErrBadMessage, i, tool.Name, err)
			}
			tools[i] = v
		}
		vars["tools"] = jinja.List(tools...)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	vars["date_string"] = jinja.String(jinja.Strftime(now, "%d %b %Y"))
	vars["datetime"] = jinja.String(jinja.Strftime(now, "%b %d %Y"))
	if opts.ReasoningEffort != "" {
		vars["reasoning_effort"] = jinja.String(opts.ReasoningEffort)
	}
	for k, v := range opts.Kwargs {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: kwarg %q: %w", ErrBadMessage, k, err)
		}
		jv, err := jinja.FromJSON(b)
		if err != nil {
			return nil, fmt.Errorf("%w: kwarg %q: %w", ErrBadMessage, k, err)
		}
		vars[k] = jv
	}
	if opts.AddGenerationPrompt {
		vars["add_generation_prompt"] = jinja.Bool(true)
	}
	return vars, nil
}

// adjust applies llama.cpp's workarounds for what the template lacks.
func (t *Template) adjust(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	copy(out, msgs)
	if t.format.Tools == ToolsHarmony {
		out = harmonyMessages(out)
	}
	if !strings.Contains(t.src, "<|channel|>") {
		for i := range out {
			if out[i].Role == "developer" {
				out[i].Role = RoleSystem
			}
		}
	}
	if !t.caps.SystemRole && len(out) > 0 && out[0].Role == RoleSystem {
		if len(out) > 1 {
			out[1].Content = out[0].Content + "\n" + out[1].Content
		}
		out = out[1:]
	}
	return out
}

// messageValue builds a message's template value with the keys llama.cpp
// sets, in its order: role, content, reasoning_content, name, tool_call_id,
// tool_calls (each: type, function {name, arguments}, id), and for a
// harmony template the reasoning again as thinking, which it reads. For
// format f's ContentBlocks, a system or assistant turn's content is its
// blocks, the reasoning among them and not apart.
func messageValue(m Message, caps Caps, f Format) (jinja.Value, error) {
	d := jinja.NewDict()
	d.Set("role", jinja.String(m.Role))
	blocks := f.ContentBlocks && (m.Role == RoleSystem || m.Role == RoleAssistant)
	switch {
	case blocks:
		var list []jinja.Value
		if m.Thinking != "" {
			list = append(list, contentBlock("thinking", m.Thinking))
		}
		d.Set("content", jinja.List(append(list, contentBlock("text", m.Content))...))
	case caps.TypedContent && !caps.StringContent:
		d.Set("content", jinja.List(contentBlock("text", m.Content)))
	default:
		d.Set("content", jinja.String(m.Content))
	}
	if m.Thinking != "" && !blocks {
		d.Set("reasoning_content", jinja.String(m.Thinking))
	}
	if m.Name != "" {
		d.Set("name", jinja.String(m.Name))
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", jinja.String(m.ToolCallID))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jinja.Value, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			fn := jinja.NewDict()
			fn.Set("name", jinja.String(tc.Name))
			args := jinja.String(tc.Arguments)
			if caps.ObjectArguments {
				a := tc.Arguments
				if strings.TrimSpace(a) == "" {
					a = "{}"
				}
				v, err := jinja.FromJSON([]byte(a))
				if err != nil {
					return jinja.Value{}, fmt.Errorf("tool call %d (%s): arguments are not JSON: %w", i, tc.Name, err)
				}
				args = v
			}
			fn.Set("arguments", args)
			c := jinja.NewDict()
			c.Set("type", jinja.String("function"))
			c.Set("function", fn)
			if tc.ID != "" {
				c.Set("id", jinja.String(tc.ID))
			}
			calls[i] = c
		}
		d.Set("tool_calls", jinja.List(calls...))
	}
	if f.Tools == ToolsHarmony && m.Thinking != "" {
		d.Set("thinking", jinja.String(m.Thinking))
	}
	return d, nil
}

// contentBlock is a typed content block, {"type": kind, kind: text}.
func contentBlock(kind, text string) jinja.Value {
	b := jinja.NewDict()
	b.Set("type", jinja.String(kind))
	b.Set(kind, jinja.String(text))
	return b
}

// toolValue is {"type": "function", "function": {name, description,
// parameters}}, the shape OpenAI's API and llama.cpp pass to templates.
func toolValue(t Tool) (jinja.Value, error) {
	fn := jinja.NewDict()
	fn.Set("name", jinja.String(t.Name))
	if t.Description != "" {
		fn.Set("description", jinja.String(t.Description))
	}
	if len(t.Parameters) > 0 {
		p, err := jinja.FromJSON(t.Parameters)
		if err != nil {
			return jinja.Value{}, fmt.Errorf("parameters are not JSON: %w", err)
		}
		fn.Set("parameters", p)
	}
	d := jinja.NewDict()
	d.Set("type", jinja.String("function"))
	d.Set("function", fn)
	return d, nil
}

// patchSource applies llama.cpp's in-place fixes for two known template
// bugs (gpt-oss and Mistral templates that raise on valid conversations).
func patchSource(src string) string {
	if strings.Contains(src, "<|channel|>") && strings.Contains(src, "in message.content or") {
		src = strings.ReplaceAll(src,
			`{%- if "<|channel|>analysis<|message|>" in message.content or "<|channel|>final<|message|>" in message.content %}`,
			"{%- if false %}")
	}
	if strings.Contains(src, "[TOOL_CALLS]") && strings.Contains(src, "if (message['content'] is none or") {
		src = strings.ReplaceAll(src,
			"{%- if (message['content'] is none or message['content'] == '' or message['content']|length == 0) and "+
				"(message['tool_calls'] is not defined or message['tool_calls'] is none or message['tool_calls']|length == 0) %}",
			"{%- if false %}")
	}
	return src
}
