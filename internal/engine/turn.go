package engine

import (
	"context"
	"fmt"
	"io"
	"maps"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/sampler"
)

// Gen is what llm's GenerateOptions set: the sampler's configuration
// (whose defaults and validation are the sampler's own) and when to stop,
// and for a chat turn the template's tools and thinking switch.
type Gen struct {
	seq.Generation
	Tools    []chat.Tool
	Thinking *bool
	// ReasoningEffort is passed to the template as reasoning_effort:
	// "low", "medium" or "high" for a harmony-format template (gpt-oss),
	// refused for the others (chat.Format.CheckEffort); "" is the
	// template's default.
	ReasoningEffort string
	// ToolChoice is OpenAI's: "" or "auto" (the model may call a tool),
	// "none" (the tools are not offered), "required" (the reply is a call
	// of one of them) or a tool's name (a call of that tool).
	ToolChoice string
}

// forceCall makes g generate exactly one tool call in the chat format's
// syntax when its ToolChoice forces one ("required" or a tool's name),
// its arguments following the tool's parameters where the schema can
// enforce them: the grammar of a syntax that is not JSON (the XML form,
// Gemma 4's: chat.Format.CallGrammar), else JSON's (chat.Format.CallSchema,
// jsonprefix.CompileLoose).
func (e *Engine) forceCall(g *Gen) error {
	if !chat.Forces(g.ToolChoice) {
		return nil
	}
	if e.Chat.Template == nil {
		return fmt.Errorf("llm: tool choice %q needs a chat template, whose tool-call syntax it follows: %w", g.ToolChoice, seq.ErrInvalidOption)
	}
	f := e.Chat.Template.Format()
	grammar, err := f.CallGrammar(g.Tools, g.ToolChoice)
	if err == nil && grammar != nil {
		g.CallGrammar = grammar
		return nil
	}
	var prefix, suffix string
	var schema []byte
	if err == nil {
		prefix, suffix, schema, err = f.CallSchema(g.Tools, g.ToolChoice)
	}
	if err != nil {
		return fmt.Errorf("llm: %w: %w", err, seq.ErrInvalidOption)
	}
	g.JSONSchema, g.JSONLoose, g.JSONPrefix, g.JSONSuffix = schema, true, prefix, suffix
	return nil
}

// checkEffort refuses a reasoning effort the model's template does not
// take. (Without a template, ChatPrompt says there is none.)
func (e *Engine) checkEffort(level string) error {
	if e.Chat.Template == nil {
		return nil
	}
	if err := e.Chat.Template.Format().CheckEffort(level); err != nil {
		return fmt.Errorf("llm: %w: %w", err, seq.ErrInvalidOption)
	}
	return nil
}

// Generation applies opts to the defaults: llama.cpp's sampling
// (sampler.DefaultConfig), 128 tokens, and llama-server's drafting for a
// session with a draft model (seq.DefaultDrafting).
func Generation[Option ~func(*Gen)](opts []Option) Gen {
	g := Gen{Generation: seq.Generation{Config: sampler.DefaultConfig(0xC0FFEE), MaxTokens: 128, Drafting: seq.DefaultDrafting()}}
	for _, o := range opts {
		if o != nil {
			o(&g)
		}
	}
	return g
}

// LoRAScales is a generation's adapter scales (llm.WithLoRAScales): a
// copy, so the caller may reuse its map, and never nil, since nil means
// "the adapters' own scales" where an empty map means every one at 0.
func LoRAScales(scales map[int]float32) map[int]float32 {
	if scales == nil {
		return map[int]float32{}
	}
	return maps.Clone(scales)
}

// ChatTurn runs one chat turn on q: it renders msgs for the assistant's
// reply (ChatPrompt), makes q hold that prompt, generates, and parses
// what it generates in the template's format, calling yield with each
// token's parsed pieces: answer text, reasoning and completed calls (ID
// -1: what was held back to the end); a false from yield stops it
// without error. It returns the reply so far.
func (e *Engine) ChatTurn(ctx context.Context, q *seq.Seq, msgs []chat.Message, g Gen, yield func(Token) bool) (chat.Message, error) {
	if err := e.Model.Generative(); err != nil {
		return chat.Message{Role: chat.RoleAssistant}, fmt.Errorf("llm: %w", err)
	}
	if g.ToolChoice == "none" {
		g.Tools = nil
	}
	err := e.checkEffort(g.ReasoningEffort)
	var tokens []int32
	var po chat.ParseOptions
	if err == nil {
		tokens, po, err = e.ChatPrompt(msgs, chat.RenderOptions{Tools: g.Tools, EnableThinking: g.Thinking, ReasoningEffort: g.ReasoningEffort})
	}
	if err == nil {
		err = e.forceCall(&g)
	}
	if err != nil {
		return chat.Message{Role: chat.RoleAssistant}, err
	}
	if g.JSON || len(g.JSONSchema) > 0 || g.CallGrammar != nil {
		// JSON output (a forced tool call too) is the answer, even after a
		// prompt that opened a reasoning block: the constraint leaves no
		// room to close it.
		po.ThinkingOpen = false
	}
	p := chat.NewParser(e.Chat.Template.Format(), po)
	open := true
	g.Preserve = e.Chat.Preserve
	emit := func(id int32, ds []chat.Delta) bool {
		t := token(q, &g, id, "")
		for _, d := range ds {
			t.Text += d.Content
			t.Thinking += d.Thinking
			if d.ToolCall != nil {
				t.ToolCalls = append(t.ToolCalls, *d.ToolCall)
			}
		}
		return yield(t)
	}
	err = q.GenerateFrom(ctx, tokens, g.Generation, func(id int32, text string) bool {
		open = emit(id, p.Push(text))
		return open
	})
	if ds := p.Finish(); err == nil && open && len(ds) > 0 {
		emit(-1, ds)
	}
	return p.Message(), err
}

// Complete makes q hold exactly prompt, read with its special tokens (a
// rendered chat), and generates after it, keeping the text of the chat
// markers (Chat.Preserve) so that the reply can be parsed.
func (e *Engine) Complete(ctx context.Context, q *seq.Seq, prompt string, g Gen, yield func(id int32, text string) bool) error {
	ids, err := e.Tokenize(prompt, true)
	if err != nil {
		return err
	}
	return e.CompleteTokens(ctx, q, ids, g, yield)
}

// CompleteTokens is Complete for a prompt of token ids, taken as they are
// (no BOS added).
func (e *Engine) CompleteTokens(ctx context.Context, q *seq.Seq, ids []int32, g Gen, yield func(id int32, text string) bool) error {
	if err := e.forceCall(&g); err != nil {
		return err
	}
	g.Preserve = e.Chat.Preserve
	return q.GenerateFrom(ctx, ids, g.Generation, yield)
}

// Tokenize is the tokenizer's Encode (EncodeSpecial when special),
// adding BOS when the model asks for it; seq.ErrClosed once closed.
func (e *Engine) Tokenize(text string, special bool) ([]int32, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	if special {
		return e.Tok.EncodeSpecial(text, true), nil
	}
	return e.Tok.Encode(text, true), nil
}

// Detokenize is the tokenizer's Decode, refusing an id outside the
// model's vocabulary with model.ErrTokenOutOfRange.
func (e *Engine) Detokenize(ids []int32) (string, error) {
	if err := e.Check(); err != nil {
		return "", err
	}
	// The model's vocabulary is its embedding rows; rows past the
	// tokenizer's tokens (padding) are valid and have no text.
	for _, id := range ids {
		if id < 0 || int(id) >= e.Model.Vocab {
			return "", fmt.Errorf("llm: detokenize: token %d not in vocabulary of %d: %w", id, e.Model.Vocab, model.ErrTokenOutOfRange)
		}
	}
	return e.Tok.Decode(ids), nil
}

// Save writes q's state with the model's identity (seq.(*Seq).Save).
func (e *Engine) Save(q *seq.Seq, w io.Writer) error {
	id, err := e.identityOf(q)
	if err != nil {
		return err
	}
	return q.Save(w, id)
}

// Restore reads a state Save wrote into q, checking it was saved by this
// model (seq.(*Seq).Restore).
func (e *Engine) Restore(q *seq.Seq, r io.Reader) error {
	id, err := e.identityOf(q)
	if err != nil {
		return err
	}
	return q.Restore(r, id)
}
