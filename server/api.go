package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/jsonprefix"
)

// apiError is an error in OpenAI's shape, with the HTTP status to send.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	// excess is a prompt that does not fit the context (nil for other
	// errors), which llama-server's error says.
	excess *contextExcess
}

// contextExcess is a prompt's tokens and the context it does not fit.
type contextExcess struct {
	NPrompt  int `json:"n_prompt_tokens"`
	NContext int `json:"n_ctx"`
}

func (e *apiError) Error() string { return e.Message }

func strp(s string) *string { return &s }

func badRequest(param, format string, args ...any) *apiError {
	e := &apiError{Status: 400, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
	if param != "" {
		e.Param = strp(param)
	}
	return e
}

func unsupported(param, format string, args ...any) *apiError {
	e := badRequest(param, format, args...)
	e.Code = strp("unsupported_parameter")
	return e
}

// stopList is "stop": a string or an array of strings.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*s = nil
		return nil
	}
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// content is a message's content: a string, null, or an array of parts.
type content struct {
	text  string
	null  bool
	parts bool
}

func (c *content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		c.null = true
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.text)
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content must be a string, null or an array of content parts")
	}
	c.parts = true
	var texts []string
	for i, p := range parts {
		if p.Type != "text" {
			return fmt.Errorf("content part %d has type %q: only text parts are supported", i, p.Type)
		}
		if p.Text == nil {
			return fmt.Errorf("content part %d has no text", i)
		}
		texts = append(texts, *p.Text)
	}
	c.text = strings.Join(texts, "\n")
	return nil
}

type toolCallJSON struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type messageJSON struct {
	Role             string         `json:"role"`
	Content          *content       `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Name             string         `json:"name"`
	ToolCalls        []toolCallJSON `json:"tool_calls"`
	ToolCallID       string         `json:"tool_call_id"`
}

type toolJSON struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// commonRequest holds the fields both endpoints share.
type commonRequest struct {
	Model         string         `json:"model"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	tokenLimit
	Temperature      *float64        `json:"temperature"`
	TopP             *float64        `json:"top_p"`
	Seed             *int64          `json:"seed"`
	Stop             stopList        `json:"stop"`
	N                *int            `json:"n"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	Logprobs         json.RawMessage `json:"logprobs"`
	ResponseFormat   *responseFormat `json:"response_format"`
	speculation
	// IDSlot is llama-server's id_slot: the slot to run on (-1, or
	// absent: the one whose cache holds the most of the prompt).
	IDSlot *int `json:"id_slot"`
	// LoRA is llama-server's per-request adapter scales: [{"id", "scale"}].
	LoRA json.RawMessage `json:"lora"`
}

// tokenLimit is the completion's length limit under OpenAI's two names:
// max_tokens, and max_completion_tokens, which replaces it and wins when
// both are given.
type tokenLimit struct {
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

// limit is the limit given (nil: none) and the name it was given under.
func (l tokenLimit) limit() (*int, string) {
	if l.MaxCompletionTokens != nil {
		return l.MaxCompletionTokens, "max_completion_tokens"
	}
	return l.MaxTokens, "max_tokens"
}

// speculation is llama-server's speculative decoding fields (flat names
// with a dot); p_min, a draft model's threshold, matters only with one.
type speculation struct {
	SpecNMax *int     `json:"speculative.n_max"`
	SpecNMin *int     `json:"speculative.n_min"`
	SpecPMin *float64 `json:"speculative.p_min"`
}

// draft checks the fields and sets p's drafting from them.
func (sp speculation) draft(p *Params) *apiError {
	if n := sp.SpecNMax; n != nil && (*n < 0 || *n > llm.MaxDraft) {
		return badRequest("speculative.n_max", "speculative.n_max must be between 0 and %d, got %d", llm.MaxDraft, *n)
	}
	if n := sp.SpecNMin; n != nil && *n < 0 {
		return badRequest("speculative.n_min", "speculative.n_min must not be negative, got %d", *n)
	}
	if v := sp.SpecPMin; v != nil && !(*v >= 0 && *v <= 1) {
		return badRequest("speculative.p_min", "speculative.p_min must be between 0 and 1, got %v", *v)
	}
	p.DraftMax, p.DraftMin, p.DraftPMin = sp.SpecNMax, sp.SpecNMin, sp.SpecPMin
	return nil
}

type responseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *jsonSchemaFormat `json:"json_schema"`
	// Schema is llama.cpp's server's form: {"type": "json_object",
	// "schema": {…}}.
	Schema json.RawMessage `json:"schema"`
}

type jsonSchemaFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict"`
}

type chatRequest struct {
	commonRequest
	Messages          []messageJSON   `json:"messages"`
	Tools             []toolJSON      `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	// ChatTemplateKwargs are extra template variables, as llama.cpp's
	// server takes them (for example {"enable_thinking": false}).
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
	TopLogprobs        *int           `json:"top_logprobs"`
	// ReasoningEffort is OpenAI's: "low", "medium" or "high" reach a
	// harmony-format (gpt-oss) template as reasoning_effort and are
	// refused for the others; "none" turns thinking off, as in Ollama's
	// OpenAI API.
	ReasoningEffort *string `json:"reasoning_effort"`
}

type completionRequest struct {
	commonRequest
	Prompt json.RawMessage `json:"prompt"`
	Echo   bool            `json:"echo"`
	BestOf *int            `json:"best_of"`
	Suffix *string         `json:"suffix"`
}

// decodeJSON reads one JSON object from r into v, mapping errors to
// OpenAI's 400s.
func decodeJSON(r io.Reader, v any) *apiError {
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return &apiError{Status: 413, Type: "invalid_request_error", Code: strp("request_too_large"),
				Message: fmt.Sprintf("the request body is larger than this server accepts (%d bytes)", mbe.Limit)}
		case errors.As(err, &te) && te.Field == "":
			return badRequest("", "the request body must be a JSON object, got JSON %s", te.Value)
		case errors.As(err, &te):
			// Fields of an embedded struct carry its name first.
			field := te.Field
			for _, embedded := range []string{"commonRequest.", "ollamaCommon.", "tokenLimit.", "speculation."} {
				field = strings.TrimPrefix(field, embedded)
			}
			return badRequest(field, "%s: wrong type: expected %s, got JSON %s", field, te.Type, te.Value)
		case errors.Is(err, io.EOF):
			return badRequest("", "the request body is empty; expected a JSON object")
		default:
			return badRequest("", "could not parse the JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if dec.More() {
		return badRequest("", "could not parse the JSON body: extra data after the JSON object")
	}
	return nil
}

// maxChoices bounds n: the choices of a request are generated one after
// the other, each reusing the cached prompt.
const maxChoices = 16

// choices is the number of choices the request asks for (n, default 1).
func (c *commonRequest) choices() int {
	if c.N == nil {
		return 1
	}
	return *c.N
}

// params validates the shared sampling fields.
func (c *commonRequest) params() (Params, *apiError) {
	var p Params
	if c.N != nil && (*c.N < 1 || *c.N > maxChoices) {
		return p, badRequest("n", "n must be between 1 and %d, got %d", maxChoices, *c.N)
	}
	if maxTok, param := c.limit(); maxTok != nil {
		if *maxTok < 1 {
			return p, badRequest(param, "%s must be at least 1, got %d", param, *maxTok)
		}
		p.MaxTokens = *maxTok
	}
	if t := c.Temperature; t != nil && (*t < 0 || *t > 2) {
		return p, badRequest("temperature", "temperature must be between 0 and 2, got %g", *t)
	}
	if t := c.TopP; t != nil && (*t <= 0 || *t > 1) {
		return p, badRequest("top_p", "top_p must be greater than 0 and at most 1, got %g", *t)
	}
	for name, v := range map[string]*float64{"presence_penalty": c.PresencePenalty, "frequency_penalty": c.FrequencyPenalty} {
		if v != nil && (*v < -2 || *v > 2) {
			return p, badRequest(name, "%s must be between -2 and 2, got %g", name, *v)
		}
	}
	if len(c.Stop) > 16 {
		return p, badRequest("stop", "at most 16 stop sequences, got %d", len(c.Stop))
	}
	for _, s := range c.Stop {
		if s == "" {
			return p, badRequest("stop", "stop sequences must not be empty")
		}
	}
	if rf := c.ResponseFormat; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			p.JSON = true
			if len(rf.Schema) > 0 && !bytes.Equal(bytes.TrimSpace(rf.Schema), []byte("null")) {
				p.JSONSchema = rf.Schema
			}
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return p, badRequest("response_format.json_schema.schema", "response_format json_schema needs json_schema.schema")
			}
			p.JSON, p.JSONSchema = true, rf.JSONSchema.Schema
		default:
			return p, badRequest("response_format.type", "response_format.type %q is not one of text, json_object, json_schema", rf.Type)
		}
	}
	if len(p.JSONSchema) > 0 {
		// Refused here, with the field named, rather than by the Backend.
		if _, err := jsonprefix.Compile(p.JSONSchema); err != nil {
			return p, badRequest("response_format", "response_format: %v", err)
		}
	}
	if aerr := c.draft(&p); aerr != nil {
		return p, aerr
	}
	p.Temperature, p.TopP, p.Seed = c.Temperature, c.TopP, c.Seed
	p.PresencePenalty, p.FrequencyPenalty = c.PresencePenalty, c.FrequencyPenalty
	p.stream = c.Stream
	if c.IDSlot != nil && *c.IDSlot != -1 {
		if *c.IDSlot < 0 {
			return p, badRequest("id_slot", "Invalid slot ID: id_slot must be -1 or a slot's id, got %d", *c.IDSlot)
		}
		p.slot = c.IDSlot
	}
	if len(c.LoRA) > 0 && string(c.LoRA) != "null" {
		lora, aerr := loraParam(c.LoRA)
		if aerr != nil {
			return p, aerr
		}
		p.LoRA = lora
	}
	return p, nil
}

var knownRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true}

// chatInput is a validated chat request.
type chatInput struct {
	messages []chat.Message
	tools    []chat.Tool
	params   Params
	kwargs   map[string]any
	thinking *bool  // the template's enable_thinking; nil: its default
	effort   string // the template's reasoning_effort; "": its default
}

func (r *chatRequest) validate() (*chatInput, *apiError) {
	p, err := r.params()
	if err != nil {
		return nil, err
	}
	// Chat's logprobs is a switch and top_logprobs a count (0 to 20).
	if lp := bytes.TrimSpace(r.Logprobs); len(lp) > 0 && !bytes.Equal(lp, []byte("null")) {
		if json.Unmarshal(lp, &p.Logprobs) != nil {
			return nil, badRequest("logprobs", "logprobs must be true or false")
		}
	}
	if n := r.TopLogprobs; n != nil {
		switch {
		case *n < 0 || *n > maxTopLogprobs:
			return nil, badRequest("top_logprobs", "top_logprobs must be between 0 and %d, got %d", maxTopLogprobs, *n)
		case !p.Logprobs:
			return nil, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
		p.TopLogprobs = *n
	}
	if len(r.Messages) == 0 {
		return nil, badRequest("messages", "messages must be a non-empty array")
	}
	in := &chatInput{params: p, kwargs: r.ChatTemplateKwargs}
	if e := r.ReasoningEffort; e != nil {
		switch *e {
		case "none":
			off := false
			in.thinking = &off
		case "low", "medium", "high":
			in.effort = *e
		default:
			return nil, badRequest("reasoning_effort", `reasoning_effort %q is not one of "low", "medium", "high" or "none"`, *e)
		}
	}
	for i, m := range r.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		if m.Role == "" {
			return nil, badRequest(param+".role", "%s.role is missing", param)
		}
		if !knownRoles[m.Role] {
			return nil, badRequest(param+".role", "%s.role %q is not one of system, developer, user, assistant, tool", param, m.Role)
		}
		msg := chat.Message{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, Thinking: m.ReasoningContent}
		if m.Content != nil {
			msg.Content = m.Content.text
		}
		if (m.Content == nil || m.Content.null) && m.Role != "assistant" {
			return nil, badRequest(param+".content", "%s.content is missing", param)
		}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return nil, badRequest(param+".tool_calls", "only assistant messages have tool_calls")
		}
		for j, tc := range m.ToolCalls {
			if tc.Type != "" && tc.Type != "function" {
				return nil, badRequest(fmt.Sprintf("%s.tool_calls[%d].type", param, j), "tool call type %q is not supported; use \"function\"", tc.Type)
			}
			if tc.Function.Name == "" {
				return nil, badRequest(fmt.Sprintf("%s.tool_calls[%d].function.name", param, j), "tool call has no function name")
			}
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		in.messages = append(in.messages, msg)
	}
	toolsOn := true
	if tc := bytes.TrimSpace(r.ToolChoice); len(tc) > 0 && !bytes.Equal(tc, []byte("null")) {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(tc, &s) == nil:
			switch s {
			case "auto":
			case "none":
				toolsOn = false
			case "required":
				in.params.ToolChoice = s
			default:
				return nil, badRequest("tool_choice", "tool_choice must be \"none\", \"auto\" or \"required\", got %q", s)
			}
		case json.Unmarshal(tc, &named) == nil && named.Type == "function" && named.Function.Name != "":
			in.params.ToolChoice = named.Function.Name
		default:
			return nil, badRequest("tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}`)
		}
	}
	tools, aerr := toolsOf(r.Tools)
	if aerr != nil {
		return nil, aerr
	}
	if toolsOn {
		in.tools = tools
	}
	in.params.Tools = in.tools
	return in, nil
}

// functionTool is a chat request's function tool of name, description and
// parameters (a JSON schema), as the Responses and Messages APIs' flat
// tools give them.
func functionTool(name, description string, parameters json.RawMessage) toolJSON {
	t := toolJSON{Type: "function"}
	t.Function.Name, t.Function.Description, t.Function.Parameters = name, description, parameters
	return t
}

// namedToolChoice is a chat request's tool_choice that forces a call of
// the tool name.
func namedToolChoice(name string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": name}})
	return b
}

// toolsOf checks a request's tools (OpenAI's and Ollama's have one shape)
// and returns them as the template takes them.
func toolsOf(list []toolJSON) ([]chat.Tool, *apiError) {
	var tools []chat.Tool
	for i, t := range list {
		param := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return nil, badRequest(param+".type", "%s.type must be \"function\", got %q", param, t.Type)
		}
		if t.Function.Name == "" {
			return nil, badRequest(param+".function.name", "%s.function.name is missing", param)
		}
		if len(t.Function.Parameters) > 0 && !json.Valid(t.Function.Parameters) {
			return nil, badRequest(param+".function.parameters", "%s.function.parameters is not JSON", param)
		}
		tools = append(tools, chat.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return tools, nil
}

func (r *completionRequest) validate() (string, Params, *apiError) {
	p, err := r.params()
	if err != nil {
		return "", p, err
	}
	if r.Echo {
		return "", p, unsupported("echo", "echo is not supported")
	}
	// The legacy endpoint's logprobs is a count (0 to 5) of alternatives.
	if lp := bytes.TrimSpace(r.Logprobs); len(lp) > 0 && !bytes.Equal(lp, []byte("null")) {
		var n int
		if json.Unmarshal(lp, &n) != nil || n < 0 || n > maxCompletionLogprobs {
			return "", p, badRequest("logprobs", "logprobs must be a whole number from 0 to %d", maxCompletionLogprobs)
		}
		p.Logprobs, p.TopLogprobs = true, n
	}
	if r.BestOf != nil && *r.BestOf != 1 {
		return "", p, unsupported("best_of", "best_of other than 1 is not supported")
	}
	if r.Suffix != nil && *r.Suffix != "" {
		return "", p, unsupported("suffix", "suffix is not supported")
	}
	raw := bytes.TrimSpace(r.Prompt)
	if len(raw) == 0 {
		return "", p, badRequest("prompt", "prompt is missing")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, p, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		if len(list) != 1 {
			return "", p, unsupported("prompt", "prompt must be one string (got an array of %d)", len(list))
		}
		return list[0], p, nil
	}
	return "", p, unsupported("prompt", "prompt must be a string; token arrays are not supported")
}

// Responses.

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageOf(r Result) *usageJSON {
	return &usageJSON{r.PromptTokens, r.CompletionTokens, r.PromptTokens + r.CompletionTokens}
}

type respMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
	Refusal          *string        `json:"refusal"`
}

type chatChoice struct {
	Index        int           `json:"index"`
	Message      respMessage   `json:"message"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

// OpenAI's bounds on the alternatives a token's logprobs list.
const (
	maxTopLogprobs        = 20 // chat's top_logprobs
	maxCompletionLogprobs = 5  // the legacy endpoint's logprobs
)

// minLogprob is the floor of the log-probabilities written: JSON cannot
// carry -Inf.
const minLogprob = -9999.0

func finite(lp float64) float64 { return max(lp, minLogprob) }

// byteList is text as the list of its bytes' values (JSON would write a
// []byte in base64).
func byteList(text string) []int {
	b := make([]int, len(text))
	for i := range len(text) {
		b[i] = int(text[i])
	}
	return b
}

// chatLogprobs is a chat choice's (or chunk's) logprobs: an entry a token.
type chatLogprobs struct {
	Content []logprobJSON `json:"content"`
}

type logprobJSON struct {
	Token       string           `json:"token"`
	Logprob     float64          `json:"logprob"`
	Bytes       []int            `json:"bytes"`
	TopLogprobs []topLogprobJSON `json:"top_logprobs"`
}

type topLogprobJSON struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// chatLogprobsOf is the chat form of tokens' logprobs; nil for nil.
func chatLogprobsOf(lps []TokenLogprobs) *chatLogprobs {
	if lps == nil {
		return nil
	}
	out := &chatLogprobs{Content: make([]logprobJSON, 0, len(lps))}
	for _, lp := range lps {
		e := logprobJSON{Token: lp.Token, Logprob: finite(lp.Logprob), Bytes: byteList(lp.Token), TopLogprobs: []topLogprobJSON{}}
		for _, t := range lp.Top {
			e.TopLogprobs = append(e.TopLogprobs, topLogprobJSON{Token: t.Token, Logprob: finite(t.Logprob), Bytes: byteList(t.Token)})
		}
		out.Content = append(out.Content, e)
	}
	return out
}

// completionLogprobs is the legacy endpoint's logprobs: lists a token,
// the alternatives as a map, and each token's offset in the text.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// completionLogprobsOf is the legacy form of tokens' logprobs, whose text
// begins at offset bytes into the completion; nil for nil.
func completionLogprobsOf(lps []TokenLogprobs, offset int) *completionLogprobs {
	if lps == nil {
		return nil
	}
	out := &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	for _, lp := range lps {
		top := make(map[string]float64, len(lp.Top))
		for _, t := range lp.Top {
			if _, dup := top[t.Token]; !dup { // tokens of the same text: the likelier
				top[t.Token] = finite(t.Logprob)
			}
		}
		out.Tokens = append(out.Tokens, lp.Token)
		out.TokenLogprobs = append(out.TokenLogprobs, finite(lp.Logprob))
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, offset)
		offset += len(lp.Token)
	}
	return out
}

// response is the body of every OpenAI reply, whole or streamed; only the
// choice type differs by endpoint. Usage is omitted from stream chunks
// until the last, and always set on a whole reply. Timings, as llama-server
// adds them (its web UI reads the speed there), are on a whole reply and on
// each choice's last chunk: the prompt's and the generation's tokens and
// times, and the tokens speculative decoding drafted and kept.
type response[C choice] struct {
	ID                string         `json:"id"`
	Object            string         `json:"object"`
	Created           int64          `json:"created"`
	Model             string         `json:"model"`
	SystemFingerprint string         `json:"system_fingerprint"`
	Choices           []C            `json:"choices"`
	Usage             *usageJSON     `json:"usage,omitempty"`
	Timings           *nativeTimings `json:"timings,omitempty"`
}

// choice is what one endpoint's reply lists.
type choice interface {
	chatChoice | chunkChoice | completionChoice
}

type (
	chatResponse       = response[chatChoice]
	chatChunk          = response[chunkChoice]
	completionResponse = response[completionChoice]
)

type deltaJSON struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
}

type chunkChoice struct {
	Index        int           `json:"index"`
	Delta        deltaJSON     `json:"delta"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

type completionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *completionLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
}
