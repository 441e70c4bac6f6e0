package llm

import (
	"context"
	"iter"
	"runtime/debug"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/engine"
)

// Message is one turn of a conversation: a Role, its Content, an assistant
// turn's Thinking and ToolCalls, a tool turn's ToolCallID (and Name).
type Message = chat.Message

// Roles of the messages in a conversation.
const (
	RoleSystem    = chat.RoleSystem
	RoleUser      = chat.RoleUser
	RoleAssistant = chat.RoleAssistant
	RoleTool      = chat.RoleTool
)

// ToolCall is a function call the model made: ID, Name and Arguments (the
// JSON text of the arguments object).
type ToolCall = chat.ToolCall

// Tool describes a function the model may call: Name, Description and
// Parameters (a JSON Schema), passed to the chat template (WithTools).
type Tool = chat.Tool

// RenderOptions are RenderChat's inputs besides the messages (generation
// prompt, BOS/EOS texts, time, tools, thinking, other template variables).
type RenderOptions = chat.RenderOptions

// RenderChat renders msgs with a chat template's Jinja source exactly as
// llama.cpp does; it needs no model.
func RenderChat(template string, msgs []Message, o RenderOptions) (_ string, err error) {
	defer engine.Catch(&err, debug.SetPanicOnFault(false))
	return chat.Render(template, msgs, o)
}

// ErrNoChatTemplate: Chat on a model whose file has no chat template and
// was given none with WithChatTemplate.
var ErrNoChatTemplate = chat.ErrNoTemplate

// Chat renders msgs with the model's chat template (WithChatTemplate, else
// the file's; none: ErrNoChatTemplate) and makes the session hold exactly
// that prompt, reusing the KV cache up to the first difference (a new turn
// evaluates only itself; Usage counts both). The reply runs to an
// end-of-generation token, a stop string or MaxTokens, and is split into
// the answer (Content), reasoning (Thinking) and tool calls in the
// template's syntax (chat.ToolSyntax lists them). On error the reply so
// far is returned with it.
func (s *Session) Chat(ctx context.Context, msgs []Message, opts ...GenerateOption) (_ Message, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.m.e.ChatTurn(ctx, s.q, msgs, engine.Generation(opts), func(Token) bool { return true })
}

// ChatStream is Chat delivering the reply token by token (see Token):
// answer text in Text, reasoning in Thinking, completed calls in
// ToolCalls. Breaking out of the loop stops generation.
func (s *Session) ChatStream(ctx context.Context, msgs []Message, opts ...GenerateOption) iter.Seq2[Token, error] {
	return func(yield func(Token, error) bool) {
		engine.Stream(s.engine(), yield, func(emit func(Token) bool) error {
			_, err := s.m.e.ChatTurn(ctx, s.q, msgs, engine.Generation(opts), emit)
			return err
		})
	}
}
