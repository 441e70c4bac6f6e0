package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lowmem/llm/chat"
)

// POST /api/chat and POST /api/generate: a generation streamed as NDJSON
// (Ollama's default) or answered whole, rendered and parsed as
// /v1/chat/completions does (the Backend's chat template, chat.Parser for
// reasoning and tool calls).

// ollamaMetrics are the counts and durations (nanoseconds) of the last
// line of a reply.
type ollamaMetrics struct {
	ollamaPromptMetrics
	PromptEvalDuration time.Duration `json:"prompt_eval_duration"`
	EvalCount          int           `json:"eval_count"`
	EvalDuration       time.Duration `json:"eval_duration"`
}

// ollamaHead and ollamaTail are what every line of a chat's or a
// generation's reply carries before and after its text; only the last line
// is done, with a reason and the metrics.
type ollamaHead struct {
	Model     string    `json:"model"`
	CreatedAt time.Time `json:"created_at"`
}

type ollamaTail struct {
	Done       bool          `json:"done"`
	DoneReason string        `json:"done_reason,omitempty"`
	Logprobs   []logprobJSON `json:"logprobs,omitempty"`
	*ollamaMetrics
}

// A line of /api/chat's reply.
type ollamaChatResponse struct {
	ollamaHead
	Message ollamaMessage `json:"message"`
	ollamaTail
}

// A line of /api/generate's reply. Ollama's "context" (the tokens of the
// conversation, to send back) is left out: Ollama deprecates it, and this
// server's slots reuse a resent prompt's cached prefix anyway.
type ollamaGenerateResponse struct {
	ollamaHead
	Response string `json:"response"`
	Thinking string `json:"thinking,omitempty"`
	ollamaTail
}

// ollamaLine is the head and tail of a line carrying p, the last when
// end is not nil.
func (s *Server) ollamaLine(model string, p ollamaPart, end *ollamaEnd) (ollamaHead, ollamaTail) {
	t := ollamaTail{Logprobs: p.logprobs}
	if end != nil {
		t.Done, t.DoneReason, t.ollamaMetrics = true, end.reason, end.metrics
	}
	return ollamaHead{Model: model, CreatedAt: s.now().UTC()}, t
}

// ollamaPart is what one line of a reply (or the whole of one) carries.
type ollamaPart struct {
	content, thinking string
	calls             []ollamaToolCall
	logprobs          []logprobJSON
}

// ollamaWhole gathers the parts of a reply that is not streamed.
type ollamaWhole struct {
	content, thinking strings.Builder
	calls             []ollamaToolCall
	logprobs          []logprobJSON
}

func (w *ollamaWhole) add(p ollamaPart) {
	w.content.WriteString(p.content)
	w.thinking.WriteString(p.thinking)
	w.calls = append(w.calls, p.calls...)
	w.logprobs = append(w.logprobs, p.logprobs...)
}

func (w *ollamaWhole) part() ollamaPart {
	return ollamaPart{content: w.content.String(), thinking: w.thinking.String(), calls: w.calls, logprobs: w.logprobs}
}

// ollamaEnd is how a reply ended: its last line's done_reason and metrics.
type ollamaEnd struct {
	reason  string
	metrics *ollamaMetrics
}

// ollamaTurn is a checked generation request.
type ollamaTurn struct {
	start  time.Time // when the request came
	prompt string
	ollamaSettings
	parser *chat.Parser // nil: the text is all answer
}

// notGeneratingOllama is the 501 of /api/chat and /api/generate when the
// model only embeds (Ollama answers 400 "does not support chat"; 501 is
// what the OpenAI endpoints answer here).
func notGeneratingOllama(model, what string) *apiError {
	return &apiError{Status: 501, Message: fmt.Sprintf("%q does not support %s: it is an embedding model; use /api/embed", model, what)}
}

// ollamaLoaded is the reply to a request without a prompt, which Ollama
// clients send to load a model: this one is loaded.
const ollamaLoaded = "load"

// readGeneration reads a chat or generate request (of the route what)
// into req, and returns the model name to answer with and the turn begun
// (its start, now, and the request's settings); a model that only embeds
// refuses it.
func (s *Server) readGeneration(r *http.Request, req interface{ common() *ollamaCommon }, what string) (string, ollamaTurn, *apiError) {
	t := ollamaTurn{start: time.Now()}
	if aerr := readBody(r, req); aerr != nil {
		return "", t, aerr
	}
	model := s.ollamaName(req.common().Model)
	if s.info.EmbeddingOnly {
		return model, t, notGeneratingOllama(model, what)
	}
	var aerr *apiError
	t.ollamaSettings, aerr = req.common().settings(s, model)
	return model, t, aerr
}

func (s *Server) handleOllamaChat(w http.ResponseWriter, r *http.Request) *apiError {
	var req ollamaChatRequest
	model, turn, aerr := s.readGeneration(r, &req, "chat")
	if aerr != nil {
		return aerr
	}
	in, aerr := ollamaChatInput(req.Messages, req.Tools)
	if aerr != nil {
		return aerr
	}
	if len(in.tools) > 0 && !s.callsTools() {
		return badRequest("tools", "%q does not support tools", model)
	}
	line := func(p ollamaPart, end *ollamaEnd) any {
		head, tail := s.ollamaLine(model, p, end)
		return ollamaChatResponse{head, ollamaMessage{Role: "assistant", Content: p.content, Thinking: p.thinking, ToolCalls: p.calls}, tail}
	}
	if len(in.messages) == 0 {
		writeJSON(w, line(ollamaPart{}, &ollamaEnd{reason: ollamaLoaded}))
		return nil
	}
	in.params, in.thinking, in.effort = turn.params, turn.thinking, turn.effort
	in.params.Tools = in.tools
	prompt, popts, aerr := s.chatPrompt(in, "the model has no chat template; use /api/generate with raw: true, or start the server with a chat template")
	if aerr != nil {
		return aerr
	}
	turn.prompt, turn.parser = prompt, chat.NewParser(s.info.Template.Format(), popts)
	return s.ollamaReply(w, r, turn, line)
}

func (s *Server) handleOllamaGenerate(w http.ResponseWriter, r *http.Request) *apiError {
	var req ollamaGenerateRequest
	model, turn, aerr := s.readGeneration(r, &req, "generate")
	if aerr != nil {
		return aerr
	}
	switch {
	case len(req.Images) > 0:
		return badRequest("images", "images are not supported: this server runs text models")
	case req.Suffix != "":
		return badRequest("suffix", "suffix is not supported: the server does not fill in the middle")
	case req.Template != "":
		return badRequest("template", "template is not supported: prompts are rendered with the model's own chat template (or sent raw)")
	case len(req.Context) > 0:
		return badRequest("context", "context is not supported (Ollama deprecates it): send the conversation to /api/chat, whose cached prefix the server reuses")
	case req.Raw && req.System != "":
		return badRequest("system", "raw mode does not support system")
	}
	line := func(p ollamaPart, end *ollamaEnd) any {
		head, tail := s.ollamaLine(model, p, end)
		return ollamaGenerateResponse{head, p.content, p.thinking, tail}
	}
	if req.Prompt == "" {
		writeJSON(w, line(ollamaPart{}, &ollamaEnd{reason: ollamaLoaded}))
		return nil
	}
	turn.prompt = req.Prompt
	switch {
	case req.Raw:
	case s.info.Template != nil:
		// As Ollama does: the prompt is a user turn, after the system
		// message when there is one.
		in := &chatInput{params: turn.params, thinking: turn.thinking, effort: turn.effort}
		if req.System != "" {
			in.messages = append(in.messages, chat.Message{Role: chat.RoleSystem, Content: req.System})
		}
		in.messages = append(in.messages, chat.Message{Role: chat.RoleUser, Content: req.Prompt})
		prompt, popts, aerr := s.chatPrompt(in, "")
		if aerr != nil {
			return aerr
		}
		turn.prompt, turn.parser = prompt, chat.NewParser(s.info.Template.Format(), popts)
	case req.System != "":
		// Without a template there is nowhere to put it.
		return badRequest("system", "system needs a chat template, which the model does not have; write it into the prompt")
	}
	return s.ollamaReply(w, r, turn, line)
}

// ollamaReply generates t and writes the reply: a line (made by line) for
// each piece the parser releases and a last one with the metrics,
// flushed as they come, or, when t does not stream, one object with all.
func (s *Server) ollamaReply(w http.ResponseWriter, r *http.Request, t ollamaTurn, line func(ollamaPart, *ollamaEnd) any) *apiError {
	var out *eventStream
	if t.stream {
		out = newNDJSON(w)
	}
	var whole ollamaWhole    // when not streaming
	var held []TokenLogprobs // of tokens whose text the parser holds
	calls := 0
	emit := func(p ollamaPart) bool {
		if len(held) > 0 {
			p.logprobs, held = chatLogprobsOf(held).Content, nil
		}
		if out == nil {
			whole.add(p)
			return true
		}
		return out.send(line(p, nil))
	}
	send := func(ds []chat.Delta, lps []TokenLogprobs) bool {
		held = append(held, lps...)
		ok := true
		for _, d := range ds {
			var p ollamaPart
			switch {
			case d.ToolCall != nil:
				var tc ollamaToolCall
				tc.ID, tc.Function.Index, tc.Function.Name = d.ToolCall.ID, calls, d.ToolCall.Name
				tc.Function.Arguments = argumentsObject(d.ToolCall.Arguments)
				p.calls = []ollamaToolCall{tc}
				calls++
			case d.Thinking != "":
				p.thinking = d.Thinking
			case d.Content != "":
				p.content = d.Content
			default:
				continue
			}
			ok = ok && emit(p)
		}
		return ok
	}
	res, tm, aerr := s.generateParsed(r, t.prompt, t.params, t.stop, t.parser, nil, send)
	if aerr != nil {
		if out != nil {
			out.fail(aerr)
		}
		return aerr
	}
	last := ollamaPart{}
	if len(held) > 0 {
		last.logprobs = chatLogprobsOf(held).Content
	}
	end := &ollamaEnd{reason: res.Finish, metrics: &ollamaMetrics{
		ollamaPromptMetrics: promptMetrics(t.start, tm.acquired, res.PromptTokens), PromptEvalDuration: tm.first.Sub(tm.acquired),
		EvalCount: res.CompletionTokens, EvalDuration: tm.end.Sub(tm.first)}}
	if out != nil {
		out.send(line(last, end))
		return nil
	}
	whole.add(last)
	writeJSON(w, line(whole.part(), end))
	return nil
}
