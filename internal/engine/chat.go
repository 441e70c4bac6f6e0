package engine

import (
	"fmt"
	"log/slog"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/templates"
	"github.com/lowmem/llm/internal/tokenizer"
)

// Chat is what a chat turn needs from the model, settled at Load.
type Chat struct {
	// Template is the chat template (Options.ChatTemplate, else the file's
	// tokenizer.chat_template, else for gpt-oss templates.Harmony), parsed
	// once; nil when there is none that parses, and Err says why.
	Template *chat.Template
	Err      error
	// Render holds the template inputs the vocabulary decides: the texts
	// of BOS and EOS, and whether the tokenizer adds them itself (so a
	// render's own leading BOS text is dropped, as llama.cpp does).
	Render chat.RenderOptions
	// Preserve are the control tokens whose text the template's output
	// format is parsed by (chat.Format.Markers): generated text keeps them.
	Preserve []int32
	// EOG lists every end-of-generation token of the vocabulary
	// (tokenizer.EOG, the set IsEOG stops generation at), ascending.
	EOG []int32
	// RerankTemplate is a reranker's tokenizer.chat_template.rerank: the
	// text of a query and document pair, "{query}" and "{document}" in it
	// (Rerank).
	RerankTemplate string
}

// loadChat settles the chat template and the vocabulary facts around it.
// An override that does not parse fails Load; a file's template that does
// not parse only makes chat turns fail (the model still generates text).
func loadChat(f *gguf.File, tok *tokenizer.Tokenizer, override string, log *slog.Logger) (Chat, error) {
	c := Chat{Render: chat.RenderOptions{StripBOS: tok.AddBOS(), StripEOS: tok.AddEOS()}}
	if id := tok.BOS(); id >= 0 {
		c.Render.BOSToken = string(tok.Piece(id))
	}
	if id := tok.EOS(); id >= 0 {
		c.Render.EOSToken = string(tok.Piece(id))
	}
	c.EOG = tok.EOG()
	c.RerankTemplate, _ = f.String("tokenizer.chat_template.rerank")
	src, from := override, "WithChatTemplate"
	if src == "" {
		src, _ = f.String("tokenizer.chat_template")
		from = "the model's tokenizer.chat_template"
	}
	if src == "" && f.Arch() == "gpt-oss" {
		// Ollama keeps gpt-oss's template outside the GGUF; the format is
		// fixed by the architecture, so the built-in one serves.
		src, from = templates.Harmony, "the built-in harmony template"
		log.Info("llm: the model has no chat template; chat uses the built-in harmony template")
	}
	if src == "" {
		c.Err = fmt.Errorf("llm: the model has no chat template (tokenizer.chat_template); give one with WithChatTemplate: %w", chat.ErrNoTemplate)
		return c, nil
	}
	t, err := chat.Parse(src)
	switch {
	case err != nil && override != "":
		return c, fmt.Errorf("llm: %s: %w: %w", from, err, seq.ErrInvalidOption)
	case err != nil:
		log.Warn("llm: the model's chat template does not parse; chat needs WithChatTemplate", "err", err)
		c.Err = fmt.Errorf("llm: %s cannot be used (give another with WithChatTemplate): %w", from, err)
		return c, nil
	}
	c.Template = t
	for _, m := range t.Format().Markers() {
		if ids := tok.EncodeSpecial(m, false); len(ids) == 1 && tok.IsControl(ids[0]) {
			c.Preserve = append(c.Preserve, ids[0])
		}
	}
	return c, nil
}

// ChatPrompt renders msgs with the model's template for the assistant's
// next turn (o supplies the tools, enable_thinking and the time; the
// vocabulary's part of o is filled in) and tokenizes the prompt with its
// special tokens. parse is how to read the reply.
func (e *Engine) ChatPrompt(msgs []chat.Message, o chat.RenderOptions) (tokens []int32, parse chat.ParseOptions, err error) {
	c := &e.Chat
	if c.Template == nil {
		return nil, parse, c.Err
	}
	o.AddGenerationPrompt = true
	o.BOSToken, o.EOSToken, o.StripBOS, o.StripEOS = c.Render.BOSToken, c.Render.EOSToken, c.Render.StripBOS, c.Render.StripEOS
	prompt, err := c.Template.Render(msgs, o)
	if err != nil {
		return nil, parse, fmt.Errorf("llm: chat: %w: %w", err, seq.ErrInvalidOption)
	}
	parse = chat.ParseOptions{ThinkingOpen: chat.PromptOpensThinking(prompt), Tools: len(o.Tools) > 0, Defs: o.Tools}
	return e.Tok.EncodeSpecial(prompt, true), parse, nil
}
