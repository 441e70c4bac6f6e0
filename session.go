package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/sampler"
)

// Session is one conversation with a model: the tokens so far, their KV
// cache and scratch memory. A session is used by one goroutine at a time;
// run several sessions for concurrency.
type Session struct {
	m       *Model
	st      *model.State
	set     settings
	history []int32
	logits  []float32 // logits of the last evaluated token
	closed  bool
	kv      kvSession // growth and shift bookkeeping (kvgrow.go, shift.go)
}

// NewSession makes a session with its own KV cache. Options override the
// context size, KV type and batch size given to Load.
func (m *Model) NewSession(opts ...SessionOption) (*Session, error) {
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	set := m.set
	set.errs = nil
	for _, o := range opts {
		if o != nil {
			o.applySession(&set)
		}
	}
	if err := errors.Join(set.errs...); err != nil {
		return nil, err
	}
	batch := min(set.batch, set.context)
	initial := kvInitialCells(set)
	kvb := kvBytes(&m.m.Config, set.kvType, initial)
	if !m.kvReserve(kvb, !set.kvPrealloc) {
		return nil, fmt.Errorf("llm: new session: reserving a KV cache of %d cells (%s) breaks the memory budget (%s for KV caches, %s in use): %w",
			initial, fmtBytes(kvb), fmtBytes(m.kvBudget()), fmtBytes(m.kvAcct.inUse.Load()), ErrOutOfMemoryBudget)
	}
	st, err := m.m.NewState(ops.NewExec(m.pool), model.StateOptions{
		Batch: batch, Cache: kv.Type(set.kvType), Cells: set.context, Initial: initial,
	})
	if err != nil {
		m.kvRelease(kvb)
		return nil, fmt.Errorf("llm: new session: %w", err)
	}
	if set.kvPrealloc {
		st.Cache().Touch()
	}
	// The history is reserved up front (4 bytes a token) so appending to it
	// never allocates in the decode loop.
	return &Session{m: m, st: st, set: set, logits: make([]float32, m.m.Vocab),
		history: make([]int32, 0, set.context), kv: kvSession{bytes: kvb}}, nil
}

// Context is the most tokens the session can hold.
func (s *Session) Context() int { return s.set.context }

// Tokens returns the tokens the session holds, oldest first.
func (s *Session) Tokens() []int32 { return append([]int32(nil), s.history...) }

// Len is the number of tokens the session holds.
func (s *Session) Len() int { return len(s.history) }

// Reset forgets every token, keeping the memory for reuse.
func (s *Session) Reset() {
	s.history = s.history[:0]
	s.st.Cache().Truncate(0)
}

// Close releases the session's memory. It is safe to call twice.
func (s *Session) Close() error {
	if !s.closed {
		s.m.kvRelease(s.kv.bytes)
	}
	s.closed = true
	s.st = nil
	s.history = nil
	return nil
}

func (s *Session) begin() error {
	if s.closed {
		return ErrClosed
	}
	return s.m.acquire()
}

// Eval appends tokens to the session and returns the logits (one score per
// vocabulary entry) predicting the token after the last one. The slice is
// owned by the session and overwritten by the next call. Tokens beyond the
// context return an error wrapping ErrContextFull and change nothing.
func (s *Session) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.m.release()
	if err := s.eval(ctx, tokens, nil); err != nil {
		return nil, err
	}
	return s.logits, nil
}

// EvalAll is Eval returning the logits after every token: len(tokens) rows
// of VocabSize floats, in a new slice. It is for scoring text (perplexity)
// and testing; generation only needs Eval.
func (s *Session) EvalAll(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.m.release()
	all := make([]float32, len(tokens)*s.m.m.Vocab)
	if err := s.eval(ctx, tokens, &all); err != nil {
		return nil, err
	}
	return all, nil
}

func (s *Session) eval(ctx context.Context, tokens []int32, all *[]float32) error {
	if len(tokens) == 0 {
		return fmt.Errorf("llm: eval of no tokens: %w", ErrInvalidOption)
	}
	if !s.set.shift && len(s.history)+len(tokens) > s.set.context {
		return fmt.Errorf("llm: %d tokens after %d do not fit in a context of %d: %w",
			len(tokens), len(s.history), s.set.context, ErrContextFull)
	}
	vocab := s.m.m.Vocab
	for _, t := range tokens {
		if t < 0 || int(t) >= vocab {
			return fmt.Errorf("llm: token %d not in vocabulary of %d: %w", t, vocab, ErrBadToken)
		}
	}
	start := len(s.history)
	for i := 0; i < len(tokens); i += s.st.Batch() {
		if err := ctx.Err(); err != nil {
			s.rewind(start)
			return err
		}
		chunk := tokens[i:min(len(tokens), i+s.st.Batch())]
		if err := s.makeRoom(len(chunk), &start); err != nil {
			s.rewind(start)
			return err
		}
		out := s.logits
		if all != nil && len(chunk) > 1 {
			out = (*all)[i*vocab : (i+len(chunk))*vocab]
		}
		if err := s.st.Forward(chunk, len(s.history), out); err != nil {
			s.rewind(start)
			return fmt.Errorf("llm: eval: %w", err)
		}
		s.history = append(s.history, chunk...)
		if all != nil {
			if len(chunk) == 1 {
				copy((*all)[i*vocab:], out)
			}
			copy(s.logits, (*all)[(i+len(chunk)-1)*vocab:])
		}
	}
	return nil
}

// rewind drops tokens after n, after a failed or cancelled evaluation.
func (s *Session) rewind(n int) {
	s.history = s.history[:n]
	s.st.Cache().Truncate(n)
}

// Token is one generated token and the text it completes. Text may be
// empty when the token ends inside a UTF-8 character or could be the start
// of a stop string; the held-back text arrives with a later token.
type Token struct {
	ID   int32
	Text string
}

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
		g := defaultGen()
		for _, o := range opts {
			if o != nil {
				o(&g)
			}
		}
		if err := errors.Join(g.errs...); err != nil {
			yield(Token{}, err)
			return
		}
		smp, err := sampler.New(sampler.Config{
			Temperature: g.temp, TopK: g.topK, TopP: g.topP, MinP: g.minP,
			RepeatPenalty: g.repeat, FrequencyPenalty: g.freq, PresencePenalty: g.presence,
			PenaltyLastN: g.lastN, Seed: g.seed,
		}, s.m.m.Vocab)
		if err != nil {
			yield(Token{}, fmt.Errorf("llm: %w", err))
			return
		}
		var ids []int32
		if len(s.history) == 0 {
			ids, err = s.m.Tokenize(prompt)
		} else {
			ids = s.m.tok.Encode(prompt, false)
		}
		if err != nil {
			yield(Token{}, err)
			return
		}
		if len(ids) > 0 {
			if _, err := s.Eval(ctx, ids); err != nil {
				yield(Token{}, err)
				return
			}
		} else if len(s.history) == 0 {
			yield(Token{}, fmt.Errorf("llm: empty prompt and empty session: nothing to continue: %w", ErrInvalidOption))
			return
		}
		out := textOut{stops: g.stop}
		for range g.maxTokens {
			id := smp.Sample(s.logits, s.history)
			if s.m.tok.IsEOG(id) {
				break
			}
			text, stop := out.add(s.m.tok.OutputPiece(id))
			if stop {
				// The token that completed a stop string stays out of the session
				// so that it can be continued cleanly.
				if text != "" {
					yield(Token{ID: id, Text: text}, nil)
				}
				return
			}
			if !yield(Token{ID: id, Text: text}, nil) {
				return
			}
			if !s.set.shift && len(s.history) >= s.set.context {
				yield(Token{}, fmt.Errorf("llm: generation reached the context size %d: %w", s.set.context, ErrContextFull))
				return
			}
			if _, err := s.Eval(ctx, []int32{id}); err != nil {
				yield(Token{}, err)
				return
			}
		}
		if rest := out.flush(); rest != "" {
			yield(Token{ID: -1, Text: rest}, nil)
		}
	}
}

// textOut turns token pieces into text that is safe to hand out: whole
// UTF-8 characters, and nothing that might be the start of a stop string.
type textOut struct {
	stops   []string
	pending []byte
}

// add appends a piece and returns the text that can be released, and
// whether a stop string was found (the text then ends before it).
func (o *textOut) add(piece []byte) (string, bool) {
	o.pending = append(o.pending, piece...)
	s := string(o.pending)
	for _, st := range o.stops {
		if i := strings.Index(s, st); i >= 0 {
			o.pending = o.pending[:0]
			return s[:i], true
		}
	}
	// Hold back an incomplete UTF-8 sequence at the end.
	keep := 0
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				keep = len(s) - i
			}
			break
		}
	}
	// Hold back the longest suffix that begins a stop string.
	for _, st := range o.stops {
		for k := min(len(st)-1, len(s)); k > keep; k-- {
			if strings.HasPrefix(st, s[len(s)-k:]) {
				keep = k
				break
			}
		}
	}
	out := s[:len(s)-keep]
	o.pending = append(o.pending[:0], s[len(s)-keep:]...)
	return out, false
}

// flush returns whatever is still held back.
func (o *textOut) flush() string {
	s := string(o.pending)
	o.pending = o.pending[:0]
	return s
}
