package llm

import (
	"context"
	"io"
	"iter"
	"runtime/debug"
	"strings"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
)

// Session is one conversation with a model: the tokens so far, their KV
// cache and scratch memory. It runs one call at a time (run several
// sessions for concurrency): a call made while another runs, on another
// goroutine or inside a Stream loop over the session, returns ErrBusy and
// changes nothing (Reset does nothing). Close, Context, Tokens, Len,
// KVStats and Usage may be called from any goroutine at any time.
type Session struct {
	m *Model
	q *seq.Seq
}

// KVStats describes a session's KV cache: cells allocated and at most,
// tokens held, bytes, growths and context shifts.
type KVStats = seq.Stats

// NewSession makes a session with its own KV cache. Options override the
// context size, KV type, batch size, preallocation and context shift given
// to Load.
func (m *Model) NewSession(opts ...SessionOption) (_ *Session, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	q, err := m.e.NewSeq(func(s *engine.Settings) {
		for _, o := range opts {
			if o != nil {
				o.applySession(s)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return &Session{m: m, q: q}, nil
}

// Context is the most tokens the session can hold.
func (s *Session) Context() int { defer s.engine().Absorb(); return s.q.Context() }

// Tokens returns the tokens the session holds, oldest first.
func (s *Session) Tokens() []int32 { defer s.engine().Absorb(); return s.q.Tokens() }

// Len is the number of tokens the session holds.
func (s *Session) Len() int { defer s.engine().Absorb(); return s.q.Len() }

// Reset forgets every token, keeping the memory for reuse. It does nothing
// on a closed session, or while another call runs on it.
func (s *Session) Reset() { defer s.engine().Absorb(); s.q.Reset() }

// Close releases the session's memory; later calls return ErrClosed. A
// call running meanwhile ends with ErrClosed within one forward pass, and
// the memory is released when it has. Close may be called again.
func (s *Session) Close() (err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	s.q.Close()
	return nil
}

// KVStats reports the session's KV cache size and history. A closed
// session reports zeros.
func (s *Session) KVStats() KVStats { defer s.engine().Absorb(); return s.q.Stats() }

// Eval appends tokens to the session and returns the logits (one score per
// vocabulary entry) predicting the token after the last one. The slice is
// owned by the session and overwritten by the next call. Tokens beyond the
// context return an error wrapping ErrContextFull and change nothing.
func (s *Session) Eval(ctx context.Context, tokens []int32) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.q.Eval(ctx, tokens)
}

// EvalAll is Eval returning the logits after every token: len(tokens) rows
// of VocabSize floats, in a new slice. It is for scoring text (perplexity)
// and testing; generation only needs Eval. It takes at most the context's
// tokens, and 2^28 logits in all.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.q.EvalAll(ctx, tokens)
}

// Logits returns the logits after the session's last token, as the last
// Eval returned them or Restore brought them back; zeros before any.
// Sampling never changes them (penalties apply to a copy). The slice is
// owned by the session and overwritten by the next Eval.
func (s *Session) Logits() []float32 { defer s.engine().Absorb(); return s.q.Logits() }

// Token is one generated token and the text it completes. Text may be
// empty when the token ends inside a UTF-8 character or could be the start
// of a stop string; the held-back text arrives with a later token (ID -1
// at the end). From ChatStream, Text is answer text only: reasoning comes
// in Thinking and tool calls, once complete, in ToolCalls.
//
// With WithLogprobs, Logprob is the token's log-probability under the
// model at its step and TopLogprobs the most likely tokens there, most
// likely first (see TokenLogprob); for ID -1 they are zero and nil.
type Token struct {
	ID          int32
	Text        string
	Thinking    string
	ToolCalls   []ToolCall
	Logprob     float32
	TopLogprobs []TokenLogprob
}

// TokenLogprob is a token, its text (a control token's own, such as
// "<|im_end|>") and its log-probability (natural logarithm) under the
// model: the softmax of the raw logits, before penalties, temperature,
// top-k/p/min-p or a JSON constraint.
type TokenLogprob = seq.TokenLogprob

// token is the Token of generated id and text, with its
// log-probabilities when g asked for them.
func (s *Session) token(g *engine.Gen, id int32, text string) Token {
	t := Token{ID: id, Text: text}
	if g.Logprobs && id >= 0 {
		t.Logprob, t.TopLogprobs = s.q.Logprobs()
	}
	return t
}

// Usage reports what a session's last Generate, Stream, Chat, ChatStream
// or Complete did: tokens of the prompt, how many of them were reused from
// the KV cache rather than evaluated, tokens generated, why generation
// ended, and the time spent on the prompt and on generating.
type Usage = seq.Usage

// Finish says why a generation ended: FinishEnd (an end-of-generation
// token), FinishStop (a stop string), FinishLength (MaxTokens),
// FinishCaller (the caller's loop stopped); FinishNone after an error.
type Finish = seq.Finish

// Reasons a generation ended (see Finish).
const (
	FinishNone   = seq.FinishNone
	FinishEnd    = seq.FinishEnd
	FinishStop   = seq.FinishStop
	FinishLength = seq.FinishLength
	FinishCaller = seq.FinishCaller
)

// Usage reports the session's last generation.
func (s *Session) Usage() Usage { defer s.engine().Absorb(); return s.q.Usage() }

// Generate evaluates prompt after the session's tokens and samples a
// continuation until an end-of-generation token, a stop string or
// MaxTokens. It returns the generated text. If the context fills up first
// it returns the text so far and an error wrapping ErrContextFull.
// A prompt after tokens is tokenized as their continuation: "Hello" then
// " world" feeds the tokens of "Hello world" (no SentencePiece space in
// the middle).
func (s *Session) Generate(ctx context.Context, prompt string, opts ...GenerateOption) (string, error) {
	var b strings.Builder
	for tok, err := range s.Stream(ctx, prompt, opts...) {
		if err != nil {
			return b.String(), err
		}
		b.WriteString(tok.Text)
	}
	return b.String(), nil
}

// Stream is Generate delivering tokens as they are produced. Breaking out
// of the loop stops generation. However the loop ends (break, stop
// string, cancelled ctx, full context) the session then holds exactly the
// text yielded, so the next call continues from what the caller saw: the
// token of a break is evaluated (one more forward pass); text held back
// (a possible stop string's start, half a character) is dropped; text
// before a stop string inside a token is tokenized again.
func (s *Session) Stream(ctx context.Context, prompt string, opts ...GenerateOption) iter.Seq2[Token, error] {
	return func(yield func(Token, error) bool) {
		engine.Stream(s.engine(), yield, func(emit func(Token) bool) error {
			g := engine.Generation(opts)
			return s.q.Generate(ctx, prompt, g.Generation, func(id int32, text string) bool { return emit(s.token(&g, id, text)) })
		})
	}
}

// Complete is Stream for a prompt that is the whole text of the session,
// such as a chat template renders it or an OpenAI-style completion request
// carries it: the session is made to hold exactly prompt (BOS first when
// the model adds it; special-token text such as "<|im_start|>" read as the
// special token), reusing the tokens it shares with what the session held
// and evaluating only the rest, then a continuation is generated. The
// text of chat markers that are control tokens (<|python_tag|>,
// [TOOL_CALLS] …) is kept in the output, so a chat reply can be parsed.
func (s *Session) Complete(ctx context.Context, prompt string, opts ...GenerateOption) iter.Seq2[Token, error] {
	return func(yield func(Token, error) bool) {
		engine.Stream(s.engine(), yield, func(emit func(Token) bool) error {
			g := engine.Generation(opts)
			return s.m.e.Complete(ctx, s.q, prompt, g, func(id int32, text string) bool { return emit(s.token(&g, id, text)) })
		})
	}
}

// Save writes the session's state to w: its tokens, the logits after the
// last one and the KV cache rows in use (not empty capacity), in a
// versioned binary format with the model's fingerprint and a checksum.
// Restore on a session of the same model file and KV type continues
// exactly where this one stands.
func (s *Session) Save(w io.Writer) (err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.m.e.Save(s.q, w)
}

// Restore replaces the session's state with one written by Save: tokens,
// logits (see Logits) and KV cache, so that generation continues exactly
// as it would have in the saved session. It reads exactly what Save wrote.
//
// The state must come from the same model file (its fingerprint is
// checked) and the same KV type, and fit the session's context. Errors
// wrap ErrBadState (another model or KV type, a damaged or truncated
// stream; with ErrContextFull too when it holds more tokens than the
// context) or ErrOutOfMemoryBudget; after an error the session is
// unchanged. Restore builds the new cache before dropping the old one, so
// it briefly needs memory for both.
func (s *Session) Restore(r io.Reader) (err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.m.e.Restore(s.q, r)
}
