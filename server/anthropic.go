package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/lowmem/llm/chat"
)

// Anthropic's Messages API (POST /v1/messages, and
// /v1/messages/count_tokens), which llama-server and Ollama serve too, so
// that Anthropic's SDKs and the tools built on them (Claude Code among
// them) can use a local model: the request is turned into a chat
// completion request — system, messages of text, tool_use and tool_result
// blocks, tools and tool_choice, thinking — and the reply, split by the
// same parser, into content blocks: thinking, text, tool_use.

type anthropicRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int               `json:"max_tokens"`
	Messages      []anthropicMessage `json:"messages"`
	System        json.RawMessage    `json:"system"`
	StopSequences []string           `json:"stop_sequences"`
	Stream        bool               `json:"stream"`
	Temperature   *float64           `json:"temperature"`
	TopP          *float64           `json:"top_p"`
	TopK          *int               `json:"top_k"`
	Tools         []anthropicTool    `json:"tools"`
	ToolChoice    *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthropicBlock is a content block of a request's message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

type anthropicTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// writeAnthropicError writes e in the Messages API's error shape, its
// type chosen by the status.
func writeAnthropicError(w http.ResponseWriter, e *apiError) {
	typ := map[int]string{400: "invalid_request_error", 404: "not_found_error", 413: "request_too_large",
		429: "rate_limit_error", 503: "overloaded_error"}[e.Status]
	if typ == "" {
		typ = "api_error"
		if e.Status < 500 {
			typ = "invalid_request_error"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(anthropicErrorJSON(typ, e.Message))
}

func anthropicErrorJSON(typ, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message}}
}

// chatRequest is r as a chat completion request.
func (r *anthropicRequest) chatRequest() (*chatRequest, *apiError) {
	if r.MaxTokens == nil || *r.MaxTokens < 1 {
		return nil, badRequest("max_tokens", "max_tokens is required and must be at least 1")
	}
	c := &chatRequest{}
	c.Model, c.Stream, c.MaxTokens, c.Temperature, c.TopP = r.Model, r.Stream, r.MaxTokens, r.Temperature, r.TopP
	c.Stop = r.StopSequences
	if sys := bytes.TrimSpace(r.System); len(sys) > 0 && !bytes.Equal(sys, []byte("null")) {
		text, aerr := blocksText(sys, "system")
		if aerr != nil {
			return nil, aerr
		}
		c.Messages = append(c.Messages, messageJSON{Role: "system", Content: &content{text: text}})
	}
	if len(r.Messages) == 0 {
		return nil, badRequest("messages", "messages must be a non-empty array")
	}
	for i, m := range r.Messages {
		msgs, aerr := m.chatMessages(fmt.Sprintf("messages[%d]", i))
		if aerr != nil {
			return nil, aerr
		}
		c.Messages = append(c.Messages, msgs...)
	}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "custom" {
			return nil, unsupported(fmt.Sprintf("tools[%d].type", i), "tools[%d].type %q is not supported: only client tools with an input_schema", i, t.Type)
		}
		c.Tools = append(c.Tools, functionTool(t.Name, t.Description, t.InputSchema))
	}
	if tc := r.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto", "none":
			c.ToolChoice, _ = json.Marshal(tc.Type)
		case "any":
			c.ToolChoice, _ = json.Marshal("required")
		case "tool":
			c.ToolChoice = namedToolChoice(tc.Name)
		default:
			return nil, badRequest("tool_choice.type", `tool_choice.type %q is not one of "auto", "any", "tool", "none"`, tc.Type)
		}
	}
	if r.Thinking != nil && r.Thinking.Type == "disabled" {
		none := "none"
		c.ReasoningEffort = &none
	}
	return c, nil
}

// chatMessages is one Anthropic message as chat messages: a user turn's
// tool_result blocks become tool messages before its text; an assistant
// turn's text, thinking and tool_use blocks one assistant message.
func (m anthropicMessage) chatMessages(param string) ([]messageJSON, *apiError) {
	if m.Role != "user" && m.Role != "assistant" {
		return nil, badRequest(param+".role", "%s.role %q is not one of user, assistant", param, m.Role)
	}
	raw := bytes.TrimSpace(m.Content)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return []messageJSON{{Role: m.Role, Content: &content{text: s}}}, nil
	}
	var blocks []anthropicBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, badRequest(param+".content", "%s.content must be a string or an array of content blocks", param)
	}
	out := messageJSON{Role: m.Role}
	var texts, thinking []string
	var tools []messageJSON
	for j, b := range blocks {
		bp := fmt.Sprintf("%s.content[%d]", param, j)
		switch {
		case b.Type == "text":
			texts = append(texts, b.Text)
		case b.Type == "thinking" && m.Role == "assistant":
			thinking = append(thinking, b.Thinking)
		case b.Type == "redacted_thinking" && m.Role == "assistant":
		case b.Type == "tool_use" && m.Role == "assistant":
			if b.Name == "" {
				return nil, badRequest(bp+".name", "%s.name is missing", bp)
			}
			args := string(bytes.TrimSpace(b.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			tc := toolCallJSON{ID: b.ID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = b.Name, args
			out.ToolCalls = append(out.ToolCalls, tc)
		case b.Type == "tool_result" && m.Role == "user":
			text := ""
			if c := bytes.TrimSpace(b.Content); len(c) > 0 && !bytes.Equal(c, []byte("null")) {
				var aerr *apiError
				if text, aerr = blocksText(c, bp+".content"); aerr != nil {
					return nil, aerr
				}
			}
			tools = append(tools, messageJSON{Role: "tool", ToolCallID: b.ToolUseID, Content: &content{text: text}})
		default:
			return nil, unsupported(bp+".type", "%s.type %q is not supported in a %s message", bp, b.Type, m.Role)
		}
	}
	out.ReasoningContent = strings.Join(thinking, "\n")
	if len(texts) > 0 {
		out.Content = &content{text: strings.Join(texts, "\n")}
	}
	if out.Content != nil || len(out.ToolCalls) > 0 || out.ReasoningContent != "" {
		tools = append(tools, out)
	}
	if len(tools) == 0 {
		return nil, badRequest(param+".content", "%s.content has no blocks", param)
	}
	return tools, nil
}

// blocksText is the text of a string or of an array of text blocks.
func blocksText(raw json.RawMessage, param string) (string, *apiError) {
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anthropicBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", badRequest(param, "%s must be a string or an array of text blocks", param)
	}
	texts := make([]string, 0, len(blocks))
	for j, b := range blocks {
		if b.Type != "text" {
			return "", unsupported(fmt.Sprintf("%s[%d].type", param, j), "%s[%d].type %q is not supported: only text blocks", param, j, b.Type)
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// readAnthropic reads a Messages request into the chat request it stands
// for and the prompt and parse options it renders to.
func (s *Server) readAnthropic(r *http.Request) (*anthropicRequest, *chatInput, string, chat.ParseOptions, *apiError) {
	var req anthropicRequest
	if err := readBody(r, &req); err != nil {
		return nil, nil, "", chat.ParseOptions{}, err
	}
	creq, aerr := req.chatRequest()
	if aerr != nil {
		return nil, nil, "", chat.ParseOptions{}, aerr
	}
	in, prompt, popts, aerr := s.openAIChat(creq, "messages", func(in *chatInput) *apiError {
		if req.TopK != nil {
			if *req.TopK < 0 {
				return badRequest("top_k", "top_k must not be negative, got %d", *req.TopK)
			}
			in.params.TopK = req.TopK
		}
		if req.Thinking != nil && req.Thinking.Type == "enabled" {
			on := true
			in.thinking = &on
		}
		return nil
	})
	popts.NewID = func() string { return s.newID("toolu_") }
	return &req, in, prompt, popts, aerr
}

// handleAnthropicCountTokens is POST /v1/messages/count_tokens: the
// tokens of the prompt the request renders to.
func (s *Server) handleAnthropicCountTokens(w http.ResponseWriter, r *http.Request) *apiError {
	_, _, prompt, _, aerr := s.readAnthropic(r)
	if aerr != nil {
		return aerr
	}
	v, aerr := s.vocabulary("/v1/messages/count_tokens")
	if aerr != nil {
		return aerr
	}
	ids, err := v.Tokenize(prompt, true, true)
	if err != nil {
		return badRequest("messages", "cannot tokenize the prompt: %v", err)
	}
	writeJSON(w, map[string]int{"input_tokens": len(ids)})
	return nil
}

// handleAnthropicMessages is POST /v1/messages.
func (s *Server) handleAnthropicMessages(w http.ResponseWriter, r *http.Request) *apiError {
	req, in, prompt, popts, aerr := s.readAnthropic(r)
	if aerr != nil {
		return aerr
	}
	mw := &messageWriter{id: s.newID("msg_"), model: s.info.ID, blocks: []map[string]any{}}
	if req.Stream {
		mw.sse = newSSE(w)
	}
	var started func()
	if mw.sse != nil {
		started = func() {
			mw.event("message_start", map[string]any{"message": mw.message(nil, "", "")})
			mw.event("ping", map[string]any{})
		}
	}
	parser := chat.NewParser(s.info.Template.Format(), popts)
	seg := &segmenter{sink: mw}
	res, _, aerr := s.generateParsed(r, prompt, in.params, req.StopSequences, parser, started, func(ds []chat.Delta, _ []TokenLogprobs) bool {
		return seg.push(ds)
	})
	if aerr != nil {
		if mw.sse != nil && mw.sse.started {
			mw.sse.sendEvent("error", anthropicErrorJSON("api_error", aerr.Message))
		}
		return aerr
	}
	seg.finish()
	reason, stopSeq := "end_turn", res.stopWord
	switch {
	case mw.calls > 0:
		reason = "tool_use"
	case res.stopWord != "":
		reason = "stop_sequence"
	case res.Finish == "length":
		reason = "max_tokens"
	}
	if mw.sse == nil {
		writeJSON(w, mw.message(&res, reason, stopSeq))
		return nil
	}
	var seq any
	if stopSeq != "" {
		seq = stopSeq
	}
	mw.event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": reason, "stop_sequence": seq},
		"usage": map[string]int{"input_tokens": res.PromptTokens, "output_tokens": res.CompletionTokens}})
	mw.event("message_stop", map[string]any{})
	return nil
}

// messageWriter builds a message's content blocks from the parser's
// deltas and, when streaming, sends the events of each step.
type messageWriter struct {
	sse    *eventStream // nil: the message is written whole at the end
	id     string
	model  string
	blocks []map[string]any
	calls  int
}

func (mw *messageWriter) event(typ string, fields map[string]any) bool {
	if mw.sse == nil {
		return true
	}
	fields["type"] = typ
	return mw.sse.sendEvent(typ, fields)
}

// toolCall implements blockSink: a tool_use block, its input in one
// input_json_delta.
func (mw *messageWriter) toolCall(tc *chat.ToolCall) bool {
	input := json.RawMessage(tc.Arguments)
	if !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	idx := len(mw.blocks)
	mw.blocks = append(mw.blocks, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": input})
	mw.calls++
	return mw.event("content_block_start", map[string]any{"index": idx,
		"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}}) &&
		mw.event("content_block_delta", map[string]any{"index": idx, "delta": map[string]string{"type": "input_json_delta", "partial_json": string(input)}}) &&
		mw.event("content_block_stop", map[string]any{"index": idx})
}

// blockType is the Messages API's name of a block of kind.
func blockType(kind blockKind) string {
	if kind == reasoningBlock {
		return "thinking"
	}
	return "text"
}

// textDelta implements blockSink.
func (mw *messageWriter) textDelta(kind blockKind, text string) bool {
	typ := blockType(kind)
	return mw.event("content_block_delta", map[string]any{"index": len(mw.blocks) - 1, "delta": map[string]string{"type": typ + "_delta", typ: text}})
}

// openBlock implements blockSink.
func (mw *messageWriter) openBlock(kind blockKind) {
	block := map[string]any{"type": "text", "text": ""}
	if kind == reasoningBlock {
		block = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	}
	mw.blocks = append(mw.blocks, block)
	mw.event("content_block_start", map[string]any{"index": len(mw.blocks) - 1, "content_block": block})
}

// closeBlock implements blockSink: a thinking block gets its (empty)
// signature, as Anthropic's SDKs expect before it stops.
func (mw *messageWriter) closeBlock(kind blockKind, text string) {
	idx := len(mw.blocks) - 1
	typ := blockType(kind)
	block := map[string]any{"type": typ, typ: text}
	if kind == reasoningBlock {
		mw.event("content_block_delta", map[string]any{"index": idx, "delta": map[string]string{"type": "signature_delta", "signature": ""}})
		block["signature"] = ""
	}
	mw.blocks[idx] = block
	mw.event("content_block_stop", map[string]any{"index": idx})
}

// message is the message object: at the start of a stream (res nil), or
// whole.
func (mw *messageWriter) message(res *Result, reason, stopSeq string) map[string]any {
	m := map[string]any{"id": mw.id, "type": "message", "role": "assistant", "model": mw.model,
		"content": []map[string]any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 0, "output_tokens": 0}}
	if res != nil {
		m["content"], m["stop_reason"] = mw.blocks, reason
		if stopSeq != "" {
			m["stop_sequence"] = stopSeq
		}
		m["usage"] = map[string]int{"input_tokens": res.PromptTokens, "output_tokens": res.CompletionTokens}
	}
	return m
}
