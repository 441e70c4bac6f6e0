package llm

import (
	"context"
	"io"
	"iter"
	"strings"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/seq"
)

// Session is one conversation with a model: the tokens so far, their KV
// cache and scratch memory. A session is used by one goroutine at a time;
// run several sessions for concurrency.
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
func (m *Model) NewSession(opts ...SessionOption) (*Session, error) {
	if err := m.e.Acquire(); err != nil {
		return nil, err
	}
	defer m.e.Release()
	set, err := buildSettings(m.set, func(s *settings) {
		for _, o := range opts {
			if o != nil {
				o.applySession(s)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	q, err := seq.New(m.e.Model, ops.NewExec(m.e.Pool), m.e.KVBudget, seq.Config{
		Context: set.Context, Batch: set.Batch, KVType: set.KVType, Preallocate: set.KVPreallocate,
		Shift: set.shift, Keep: set.keep, Logger: set.logger, Guard: m.e, Vocab: m.e.Tok,
	})
	if err != nil {
		return nil, err
	}
	return &Session{m: m, q: q}, nil
}

// Context is the most tokens the session can hold.
func (s *Session) Context() int { return s.q.Context() }

// Tokens returns the tokens the session holds, oldest first.
func (s *Session) Tokens() []int32 { return append([]int32(nil), s.q.Tokens()...) }

// Len is the number of tokens the session holds.
func (s *Session) Len() int { return s.q.Len() }

// Reset forgets every token, keeping the memory for reuse.
func (s *Session) Reset() { s.q.Reset() }

// Close releases the session's memory. It is safe to call twice.
func (s *Session) Close() error {
	s.q.Close()
	return nil
}

// KVStats reports the session's KV cache size and history. A closed
// session reports zeros.
func (s *Session) KVStats() KVStats { return s.q.Stats() }

// Eval appends tokens to the session and returns the logits (one score per
// vocabulary entry) predicting the token after the last one. The slice is
// owned by the session and overwritten by the next call. Tokens beyond the
// context return an error wrapping ErrContextFull and change nothing.
func (s *Session) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	return s.q.Eval(ctx, tokens)
}

// EvalAll is Eval returning the logits after every token: len(tokens) rows
// of VocabSize floats, in a new slice. It is for scoring text (perplexity)
// and testing; generation only needs Eval.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) ([]float32, error) {
	return s.q.EvalAll(ctx, tokens)
}

// Logits returns the logits after the session's last token, as the last
// Eval returned them or Restore brought them back; zeros before any.
// Sampling never changes them (penalties apply to a copy). The slice is
// owned by the session and overwritten by the next Eval.
func (s *Session) Logits() []float32 { return s.q.Logits() }

// Token is one generated token and the text it completes. Text may be
// empty when the token ends inside a UTF-8 character or could be the start
// of a stop string; the held-back text arrives with a later token (ID -1
// at the end). From ChatStream, Text is answer text only: reasoning comes
// in Thinking and tool calls, once complete, in ToolCalls.
type Token struct {
	ID        int32
	Text      string
	Thinking  string
	ToolCalls []ToolCall
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
func (s *Session) Usage() Usage { return s.q.Usage() }

// Generate evaluates prompt after the session's tokens and samples a
// continuation until an end-of-generation token, a stop string or
// MaxTokens. It returns the generated text. If the context fills up first
// it returns the text so far and an error wrapping ErrContextFull.
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
// of the loop stops generation; the tokens produced so far stay in the
// session.
func (s *Session) Stream(ctx context.Context, prompt string, opts ...GenerateOption) iter.Seq2[Token, error] {
	return func(yield func(Token, error) bool) {
		err := s.q.Generate(ctx, prompt, generation(opts).Generation, func(id int32, text string) bool { return yield(Token{ID: id, Text: text}, nil) })
		if err != nil {
			yield(Token{}, err)
		}
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
		ids, err := s.m.TokenizeSpecial(prompt)
		if err == nil {
			g := generation(opts)
			g.Preserve = s.m.e.Chat.Preserve
			err = s.q.GenerateFrom(ctx, ids, g.Generation, func(id int32, text string) bool { return yield(Token{ID: id, Text: text}, nil) })
		}
		if err != nil {
			yield(Token{}, err)
		}
	}
}

// Save writes the session's state to w: its tokens, the logits after the
// last one and the KV cache rows in use (not empty capacity), in a
// versioned binary format with the model's fingerprint and a checksum.
// Restore on a session of the same model file and KV type continues
// exactly where this one stands.
func (s *Session) Save(w io.Writer) error {
	id, err := s.m.e.Identity()
	if err != nil {
		return err
	}
	return s.q.Save(w, id)
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
func (s *Session) Restore(r io.Reader) error {
	id, err := s.m.e.Identity()
	if err != nil {
		return err
	}
	return s.q.Restore(r, id)
}
