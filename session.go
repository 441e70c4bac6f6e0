package llm

import (
	"context"
	"io"
	"iter"
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

// Session is one conversation with a model: its tokens, KV cache and
// scratch memory. It runs one call at a time (a call while another runs
// returns ErrBusy and changes nothing); Close, Context, Tokens, Len,
// KVStats and Usage may be called from any goroutine at any time.
type Session struct {
	m *Model
	q *seq.Seq
}

var (
	// ErrContextFull: the tokens do not fit in the session's context.
	ErrContextFull = kv.ErrFull
	// ErrBusy: a call on a session while another runs on it (on another
	// goroutine, or inside a Stream loop over it); nothing was changed.
	ErrBusy = seq.ErrBusy
	// ErrBadToken: a token id outside the vocabulary.
	ErrBadToken = model.ErrTokenOutOfRange
)

// KVStats describes a session's KV cache: cells allocated and at most,
// tokens held, bytes, growths and context shifts.
type KVStats = seq.Stats

// NewSession makes a session with its own KV cache; opts override Load's.
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

// Eval appends tokens and returns the logits predicting the next one, in a
// slice the next call overwrites; tokens beyond the context change nothing
// and return an error wrapping ErrContextFull.
func (s *Session) Eval(ctx context.Context, tokens []int32) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.q.Eval(ctx, tokens)
}

// EvalAll is Eval returning, in a new slice, the logits after every token
// (len(tokens) rows of VocabSize), for scoring text; at most 2^28 logits.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) (_ []float32, err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.q.EvalAll(ctx, tokens)
}

// Logits returns the logits after the session's last token (zeros before
// any); sampling penalises a copy. The next Eval overwrites the slice.
func (s *Session) Logits() []float32 { defer s.engine().Absorb(); return s.q.Logits() }

// Finish says why a generation ended: FinishEnd (an end-of-generation
// token), FinishStop (a stop string), FinishLength (MaxTokens),
// FinishCaller (the caller's loop stopped); FinishNone after an error.
type Finish = seq.Finish

// Reasons a generation ended (see Finish).
const (
	FinishNone   Finish = seq.FinishNone
	FinishEnd    Finish = seq.FinishEnd
	FinishStop   Finish = seq.FinishStop
	FinishLength Finish = seq.FinishLength
	FinishCaller Finish = seq.FinishCaller
)

// Usage reports a session's last generation: prompt tokens, those reused
// from the KV cache, tokens generated, why it ended, the time taken, and
// with WithSpeculation or a draft model (WithDraftModel) the tokens
// drafted and those of them kept.
type Usage = seq.Usage

// Usage reports the session's last generation.
func (s *Session) Usage() Usage { defer s.engine().Absorb(); return s.q.Usage() }

// Generate evaluates prompt after the session's tokens (tokenized as
// their continuation) and samples until an end-of-generation token, a stop
// string or MaxTokens, returning the text; a full context returns the text
// so far and an error wrapping ErrContextFull.
func (s *Session) Generate(ctx context.Context, prompt string, opts ...GenerateOption) (string, error) {
	return engine.Text(s.Stream(ctx, prompt, opts...))
}

// Token is one generated token and the text it completes; text held back
// (half a character, a possible stop string or chat marker) comes with a
// later token, or one with ID -1 at the end. From ChatStream, Text is
// answer only, reasoning is in Thinking and completed calls in ToolCalls.
// With WithLogprobs: the token's Logprob and its step's TopLogprobs.
type Token = engine.Token

// TokenLogprob is a token, its text (a control token's own, such as
// "<|im_end|>") and its log-probability (natural logarithm) under the
// model: the softmax of the raw logits, before penalties, temperature,
// top-k/p/min-p or a JSON constraint.
type TokenLogprob = seq.TokenLogprob

// Stream is Generate delivering tokens as they are produced; breaking out
// of the loop stops it. However the loop ends, the session then holds
// exactly the text yielded (a break's token is evaluated; held-back text
// dropped), so the next call continues from what the caller saw.
func (s *Session) Stream(ctx context.Context, prompt string, opts ...GenerateOption) iter.Seq2[Token, error] {
	return engine.Tokens(s.engine(), s.seq(), opts, func(g engine.Gen, f func(int32, string) bool) error {
		return s.q.Generate(ctx, prompt, g.Generation, f)
	})
}

// Complete is Stream for a prompt that is the session's whole text (a
// rendered chat, a completion request): the session is made to hold
// exactly prompt (BOS added as the model asks, special-token text read as
// the token), reusing the tokens it shares with what it held. Control
// tokens' text (<|python_tag|> …) stays in the output, for chat parsing.
func (s *Session) Complete(ctx context.Context, prompt string, opts ...GenerateOption) iter.Seq2[Token, error] {
	return engine.Tokens(s.engine(), s.seq(), opts, func(g engine.Gen, f func(int32, string) bool) error {
		return s.m.e.Complete(ctx, s.q, prompt, g, f)
	})
}

// CompleteTokens is Complete for a prompt given as token ids (a server's
// token-array prompt, a fill-in-the-middle prompt built around the
// vocabulary's FIM tokens): the session is made to hold exactly ids, no
// BOS added, reusing the tokens it shares with what it held. An id outside
// the vocabulary is an error wrapping ErrBadToken.
func (s *Session) CompleteTokens(ctx context.Context, ids []int32, opts ...GenerateOption) iter.Seq2[Token, error] {
	return engine.Tokens(s.engine(), s.seq(), opts, func(g engine.Gen, f func(int32, string) bool) error {
		return s.m.e.CompleteTokens(ctx, s.q, ids, g, f)
	})
}

// Save writes the session's tokens, last logits and used KV rows to w in a
// versioned, checksummed format; Restore on a session of the same model
// file and KV type (and LoRA adapters at the same scales) continues
// exactly where this one stands.
func (s *Session) Save(w io.Writer) (err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.m.e.Save(s.q, w)
}

// ErrBadState: Restore was given a damaged or truncated stream, or one
// saved by another model or with another KV type.
var ErrBadState = snapshot.ErrBadState

// Restore replaces the session's state with what Save wrote (reading no
// further), building the new cache before dropping the old (briefly both).
// Errors, after which the session is unchanged, wrap ErrBadState (another
// model file or KV type, damage, truncation; with ErrContextFull when it
// holds more than the context) or ErrOutOfMemoryBudget.
func (s *Session) Restore(r io.Reader) (err error) {
	defer s.engine().Catch(&err, debug.SetPanicOnFault(true))
	return s.m.e.Restore(s.q, r)
}
