package llm

import (
	"context"
	"iter"
	"runtime/debug"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/engine"
)

// Message is one turn of a conversation: Role is "system", "user",
// "assistant" or "tool"; Content its text; an assistant turn may carry
// Thinking (its reasoning, apart from the answer) and ToolCalls; a tool
// turn names the call it answers in ToolCallID (and the tool in Name).
type Message = chat.Message

// ToolCall is a function call the model made: ID, Name and Arguments (the
// JSON text of the arguments object).
type ToolCall = chat.ToolCall

// Tool describes a function the model may call: Name, Description and
// Parameters (a JSON Schema), passed to the chat template (WithTools).
type Tool = chat.Tool

// RenderOptions are RenderChat's inputs besides the messages:
// AddGenerationPrompt, BOSToken and EOSToken (the vocabulary's texts),
// Now (the time templates print; zero is now), and Tools, EnableThinking
// and further template variables.
type RenderOptions = chat.RenderOptions

// Roles of the messages in a conversation.
const (
	RoleSystem    = chat.RoleSystem
	RoleUser      = chat.RoleUser
	RoleAssistant = chat.RoleAssistant
	RoleTool      = chat.RoleTool
)

// RenderChat renders msgs with a chat template (Jinja source, as a GGUF
// file's tokenizer.chat_template holds it) exactly as llama.cpp does, and
// returns what the template prints. It needs no model.
func RenderChat(template string, msgs []Message, o RenderOptions) (_ string, err error) {
	defer engine.Catch(&err, debug.SetPanicOnFault(false))
	return chat.Render(template, msgs, o)
}

// Chat sends a conversation to the model and returns its reply: the
// messages are rendered with the model's chat template (WithChatTemplate,
// else the file's; none is an error wrapping ErrNoChatTemplate), and the
// session is made to hold exactly that prompt: the tokens it shares with
// what the session held are reused from the KV cache and only the rest is
// evaluated, so a conversation that grows by a turn evaluates only the
// new turn, and a history changed in the middle is evaluated again from
// the first difference. The reply is generated until any end-of-generation
// token of the vocabulary (end of turn, EOS …), a stop string or
// MaxTokens, then split into the answer (Content), the reasoning of
// models that think aloud (Thinking, for <think>…</think>, Gemma 4's
// <|channel>thought…<channel|>, Seed-OSS's <seed:think>…</seed:think>)
// and tool calls in the template's format (Llama 3.x JSON, Hermes/Qwen
// <tool_call> with JSON or the XML form, Mistral [TOOL_CALLS], gpt-oss's
// harmony, Gemma 4's <|tool_call>call:NAME{…}<tool_call|>, Seed-OSS's
// <seed:tool_call>); a reply that is only tool calls has empty
// Content. Usage reports the tokens reused and evaluated. On error the
// reply so far is returned with it.
func (s *Session) Chat(ctx context.Context, msgs []Message, opts ...GenerateOption) (_ Message, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.chat(ctx, msgs, opts, func(Token) bool { return true })
}

// ChatStream is Chat delivering the reply as it is generated: each token
// yields a Token whose Text is the answer text and Thinking the reasoning
// text it releases (either may be empty while text that could be a marker
// is held back), and whose ToolCalls are the calls it completes. A last
// Token with ID -1 may carry what was held back to the end. Breaking out
// of the loop stops generation.
func (s *Session) ChatStream(ctx context.Context, msgs []Message, opts ...GenerateOption) iter.Seq2[Token, error] {
	return func(yield func(Token, error) bool) {
		engine.Stream(s.engine(), yield, func(emit func(Token) bool) error {
			_, err := s.chat(ctx, msgs, opts, emit)
			return err
		})
	}
}

// chat runs one turn, yielding a Token per generated token; a false from
// yield stops it without error.
func (s *Session) chat(ctx context.Context, msgs []Message, opts []GenerateOption, yield func(Token) bool) (Message, error) {
	g := engine.Generation(opts)
	return s.m.e.ChatTurn(ctx, s.q, msgs, g, func(id int32, ds []chat.Delta) bool {
		t := s.token(&g, id, "")
		for _, d := range ds {
			t.Text += d.Content
			t.Thinking += d.Thinking
			if d.ToolCall != nil {
				t.ToolCalls = append(t.ToolCalls, *d.ToolCall)
			}
		}
		return yield(t)
	})
}
