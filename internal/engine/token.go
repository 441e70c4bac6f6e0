package engine

import (
	"iter"
	"strings"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/seq"
)

// Token is one generated token as the caller's loop gets it (llm.Token).
type Token struct {
	ID          int32
	Text        string
	Thinking    string
	ToolCalls   []chat.ToolCall
	Logprob     float32
	TopLogprobs []seq.TokenLogprob
}

// token is the Token of generated id and text, with q's
// log-probabilities of the step when g asked for them.
func token(q *seq.Seq, g *Gen, id int32, text string) Token {
	t := Token{ID: id, Text: text}
	if g.Logprobs && id >= 0 {
		t.Logprob, t.TopLogprobs = q.Logprobs()
	}
	return t
}

// Tokens is the iterator of a generation on q: run generates with opts'
// settings, calling its function with each token's id and text, which
// the loop gets as a Token. It runs under Stream's recovery, so q may be
// nil (a nil session) and run may panic: the loop gets the error.
func Tokens[Option ~func(*Gen)](e *Engine, q *seq.Seq, opts []Option, run func(Gen, func(id int32, text string) bool) error) iter.Seq2[Token, error] {
	return func(yield func(Token, error) bool) {
		Stream(e, yield, func(emit func(Token) bool) error {
			g := Generation(opts)
			return run(g, func(id int32, text string) bool { return emit(token(q, &g, id, text)) })
		})
	}
}

// Text is a generation's whole text (llm's Generate over its Stream): on
// an error, the text before it with the error.
func Text(tokens iter.Seq2[Token, error]) (string, error) {
	var b strings.Builder
	for tok, err := range tokens {
		if err != nil {
			return b.String(), err
		}
		b.WriteString(tok.Text)
	}
	return b.String(), nil
}
