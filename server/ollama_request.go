package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/jsonprefix"
)

// The requests of Ollama's API, as its api package names the fields.
// Unknown fields are ignored, as Ollama's server ignores them.

// ollamaCommon holds what /api/chat and /api/generate share.
type ollamaCommon struct {
	Model   string          `json:"model"`
	Format  json.RawMessage `json:"format"`
	Options ollamaOptions   `json:"options"`
	// Stream is true unless set false: Ollama streams by default.
	Stream      *bool           `json:"stream"`
	Think       json.RawMessage `json:"think"`
	Logprobs    bool            `json:"logprobs"`
	TopLogprobs int             `json:"top_logprobs"`
	// Accepted and ignored: the model stays loaded while the server runs
	// (keep_alive), a prompt longer than the context is a 400 rather than
	// cut (truncate), and a generation that fills the context ends with
	// done_reason "length" rather than shifting it (shift).
	KeepAlive json.RawMessage `json:"keep_alive"`
	Truncate  *bool           `json:"truncate"`
	Shift     *bool           `json:"shift"`
}

type ollamaChatRequest struct {
	ollamaCommon
	Messages []ollamaMessage `json:"messages"`
	Tools    []toolJSON      `json:"tools"`
}

type ollamaGenerateRequest struct {
	ollamaCommon
	Prompt string `json:"prompt"`
	System string `json:"system"`
	Raw    bool   `json:"raw"`
	// Not supported; refused when not empty.
	Suffix   string            `json:"suffix"`
	Template string            `json:"template"`
	Context  []int             `json:"context"`
	Images   []json.RawMessage `json:"images"`
}

// ollamaMessage is a chat message, in a request and in a reply.
type ollamaMessage struct {
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	Thinking   string            `json:"thinking,omitempty"`
	Images     []json.RawMessage `json:"images,omitempty"`
	ToolCalls  []ollamaToolCall  `json:"tool_calls,omitempty"`
	ToolName   string            `json:"tool_name,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

// ollamaToolCall is a tool call: its arguments are a JSON object, not the
// JSON text of one as in OpenAI's API.
type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int             `json:"index"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

func (c *ollamaCommon) common() *ollamaCommon { return c }

// ollamaSettings are what a generation request asks besides its prompt.
type ollamaSettings struct {
	params   Params
	stop     []string
	thinking *bool  // the template's enable_thinking; nil: its default
	effort   string // the template's reasoning_effort, from a think level
	stream   bool
}

// settings checks the fields chat and generate share against the model
// (named model in messages, as Ollama names it).
func (c *ollamaCommon) settings(s *Server, model string) (ollamaSettings, *apiError) {
	var out ollamaSettings
	v, aerr := s.ollamaOptions(c.Options)
	if aerr != nil {
		return out, aerr
	}
	if out.params, out.stop, aerr = v.params(); aerr != nil {
		return out, aerr
	}
	if aerr = ollamaFormat(c.Format, &out.params); aerr != nil {
		return out, aerr
	}
	if out.thinking, out.effort, aerr = s.ollamaThink(c.Think, model); aerr != nil {
		return out, aerr
	}
	if c.TopLogprobs < 0 || c.TopLogprobs > maxTopLogprobs {
		return out, badRequest("top_logprobs", "top_logprobs must be between 0 and %d", maxTopLogprobs)
	}
	if c.Logprobs { // top_logprobs alone asks nothing, as in Ollama
		out.params.Logprobs, out.params.TopLogprobs = true, c.TopLogprobs
	}
	out.stream = c.Stream == nil || *c.Stream
	out.params.stream = out.stream
	return out, nil
}

// ollamaThink reads think: true, false, or a level ("high", "medium",
// "low"), which only gpt-oss's harmony format takes: it reaches its
// template as reasoning_effort, and is refused for every other model, as
// Ollama does. true for a model whose template does not think is a 400,
// as in Ollama; false for gpt-oss is passed on as enable_thinking, which
// its template does not read, so it reasons all the same and the reply
// carries its analysis as thinking (as Ollama's harmony parser does).
func (s *Server) ollamaThink(raw json.RawMessage, model string) (*bool, string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, "", nil
	}
	var on bool
	var level string
	switch {
	case json.Unmarshal(raw, &on) == nil:
		if on && !s.thinks() {
			return nil, "", badRequest("think", "%q does not support thinking", model)
		}
		return &on, "", nil
	case json.Unmarshal(raw, &level) == nil:
		if level != "high" && level != "medium" && level != "low" {
			return nil, "", badRequest("think", `invalid think value: %q (must be "high", "medium", "low", true, or false)`, level)
		}
		if s.info.Template == nil || s.info.Template.Format().CheckEffort(level) != nil {
			return nil, "", badRequest("think", "think value %q is not supported for this model", level)
		}
		return nil, level, nil
	}
	return nil, "", badRequest("think", `think must be a boolean or string ("high", "medium", "low", true, or false)`)
}

// ollamaFormat reads format into p: "json" (one JSON object) or a JSON
// schema the object must satisfy; null and "" are no format, as in Ollama.
func ollamaFormat(raw json.RawMessage, p *Params) *apiError {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null" || string(raw) == `""`:
		return nil
	case string(raw) == `"json"`:
		p.JSON = true
		return nil
	case raw[0] != '{':
		return badRequest("format", `invalid format: %s; expected "json" or a valid JSON Schema object`, raw)
	}
	// Refused here, naming what cannot be enforced, rather than by the
	// Backend.
	if _, err := jsonprefix.Compile(raw); err != nil {
		return badRequest("format", "format: %v", err)
	}
	p.JSON, p.JSONSchema = true, raw
	return nil
}

// ollamaOptions is a request's "options": model parameters by name.
type ollamaOptions map[string]json.RawMessage

// The types of Ollama's options (api.Options).
type optionType uint8

const (
	optInt optionType = iota
	optFloat
	optBool
	optStrings
	optUnknown
)

// ollamaOption is the type of the option name; optUnknown for a name
// Ollama does not know (it warns and ignores those; so does this server).
func ollamaOption(name string) optionType {
	switch name {
	case "num_keep", "seed", "num_predict", "top_k", "repeat_last_n", "num_ctx", "num_batch", "num_gpu", "main_gpu", "num_thread":
		return optInt
	case "top_p", "min_p", "typical_p", "temperature", "repeat_penalty", "presence_penalty", "frequency_penalty":
		return optFloat
	case "use_mmap":
		return optBool
	case "stop":
		return optStrings
	}
	return optUnknown
}

// optionValues are the options a request set, by type; null is unset.
type optionValues struct {
	ints    map[string]int64
	floats  map[string]float64
	stop    []string
	unknown []string
}

// ollamaOptions checks o's types and returns its values, logging the
// names it ignores as Ollama does.
func (s *Server) ollamaOptions(o ollamaOptions) (optionValues, *apiError) {
	v, aerr := o.values()
	if len(v.unknown) > 0 {
		s.log.Warn("ignored unknown options", "options", v.unknown)
	}
	return v, aerr
}

// values checks each known option's type (a wrong one is a 400, as in
// Ollama) and returns them.
func (o ollamaOptions) values() (optionValues, *apiError) {
	v := optionValues{ints: map[string]int64{}, floats: map[string]float64{}}
	// In order, so that of several bad options the same one is named.
	for _, name := range slices.Sorted(maps.Keys(o)) {
		raw := o[name]
		typ := ollamaOption(name)
		if typ == optUnknown {
			v.unknown = append(v.unknown, name)
			continue
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		param := "options." + name
		switch typ {
		case optInt:
			n, ok := jsonInt(raw)
			if !ok {
				return v, badRequest(param, "option %q must be of type integer", name)
			}
			v.ints[name] = n
		case optFloat:
			var f float64
			if json.Unmarshal(raw, &f) != nil {
				return v, badRequest(param, "option %q must be of type float", name)
			}
			v.floats[name] = f
		case optBool:
			var b bool
			if json.Unmarshal(raw, &b) != nil {
				return v, badRequest(param, "option %q must be of type boolean", name)
			}
		case optStrings:
			if json.Unmarshal(raw, &v.stop) != nil {
				return v, badRequest(param, "option %q must be an array of strings", name)
			}
		}
	}
	return v, nil
}

// jsonInt reads a JSON number as an integer; a fraction is cut off, as
// Ollama reads one.
func jsonInt(raw json.RawMessage) (int64, bool) {
	// Into any, not a json.Number, which would take a string of digits.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return 0, false
	}
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return n, true
	}
	f, err := num.Float64()
	if err != nil || math.Abs(f) >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// maxOllamaStops bounds options.stop: each is looked for after every token.
const maxOllamaStops = 64

// params are the sampling settings the options ask for, over Ollama's
// defaults (api.DefaultOptions: temperature 0.8, top_k 40, top_p 0.9, no
// min_p), which a client that sends none expects rather than the
// library's (top_p 0.95, min_p 0.05). repeat_penalty applies only when
// asked: Ollama's default 1.1 is its older engine's, which its current
// one, like this server, does without. Options that concern loading
// (num_ctx, num_gpu, num_thread …) or that have no counterpart here
// (typical_p, num_keep) are checked and ignored.
func (v optionValues) params() (Params, []string, *apiError) {
	temperature, topP, minP, topK := 0.8, 0.9, 0.0, 40
	p := Params{Temperature: &temperature, TopP: &topP, MinP: &minP, TopK: &topK}
	for _, name := range slices.Sorted(maps.Keys(v.floats)) {
		f := v.floats[name]
		// Out of range, temperature, top_p and min_p are clamped, as
		// Ollama's sampler does.
		switch name {
		case "temperature":
			temperature = max(f, 0)
		case "top_p":
			topP = min(f, 1)
		case "min_p":
			minP = min(max(f, 0), 1)
		case "repeat_penalty":
			if f <= 0 {
				return p, nil, badRequest("options."+name, "options.%s must be greater than 0 (1 turns it off), got %g", name, f)
			}
			p.RepeatPenalty = &f
		case "presence_penalty":
			p.PresencePenalty = &f
		case "frequency_penalty":
			p.FrequencyPenalty = &f
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v.ints)) {
		switch n := v.ints[name]; name {
		case "top_k":
			topK = int(max(n, 0)) // Ollama's sampler takes k ≤ 0 for no filter
		case "num_predict":
			if n > 0 { // -1 (unlimited) and -2 (fill the context) end at a full context here
				p.MaxTokens = int(min(n, math.MaxInt32))
			}
		case "seed":
			if n >= 0 { // Ollama's -1: a random seed, as none gives
				p.Seed = &n
			}
		case "repeat_last_n":
			if n < -1 {
				return p, nil, badRequest("options."+name, "options.%s must be at least -1 (the whole context), got %d", name, n)
			}
			last := int(min(n, math.MaxInt32))
			p.RepeatLastN = &last
		}
	}
	if topP <= 0 { // Ollama keeps the likeliest token alone
		topP, topK = 1, 1
	}
	if len(v.stop) > maxOllamaStops {
		return p, nil, badRequest("options.stop", "at most %d stop sequences, got %d", maxOllamaStops, len(v.stop))
	}
	for _, s := range v.stop {
		if s == "" {
			return p, nil, badRequest("options.stop", "stop sequences must not be empty")
		}
	}
	return p, v.stop, nil
}

// ollamaChatInput checks a chat's messages and tools and returns them as
// the template takes them.
func ollamaChatInput(msgs []ollamaMessage, tools []toolJSON) (*chatInput, *apiError) {
	in := &chatInput{}
	for i, m := range msgs {
		param := fmt.Sprintf("messages[%d]", i)
		role := strings.ToLower(m.Role) // as Ollama reads roles
		switch {
		case role == "":
			return nil, badRequest(param+".role", "%s.role is missing", param)
		case !knownRoles[role]:
			return nil, badRequest(param+".role", "%s.role %q is not one of system, user, assistant, tool", param, m.Role)
		case len(m.Images) > 0:
			return nil, badRequest(param+".images", "%s.images: images are not supported: this server runs text models", param)
		case len(m.ToolCalls) > 0 && role != "assistant":
			return nil, badRequest(param+".tool_calls", "only assistant messages have tool_calls")
		}
		msg := chat.Message{Role: role, Content: m.Content, Thinking: m.Thinking, Name: m.ToolName, ToolCallID: m.ToolCallID}
		for j, tc := range m.ToolCalls {
			what := fmt.Sprintf("%s.tool_calls[%d].function", param, j)
			if tc.Function.Name == "" {
				return nil, badRequest(what+".name", "%s.name is missing", what)
			}
			args, ok := argumentsText(tc.Function.Arguments)
			if !ok {
				return nil, badRequest(what+".arguments", "%s.arguments must be a JSON object", what)
			}
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		}
		in.messages = append(in.messages, msg)
	}
	var aerr *apiError
	in.tools, aerr = toolsOf(tools)
	return in, aerr
}

// argumentsText is a call's arguments object as JSON text (what chat
// takes); a string holding one, as OpenAI writes arguments, is read too.
func argumentsText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "{}", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = bytes.TrimSpace([]byte(s))
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return "", false
	}
	var b bytes.Buffer
	json.Compact(&b, raw)
	return b.String(), true
}

// argumentsObject is a parsed call's arguments as Ollama's replies carry
// them: a JSON object. A model's call whose arguments are not one (which
// Ollama's api.ToolCall could not decode) gets an empty object.
func argumentsObject(text string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) == nil && obj != nil {
		return json.RawMessage(text)
	}
	return json.RawMessage("{}")
}
