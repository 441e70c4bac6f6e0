package seq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

// Errors of misuse. llm re-exports them as the same values.
var (
	// ErrClosed: the sequence (or the model behind it) was closed.
	ErrClosed = errors.New("llm: closed")
	// ErrInvalidOption: an argument or option out of range.
	ErrInvalidOption = errors.New("llm: invalid option")
)

// Budget is the memory a Seq's KV cache may take, shared with the other
// sequences of the model (memplan.KVBudget).
type Budget interface {
	Reserve(extra int64) bool // count extra more bytes if they fit
	Force(n int64)            // count n bytes whatever the limit
	Release(n int64)          // give back n counted bytes
	Limit() int64             // bytes all caches may hold together
	InUse() int64             // bytes counted now
	Short() bool              // memory is short right now: do not grow
}

// Guard keeps what a Seq computes with (the model's mapped weights and
// threads) open while a call runs: Acquire fails once it is closed, and
// Release follows every Acquire that succeeded.
type Guard interface {
	Acquire() error
	Release()
}

// Vocab turns text into tokens and tokens into text for Generate
// (tokenizer.Tokenizer).
type Vocab interface {
	Encode(text string, addSpecial bool) []int32
	IsEOG(id int32) bool
	OutputPiece(id int32) []byte // the text id adds to output (none for control tokens)
	Piece(id int32) []byte       // the text of id, control tokens included
}

// Config sizes and configures a Seq.
type Config struct {
	Context     int     // the most tokens the sequence holds
	Batch       int     // the most tokens one forward pass takes
	KVType      kv.Type // the cache's element type
	Preallocate bool    // reserve and touch the whole context's cache in New
	Shift       bool    // drop old tokens instead of failing when full
	Keep        int     // tokens a shift keeps at the start
	Logger      *slog.Logger
	Guard       Guard // nil: nothing to hold
	Vocab       Vocab // for Generate
}

// Stats describes a sequence's KV cache.
type Stats struct {
	Cells        int   // positions the cache holds without growing
	MaxCells     int   // the session's context: the most it grows to
	Used         int   // tokens held
	Bytes        int64 // bytes allocated for keys, values and scales
	Grows        int   // times the cache was enlarged
	Shifts       int   // context shifts (WithContextShift)
	Preallocated bool  // the whole context was reserved at creation
}

// Seq is one sequence of tokens evaluated by a model: the tokens held,
// their KV cache and the logits after the last one. It is used by one
// goroutine at a time.
type Seq struct {
	m       *model.Model
	st      *model.State
	budget  Budget
	cfg     Config
	history []int32
	logits  []float32 // after the last evaluated token
	scratch []float32 // a copy of logits for a sampler that changes them
	bytes   int64     // KV bytes counted in budget
	grows   int
	shifts  int
	usage   Usage // of the last generation
	closed  bool
}

// New makes an empty sequence of m with its own KV cache, running on e.
// The cache starts at memplan.InitialCells and is counted in b; with
// Preallocate it must fit b (memplan.ErrOutOfBudget otherwise).
func New(m *model.Model, e *ops.Exec, b Budget, c Config) (*Seq, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	kc := m.KVConfig(c.KVType, c.Context)
	kc.Initial = memplan.InitialCells(c.Context, c.Preallocate)
	kvb := kv.Bytes(kc)
	if !c.Preallocate {
		b.Force(kvb)
	} else if !b.Reserve(kvb) {
		return nil, fmt.Errorf("llm: new session: reserving a KV cache of %d cells (%s) breaks the memory budget (%s for KV caches, %s in use): %w",
			kc.Initial, memplan.FormatBytes(kvb), memplan.FormatBytes(b.Limit()), memplan.FormatBytes(b.InUse()), memplan.ErrOutOfBudget)
	}
	st, err := m.NewState(e, model.StateOptions{
		Batch: min(c.Batch, c.Context), Cache: c.KVType, Cells: c.Context, Initial: kc.Initial,
	})
	if err != nil {
		b.Release(kvb)
		return nil, fmt.Errorf("llm: new session: %w", err)
	}
	if c.Preallocate {
		st.Cache().Touch()
	}
	// The history is reserved up front (4 bytes a token) so appending to it
	// never allocates in the decode loop.
	return &Seq{m: m, st: st, budget: b, cfg: c, logits: make([]float32, m.Vocab),
		history: make([]int32, 0, c.Context), bytes: kvb}, nil
}

// Context is the most tokens the sequence holds.
func (s *Seq) Context() int { return s.cfg.Context }

// Tokens is the tokens held, oldest first. The slice is the sequence's own:
// read it before the next call that changes the sequence.
func (s *Seq) Tokens() []int32 { return s.history }

// Len is the number of tokens held.
func (s *Seq) Len() int { return len(s.history) }

// Logits is the logits after the last token: what the last Eval returned
// or Restore brought back, zeros before any. The slice is the sequence's
// own and overwritten by the next Eval.
func (s *Seq) Logits() []float32 { return s.logits }

// Stats reports the KV cache's size and history; zeros once closed.
func (s *Seq) Stats() Stats {
	if s.closed {
		return Stats{}
	}
	c := s.st.Cache()
	return Stats{Cells: c.Cells(), MaxCells: c.MaxCells(), Used: len(s.history), Bytes: c.Bytes(),
		Grows: s.grows, Shifts: s.shifts, Preallocated: s.cfg.Preallocate}
}

// Truncate keeps the first n tokens and forgets the rest, as if they had
// never been evaluated; the logits are stale until the next Eval. It is
// how a failed call rewinds, and how a caller reuses a shared prefix.
func (s *Seq) Truncate(n int) {
	if s.closed {
		return
	}
	n = min(max(n, 0), len(s.history))
	s.history = s.history[:n]
	s.st.Cache().Truncate(n)
}

// Reset forgets every token, keeping the memory for reuse.
func (s *Seq) Reset() { s.Truncate(0) }

// Close releases the sequence's memory and its share of the budget. Every
// later call fails with ErrClosed; Close itself may be called again.
func (s *Seq) Close() {
	if !s.closed {
		s.budget.Release(s.bytes)
	}
	s.closed = true
	s.st, s.history, s.scratch = nil, nil, nil
}

// enter starts a call that computes: the sequence and its model must be
// open until leave.
func (s *Seq) enter() error {
	if s.closed {
		return ErrClosed
	}
	if g := s.cfg.Guard; g != nil {
		return g.Acquire()
	}
	return nil
}

func (s *Seq) leave() {
	if g := s.cfg.Guard; g != nil {
		g.Release()
	}
}

// Eval appends tokens and returns the logits predicting the token after
// the last one (Logits). Tokens beyond the context return an error
// wrapping kv.ErrFull, unless the sequence shifts; a failed or cancelled
// Eval leaves the sequence as it was.
func (s *Seq) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if err := s.eval(ctx, tokens, nil); err != nil {
		return nil, err
	}
	return s.logits, nil
}

// EvalAll is Eval returning the logits after every token: len(tokens) rows
// of vocabulary size, in a new slice.
func (s *Seq) EvalAll(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	all := make([]float32, len(tokens)*s.m.Vocab)
	if err := s.eval(ctx, tokens, all); err != nil {
		return nil, err
	}
	return all, nil
}

// eval runs tokens through the model in chunks of the batch size, making
// room in the cache before each; all, when not nil, receives every token's
// logits.
func (s *Seq) eval(ctx context.Context, tokens []int32, all []float32) error {
	if len(tokens) == 0 {
		return fmt.Errorf("llm: eval of no tokens: %w", ErrInvalidOption)
	}
	if !s.cfg.Shift && len(s.history)+len(tokens) > s.cfg.Context {
		return fmt.Errorf("llm: %d tokens after %d do not fit in a context of %d: %w",
			len(tokens), len(s.history), s.cfg.Context, kv.ErrFull)
	}
	vocab := s.m.Vocab
	for _, t := range tokens {
		if t < 0 || int(t) >= vocab {
			return fmt.Errorf("llm: token %d not in vocabulary of %d: %w", t, vocab, model.ErrTokenOutOfRange)
		}
	}
	start := len(s.history)
	for i := 0; i < len(tokens); i += s.st.Batch() {
		if err := ctx.Err(); err != nil {
			s.Truncate(start)
			return err
		}
		chunk := tokens[i:min(len(tokens), i+s.st.Batch())]
		if err := s.makeRoom(len(chunk), &start); err != nil {
			s.Truncate(start)
			return err
		}
		out := s.logits
		if all != nil && len(chunk) > 1 {
			out = all[i*vocab : (i+len(chunk))*vocab]
		}
		if err := s.st.Forward(chunk, len(s.history), out); err != nil {
			s.Truncate(start)
			return fmt.Errorf("llm: eval: %w", err)
		}
		s.history = append(s.history, chunk...)
		if all != nil {
			if len(chunk) == 1 {
				copy(all[i*vocab:], out)
			}
			copy(s.logits, all[(i+len(chunk)-1)*vocab:])
		}
	}
	return nil
}
