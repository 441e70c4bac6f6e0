package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/lowmem/llm/chat"
)

// OpenAI's Responses API (POST /v1/responses), which llama-server and
// Ollama serve too and OpenAI's SDKs now lead with: the request is turned
// into a chat completion request — input items into messages,
// instructions into a system message, function tools, tool_choice,
// text.format and reasoning.effort into their chat counterparts — and the
// reply, split by the same parser, into output items: reasoning, the
// message, function calls. Stateless: previous_response_id is refused,
// and nothing is stored.

type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	Tools              []responsesTool `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Stream             bool            `json:"stream"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Metadata           map[string]any  `json:"metadata"`
	Text               *struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"format"`
	} `json:"text"`
	Reasoning *struct {
		Effort *string `json:"effort"`
	} `json:"reasoning"`
}

// responsesTool is a Responses API tool: a function's fields side by
// side, not nested in "function" as in chat completions.
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// inputItem is one element of a Responses request's input array: a
// message, a function call the model made, its output, or reasoning.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

var inputRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true}

// chatRequest is r as a chat completion request.
func (r *responsesRequest) chatRequest() (*chatRequest, *apiError) {
	if r.PreviousResponseID != nil && *r.PreviousResponseID != "" {
		return nil, unsupported("previous_response_id", "previous_response_id is not supported: this server stores no responses; send the whole conversation as input")
	}
	c := &chatRequest{}
	c.Model, c.Stream, c.Temperature, c.TopP = r.Model, r.Stream, r.Temperature, r.TopP
	if n := r.MaxOutputTokens; n != nil {
		if *n < 1 {
			return nil, badRequest("max_output_tokens", "max_output_tokens must be at least 1, got %d", *n)
		}
		c.MaxTokens = n
	}
	if r.Instructions != nil && *r.Instructions != "" {
		c.Messages = append(c.Messages, messageJSON{Role: "system", Content: &content{text: *r.Instructions}})
	}
	msgs, aerr := inputMessages(r.Input)
	if aerr != nil {
		return nil, aerr
	}
	c.Messages = append(c.Messages, msgs...)
	for i, t := range r.Tools {
		if t.Type != "function" {
			return nil, unsupported(fmt.Sprintf("tools[%d].type", i), "tools[%d].type %q is not supported: only function tools", i, t.Type)
		}
		c.Tools = append(c.Tools, functionTool(t.Name, t.Description, t.Parameters))
	}
	if tc := bytes.TrimSpace(r.ToolChoice); len(tc) > 0 && tc[0] == '{' {
		var named struct{ Type, Name string }
		if json.Unmarshal(tc, &named) != nil || named.Type != "function" || named.Name == "" {
			return nil, badRequest("tool_choice", `tool_choice must be "none", "auto", "required" or {"type": "function", "name": …}`)
		}
		c.ToolChoice = namedToolChoice(named.Name)
	} else {
		c.ToolChoice = r.ToolChoice
	}
	if r.Text != nil && r.Text.Format != nil {
		f := r.Text.Format
		c.ResponseFormat = &responseFormat{Type: f.Type}
		switch f.Type {
		case "json_schema":
			if len(f.Schema) == 0 {
				return nil, badRequest("text.format.schema", "text.format json_schema needs schema")
			}
			c.ResponseFormat.JSONSchema = &jsonSchemaFormat{Name: f.Name, Schema: f.Schema, Strict: f.Strict}
		case "", "text", "json_object":
		default:
			return nil, badRequest("text.format.type", "text.format.type %q is not one of text, json_object, json_schema", f.Type)
		}
	}
	if r.Reasoning != nil && r.Reasoning.Effort != nil {
		e := *r.Reasoning.Effort
		if e == "minimal" { // OpenAI's level below low; harmony has none
			e = "low"
		}
		c.ReasoningEffort = &e
	}
	return c, nil
}

// inputMessages turns a Responses input — a string (one user message) or
// an array of items — into chat messages: a function call joins the
// assistant message before it (or makes one), its output is a tool
// message, and reasoning goes with the assistant turn that follows it.
func inputMessages(raw json.RawMessage) ([]messageJSON, *apiError) {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return []messageJSON{{Role: "user", Content: &content{text: s}}}, nil
	}
	var items []inputItem
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, badRequest("input", "input must be a string or a non-empty array of input items")
	}
	var msgs []messageJSON
	var thinking []string
	assistant := func() *messageJSON {
		if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
			return &msgs[n-1]
		}
		msgs = append(msgs, messageJSON{Role: "assistant"})
		return &msgs[len(msgs)-1]
	}
	for i, it := range items {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			if !inputRoles[it.Role] {
				return nil, badRequest(param+".role", "%s.role %q is not one of system, developer, user, assistant", param, it.Role)
			}
			text, aerr := itemText(it.Content, param+".content")
			if aerr != nil {
				return nil, aerr
			}
			m := messageJSON{Role: it.Role, Content: &content{text: text}}
			if it.Role == "assistant" {
				m.ReasoningContent, thinking = strings.Join(thinking, "\n"), nil
			}
			msgs = append(msgs, m)
		case "function_call":
			if it.Name == "" {
				return nil, badRequest(param+".name", "%s.name is missing", param)
			}
			a := assistant()
			if len(thinking) > 0 {
				a.ReasoningContent, thinking = strings.Join(thinking, "\n"), nil
			}
			tc := toolCallJSON{ID: it.CallID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = it.Name, it.Arguments
			a.ToolCalls = append(a.ToolCalls, tc)
		case "function_call_output":
			text, aerr := itemText(it.Output, param+".output")
			if aerr != nil {
				return nil, aerr
			}
			msgs = append(msgs, messageJSON{Role: "tool", ToolCallID: it.CallID, Content: &content{text: text}})
		case "reasoning":
			for _, field := range []json.RawMessage{it.Content, it.Summary} {
				if len(bytes.TrimSpace(field)) == 0 || bytes.Equal(bytes.TrimSpace(field), []byte("null")) {
					continue
				}
				text, aerr := itemText(field, param)
				if aerr != nil {
					return nil, aerr
				}
				if text != "" {
					thinking = append(thinking, text)
				}
				break
			}
		default:
			return nil, unsupported(param+".type", "%s.type %q is not supported: use message, function_call, function_call_output or reasoning items", param, it.Type)
		}
	}
	return msgs, nil
}

// itemText is the text of an item's content or output: a string, or an
// array of text parts (input_text, output_text, reasoning_text,
// summary_text), joined by newlines.
func itemText(raw json.RawMessage, param string) (string, *apiError) {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", badRequest(param, "%s must be a string or an array of text parts", param)
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text", "reasoning_text", "summary_text":
		default:
			return "", unsupported(fmt.Sprintf("%s[%d].type", param, j), "%s[%d].type %q is not supported: only text parts", param, j, p.Type)
		}
		if p.Text == nil {
			return "", badRequest(fmt.Sprintf("%s[%d].text", param, j), "%s[%d].text is missing", param, j)
		}
		texts = append(texts, *p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// handleResponses is POST /v1/responses.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request, req *responsesRequest) *apiError {
	creq, aerr := req.chatRequest()
	if aerr != nil {
		return aerr
	}
	in, prompt, popts, aerr := s.openAIChat(creq, "responses", nil)
	if aerr != nil {
		return aerr
	}
	rw := &responseWriter{s: s, req: req, id: s.newID("resp_"), created: s.now().Unix(), items: []map[string]any{}}
	if req.Stream {
		rw.sse = newSSE(w)
	}
	parser := chat.NewParser(s.info.Template.Format(), popts)
	var started func() // a stream's first events, once a slot is held
	if rw.sse != nil {
		started = func() {
			rw.event("response.created", map[string]any{"response": rw.response("in_progress", nil)})
			rw.event("response.in_progress", map[string]any{"response": rw.response("in_progress", nil)})
		}
	}
	seg := &segmenter{sink: rw}
	res, _, aerr := s.generateParsed(r, prompt, in.params, nil, parser, started, func(ds []chat.Delta, _ []TokenLogprobs) bool {
		return seg.push(ds)
	})
	if aerr != nil {
		if rw.sse != nil && rw.sse.started {
			rw.event("error", map[string]any{"code": aerr.Code, "message": aerr.Message, "param": aerr.Param})
		}
		return aerr
	}
	incomplete := res.Finish == "length"
	rw.cut = incomplete
	seg.finish()
	status, event := "completed", "response.completed"
	if incomplete {
		status, event = "incomplete", "response.incomplete"
	}
	final := rw.response(status, &res)
	if rw.sse == nil {
		writeJSON(w, final)
		return nil
	}
	rw.event(event, map[string]any{"response": final})
	return nil
}

// responseWriter builds a response's output items from the parser's
// deltas and, when streaming, sends the events of each step.
type responseWriter struct {
	s       *Server
	req     *responsesRequest
	sse     *eventStream // nil: the response is written whole at the end
	seq     int
	id      string
	created int64
	items   []map[string]any
	cut     bool // the output ran into max_output_tokens: the last item is incomplete
}

func (rw *responseWriter) event(typ string, fields map[string]any) bool {
	if rw.sse == nil {
		return true
	}
	fields["type"], fields["sequence_number"] = typ, rw.seq
	rw.seq++
	return rw.sse.sendEvent(typ, fields)
}

// toolCall implements blockSink: a function_call item, its arguments
// events, and its done event.
func (rw *responseWriter) toolCall(tc *chat.ToolCall) bool {
	item := map[string]any{"type": "function_call", "id": rw.s.newID("fc_"), "call_id": tc.ID, "name": tc.Name, "arguments": "", "status": "in_progress"}
	idx := len(rw.items)
	rw.items = append(rw.items, item)
	ok := rw.event("response.output_item.added", map[string]any{"output_index": idx, "item": item}) &&
		rw.event("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": idx, "delta": tc.Arguments}) &&
		rw.event("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": idx, "arguments": tc.Arguments, "name": tc.Name})
	item["arguments"], item["status"] = tc.Arguments, "completed"
	return ok && rw.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
}

// textDelta implements blockSink.
func (rw *responseWriter) textDelta(kind blockKind, text string) bool {
	if kind == reasoningBlock {
		return rw.event("response.reasoning_text.delta", rw.at(map[string]any{"delta": text}))
	}
	return rw.event("response.output_text.delta", rw.at(map[string]any{"delta": text, "logprobs": []any{}}))
}

// at adds the open item's place to an event's fields.
func (rw *responseWriter) at(fields map[string]any) map[string]any {
	idx := len(rw.items) - 1
	fields["item_id"], fields["output_index"], fields["content_index"] = rw.items[idx]["id"], idx, 0
	return fields
}

// openBlock implements blockSink: a reasoning or message item.
func (rw *responseWriter) openBlock(kind blockKind) {
	item := map[string]any{"type": "message", "id": rw.s.newID("msg_"), "role": "assistant", "content": []any{}, "status": "in_progress"}
	if kind == reasoningBlock {
		item = map[string]any{"type": "reasoning", "id": rw.s.newID("rs_"), "summary": []any{}, "content": []any{}, "status": "in_progress"}
	}
	rw.items = append(rw.items, item)
	rw.event("response.output_item.added", map[string]any{"output_index": len(rw.items) - 1, "item": item})
	if kind == answerBlock {
		rw.event("response.content_part.added", rw.at(map[string]any{"part": outputText("")}))
	}
}

// closeBlock implements blockSink: the item gets its text and its done
// events; the last one is incomplete when the output was cut short.
func (rw *responseWriter) closeBlock(kind blockKind, text string) {
	idx := len(rw.items) - 1
	item := rw.items[idx]
	if kind == reasoningBlock {
		item["content"] = []any{map[string]any{"type": "reasoning_text", "text": text}}
		rw.event("response.reasoning_text.done", rw.at(map[string]any{"text": text}))
	} else {
		part := outputText(text)
		item["content"] = []any{part}
		rw.event("response.output_text.done", rw.at(map[string]any{"text": text, "logprobs": []any{}}))
		rw.event("response.content_part.done", rw.at(map[string]any{"part": part}))
	}
	item["status"] = "completed"
	if rw.cut {
		item["status"] = "incomplete"
	}
	rw.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

// response is the response object in state status; res, once generation
// is over, gives its usage.
func (rw *responseWriter) response(status string, res *Result) map[string]any {
	req := rw.req
	tools := []any{}
	for _, t := range req.Tools {
		tools = append(tools, t)
	}
	toolChoice := any("auto")
	if tc := bytes.TrimSpace(req.ToolChoice); len(tc) > 0 && !bytes.Equal(tc, []byte("null")) {
		toolChoice = json.RawMessage(tc)
	}
	text := any(map[string]any{"format": map[string]any{"type": "text"}})
	if req.Text != nil && req.Text.Format != nil {
		text = req.Text
	}
	metadata := req.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	out := map[string]any{
		"id": rw.id, "object": "response", "created_at": rw.created, "status": status,
		"error": nil, "incomplete_details": nil, "instructions": req.Instructions,
		"max_output_tokens": req.MaxOutputTokens, "model": rw.s.info.ID, "output": rw.items,
		"parallel_tool_calls": true, "previous_response_id": nil, "reasoning": req.Reasoning,
		"store": false, "temperature": req.Temperature, "text": text, "tool_choice": toolChoice,
		"tools": tools, "top_p": req.TopP, "truncation": "disabled", "usage": nil, "metadata": metadata,
	}
	if status == "incomplete" {
		out["incomplete_details"] = map[string]string{"reason": "max_output_tokens"}
	}
	if res != nil {
		out["usage"] = map[string]any{
			"input_tokens": res.PromptTokens, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": res.CompletionTokens, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
			"total_tokens": res.PromptTokens + res.CompletionTokens,
		}
	}
	return out
}
