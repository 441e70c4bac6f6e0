package seq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

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
	// ErrBusy: a call on the sequence while another one runs (from another
	// goroutine, or from inside Generate's yield).
	ErrBusy = errors.New("llm: session busy: another call on it is running")
)

// errNilContext is the error of a call given a nil context.
var errNilContext = fmt.Errorf("llm: nil context: %w", ErrInvalidOption)

// Budget is the memory a Seq's KV cache may take, shared with the other
// sequences of the model (memplan.KVBudget).
type Budget interface {
	Reserve(extra int64) bool // count extra more bytes if they fit
	Force(n int64)            // count n bytes whatever the limit
	Release(n int64)          // give back n counted bytes
	Limit() int64             // bytes all caches may hold together
	InUse() int64             // bytes counted now
	Room() int64              // bytes caches may grow by without taking memory from resident weights
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
	// EncodeContinuation tokenizes text appended after the token last
	// (no SentencePiece dummy prefix in the middle of a sequence).
	EncodeContinuation(last int32, text string) []int32
	IsEOG(id int32) bool
	OutputPiece(id int32) []byte // the text id adds to output (none for control tokens)
	Piece(id int32) []byte       // the text of id, control tokens included
}

// Config sizes and configures a Seq.
type Config struct {
	Context     int     // the most tokens the sequence holds
	Batch       int     // the most tokens one forward pass takes
	KVType      kv.Type // the cache's element type
	NoRecent    bool    // an INT4 cache keeps no F16 copies of its newest positions (memplan.Plan.KVNoRecent)
	Preallocate bool    // reserve and touch the whole context's cache in New
	Shift       bool    // drop old tokens instead of failing when full
	Keep        int     // tokens a shift keeps at the start
	Logger      *slog.Logger
	Guard       Guard // nil: nothing to hold
	Vocab       Vocab // for Generate
	// Draft is the sequence of a draft model of the same vocabulary that
	// drafts tokens for Generation.Drafting; the sequence made owns it
	// (closes and resets it with itself). Its model must truncate
	// exactly (no conv or recurrent layers).
	Draft *Seq
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
// their KV cache and the logits after the last one.
//
// One call runs at a time: a call made while another runs (from another
// goroutine, or from inside Generate's yield) fails with ErrBusy and
// changes nothing. Close may come at any time: a running call stops at its
// next step with ErrClosed, and the memory is released when it has. The
// accessors (Len, Tokens, Stats, Usage, Context) may be called from any
// goroutine at any time.
type Seq struct {
	m       *model.Model
	st      *model.State
	budget  Budget
	cfg     Config
	history []int32
	// at is how many of history the model's state has evaluated: all of
	// them, except after a rewind that a model with conv layers could only
	// take back to an earlier checkpoint (model.(*State).Truncate); the
	// next step evaluates history[at:] again first (replay).
	at      int
	logits  []float32 // after the last evaluated token
	scratch []float32 // a copy of logits for a sampler that changes them
	one     [1]int32  // the token of a decode step, without allocating
	draft   []int32   // a sampled token and the tokens drafted after it (Lookup)
	dft     *Seq      // the draft model's sequence (Config.Draft), or nil
	catch   []int32   // as a draft sequence: the tokens it evaluates to follow the one it drafts for
	rows    []float32 // a verification pass's logits, in the model's arena
	fit     int       // the most tokens of a verification pass (model.State.RowsFit)
	bytes   int64     // KV bytes counted in budget
	grows   int
	shifts  int
	usage   Usage // of the last generation

	logprob float32        // of the token yielded last, with Generation.Logprobs
	top     []TokenLogprob // the most likely tokens at its step

	// mu guards what a call changes and the accessors read from other
	// goroutines: the length of history, the cache's size, the counters,
	// usage; and busy and freed. The running call reads them without it.
	mu     sync.Mutex
	busy   bool        // a call runs: between enter and leave
	freed  bool        // the memory is released
	closed atomic.Bool // Close was called
}

// CheckShift refuses a context shift (shift) that keeps keep tokens of a
// context that holds no more: nothing would be left to drop.
func CheckShift(shift bool, keep, context int) error {
	if shift && keep >= context {
		return fmt.Errorf("llm: context shift keeping %d tokens leaves no room in a context of %d: keep fewer: %w", keep, context, ErrInvalidOption)
	}
	return nil
}

// New makes an empty sequence of m with its own KV cache, running on e.
// The cache starts at memplan.InitialCells and is counted in b; with
// Preallocate it must fit b (memplan.ErrOutOfBudget otherwise).
func New(m *model.Model, e *ops.Exec, b Budget, c Config) (*Seq, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if err := CheckShift(c.Shift, c.Keep, c.Context); err != nil {
		return nil, err
	}
	so := model.StateOptions{
		Batch: min(c.Batch, c.Context), Cache: c.KVType, NoRecent: c.NoRecent, Cells: c.Context,
		Initial: memplan.InitialCells(c.Context, c.Preallocate),
	}
	kvb := kv.Bytes(m.StateKVConfig(so))
	if !c.Preallocate {
		b.Force(kvb)
	} else if !b.Reserve(kvb) {
		return nil, fmt.Errorf("llm: new session: reserving a KV cache of %d cells (%s) breaks the memory budget (%s for KV caches, %s in use): %w",
			so.Initial, memplan.FormatBytes(kvb), memplan.FormatBytes(b.Limit()), memplan.FormatBytes(b.InUse()), memplan.ErrOutOfBudget)
	}
	st, err := m.NewState(e, so)
	if err != nil {
		b.Release(kvb)
		return nil, fmt.Errorf("llm: new session: %w", err)
	}
	if c.Preallocate {
		st.Cache().Touch()
	}
	// The history is reserved up front (4 bytes a token) so appending to it
	// never allocates in the decode loop; so is a draft's catch-up.
	s := &Seq{m: m, st: st, budget: b, cfg: c, logits: make([]float32, m.Vocab),
		history: make([]int32, 0, c.Context), bytes: kvb, fit: st.RowsFit(), dft: c.Draft}
	if d := c.Draft; d != nil {
		d.catch = make([]int32, 0, d.cfg.Context+1)
	}
	return s, nil
}

// Context is the most tokens the sequence holds.
func (s *Seq) Context() int { return s.cfg.Context }

// Tokens is a copy of the tokens held, oldest first.
func (s *Seq) Tokens() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history)
}

// Len is the number of tokens held.
func (s *Seq) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.history)
}

// Logits is the logits after the last token: what the last Eval returned
// or Restore brought back, zeros before any, nil once closed. The slice is
// the sequence's own and overwritten by the next Eval: read it between
// calls, or inside Generate's yield.
func (s *Seq) Logits() []float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logits
}

// Stats reports the KV cache's size and history; zeros once closed.
func (s *Seq) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.freed {
		return Stats{}
	}
	c := s.st.Cache()
	return Stats{Cells: c.Cells(), MaxCells: c.MaxCells(), Used: len(s.history), Bytes: c.Bytes(),
		Grows: s.grows, Shifts: s.shifts, Preallocated: s.cfg.Preallocate}
}

// Truncate keeps the first n tokens and forgets the rest, as if they had
// never been evaluated; the logits are stale until the next Eval. It is
// how a caller reuses a shared prefix. It does nothing while another call
// runs or once the sequence is closed.
func (s *Seq) Truncate(n int) {
	if s.enter() != nil {
		return
	}
	defer s.leave()
	s.truncate(n)
}

// truncate is Truncate within a call.
func (s *Seq) truncate(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(max(n, 0), len(s.history))
	s.history = s.history[:n]
	s.at = s.st.Truncate(min(n, s.at))
}

// replay evaluates again the tokens a rewind left unevaluated
// (history[at:]), so that the model's state follows the whole history
// before a step adds to it. It writes the logits after them. When it fails
// the history is cut to what the state follows.
func (s *Seq) replay() error {
	for s.at < len(s.history) {
		end := min(len(s.history), s.at+s.st.Batch())
		if err := s.st.Forward(s.history[s.at:end], s.at, s.logits); err != nil {
			s.truncate(s.at)
			return fmt.Errorf("llm: evaluating the tokens after a rewind again: %w", err)
		}
		s.at = end
	}
	return nil
}

// Reset forgets every token and gives back the memory the KV cache grew
// by (a preallocated cache keeps it): resident weights may take it until
// the cache grows again. It does nothing while another call runs or once
// the sequence is closed.
func (s *Seq) Reset() {
	if s.enter() != nil {
		return
	}
	defer s.leave()
	s.truncate(0)
	if s.dft != nil {
		s.dft.Reset()
	}
	if s.cfg.Preallocate {
		return
	}
	initial := memplan.InitialCells(s.cfg.Context, false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Cells() <= initial {
		return
	}
	c, err := s.st.NewCache(initial)
	if err != nil || s.st.SetCache(c) != nil {
		return // keep the grown cache: it still works
	}
	freeOS(s.bytes)
	s.budget.Release(s.bytes - c.Bytes())
	s.bytes = c.Bytes()
}

// freeOS returns the memory of a dropped KV cache of n bytes to the
// system before its budget is released, so that whatever takes it next
// (resident weights) does not count on memory the garbage collector still
// holds. Small caches are left to the collector.
func freeOS(n int64) {
	if n >= 4<<20 {
		debug.FreeOSMemory()
	}
}

// Close releases the sequence's memory and its share of the budget; every
// later call fails with ErrClosed, and Close itself may be called again.
// A call running meanwhile (on another goroutine, or the Generate whose
// yield calls Close) stops at its next step with ErrClosed, and the memory
// is released when it returns.
func (s *Seq) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed.Store(true)
	if !s.busy {
		s.free()
	}
}

// free releases the memory, once; under mu, with no call running.
func (s *Seq) free() {
	if s.freed {
		return
	}
	s.freed = true
	s.st, s.history, s.logits, s.scratch, s.rows = nil, nil, nil, nil, nil
	freeOS(s.bytes)
	s.budget.Release(s.bytes)
	if s.dft != nil {
		s.dft.Close()
	}
}

// enter starts a call: ErrClosed once the sequence is closed, ErrBusy
// while another call runs. leave must follow when it succeeds.
func (s *Seq) enter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed.Load():
		return ErrClosed
	case s.busy:
		return ErrBusy
	}
	s.busy = true
	return nil
}

// enterCtx is enter for a call that takes a context, which must not be
// nil.
func (s *Seq) enterCtx(ctx context.Context) error {
	if ctx == nil {
		return errNilContext
	}
	return s.enter()
}

// enterIO is enter for Save and Restore, refusing first a nil stream (a
// reader or writer; what says the call and its nil).
func (s *Seq) enterIO(stream any, what string) error {
	if stream == nil {
		return fmt.Errorf("llm: %s: %w", what, ErrInvalidOption)
	}
	return s.enter()
}

// leave ends a call, releasing the memory if Close came meanwhile.
func (s *Seq) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	if s.closed.Load() {
		s.free()
	}
}

// acquire holds the model open for one step of a call (a chunk of an
// evaluation), so that closing the model waits for the step, not the
// call: ErrClosed when the sequence or the model was closed. drop follows
// when it succeeds.
func (s *Seq) acquire() error {
	if s.closed.Load() {
		return ErrClosed
	}
	if g := s.cfg.Guard; g != nil {
		return g.Acquire()
	}
	return nil
}

func (s *Seq) drop() {
	if g := s.cfg.Guard; g != nil {
		g.Release()
	}
}

// Eval appends tokens and returns the logits predicting the token after
// the last one (Logits). Tokens beyond the context return an error
// wrapping kv.ErrFull, unless the sequence shifts; a failed or cancelled
// Eval leaves the sequence as it was.
func (s *Seq) Eval(ctx context.Context, tokens []int32) ([]float32, error) {
	if err := s.enterCtx(ctx); err != nil {
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
	if err := s.enterCtx(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	// Checked before the logits of every token are allocated.
	if len(tokens) > s.cfg.Context {
		return nil, fmt.Errorf("llm: EvalAll of %d tokens: more than the context of %d: %w", len(tokens), s.cfg.Context, kv.ErrFull)
	}
	if n := int64(len(tokens)) * int64(s.m.Vocab); n > maxEvalAll {
		return nil, fmt.Errorf("llm: EvalAll of %d tokens would return %s of logits (at most %s): evaluate fewer at a time: %w",
			len(tokens), memplan.FormatBytes(4*n), memplan.FormatBytes(4*maxEvalAll), ErrInvalidOption)
	}
	all := make([]float32, len(tokens)*s.m.Vocab)
	if err := s.eval(ctx, tokens, all); err != nil {
		return nil, err
	}
	return all, nil
}

// maxEvalAll bounds the logits EvalAll returns (floats), which no memory
// plan counts.
const maxEvalAll = 1 << 28

// eval runs tokens through the model in chunks of the batch size (of at
// most Context−Keep tokens when the sequence shifts, so that a shift can
// always make room for one), making room in the cache before each; all,
// when not nil, receives every token's logits. It runs within a call.
func (s *Seq) eval(ctx context.Context, tokens []int32, all []float32) error {
	if err := s.m.Generative(); err != nil {
		return fmt.Errorf("llm: %w", err)
	}
	if len(tokens) == 0 {
		return fmt.Errorf("llm: eval of no tokens: %w", ErrInvalidOption)
	}
	if !s.cfg.Shift && len(s.history)+len(tokens) > s.cfg.Context {
		return fmt.Errorf("llm: %d tokens after %d do not fit in a context of %d: %w",
			len(tokens), len(s.history), s.cfg.Context, kv.ErrFull)
	}
	if err := s.checkTokens(tokens); err != nil {
		return fmt.Errorf("llm: %w", err)
	}
	vocab := s.m.Vocab
	step := s.st.Batch()
	if s.cfg.Shift {
		step = max(1, min(step, s.cfg.Context-s.cfg.Keep))
	}
	start := len(s.history)
	for i := 0; i < len(tokens); i += step {
		if err := ctx.Err(); err != nil {
			s.truncate(start)
			return err
		}
		chunk := tokens[i:min(len(tokens), i+step)]
		out := s.logits
		if all != nil && len(chunk) > 1 {
			out = all[i*vocab : (i+len(chunk))*vocab]
		}
		if err := s.forward(chunk, nil, out, false, &start); err != nil {
			s.truncate(start)
			return err
		}
		if all != nil {
			if len(chunk) == 1 {
				copy(all[i*vocab:], out)
			}
			copy(s.logits, all[(i+len(chunk)-1)*vocab:])
		}
	}
	return nil
}

// checkTokens refuses a token outside the model's vocabulary before any
// work is done, so that a failed call changes nothing.
func (s *Seq) checkTokens(tokens []int32) error {
	for _, t := range tokens {
		if t < 0 || int(t) >= s.m.Vocab {
			return fmt.Errorf("token %d not in vocabulary of %d: %w", t, s.m.Vocab, model.ErrTokenOutOfRange)
		}
	}
	return nil
}

// forward makes room for chunk and runs it through the model, holding the
// model open for the step, writing logits to out (model.State.Forward),
// or every token's to the arena when out is nil (model.State.ForwardRows:
// s.rows), or, when hidden, every token's hidden state (model.State.Hidden), or, when
// lens is not nil, those of the texts of lens's lengths packed in chunk
// (model.State.HiddenPacked; the sequence must be empty). A panic (a
// fault reading a mapped file that shrank, or a bug) rewinds the sequence
// to *start before it goes on up, so that the sequence stays usable.
func (s *Seq) forward(chunk []int32, lens []int, out []float32, hidden bool, start *int) error {
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.drop()
	defer func() {
		if r := recover(); r != nil {
			s.truncate(*start)
			panic(ops.Caught(r))
		}
	}()
	if err := s.replay(); err != nil {
		return err
	}
	if err := s.makeRoom(len(chunk), start); err != nil {
		return err
	}
	var err error
	switch {
	case lens != nil:
		err = s.st.HiddenPacked(chunk, lens, out)
	case hidden:
		err = s.st.Hidden(chunk, len(s.history), out)
	case out == nil:
		s.rows, err = s.st.ForwardRows(chunk, len(s.history))
	default:
		err = s.st.Forward(chunk, len(s.history), out)
	}
	if err != nil {
		return fmt.Errorf("llm: eval: %w", err)
	}
	s.mu.Lock()
	s.history = append(s.history, chunk...)
	s.at = len(s.history)
	s.mu.Unlock()
	return nil
}
