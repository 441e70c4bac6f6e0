package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/internal/tokenizer"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/ollama"
	"github.com/lowmem/llm/residency"
)

// Options is what Load is asked for.
type Options struct {
	memplan.Request // the configuration wanted, and the memory limit
	Logger          *slog.Logger
	OnPressure      func(residency.PressureEvent) // see residency.Config
	Readers         int                           // reads of blocks from disk in flight (0: the default)
	ChatTemplate    string                        // overrides tokenizer.chat_template
	Shift           bool                          // sessions shift their context when full
	Keep            int                           // tokens a shift keeps at the start
	// Draft, when not nil, is the draft model each session drafts with
	// (seq.Drafting): a sequence of its own, sized and counted by it.
	Draft *Engine
	// Adapters are the LoRA adapters applied to the model, in order.
	Adapters []AdapterSpec
}

// Engine is a model loaded to run: its mapped file, weights, tokenizer,
// threads, the residency of its weights and the KV budget of its
// sessions, and the lock that keeps them open while anything computes.
type Engine struct {
	Model    *model.Model
	Tok      *tokenizer.Tokenizer
	Pool     *ops.Pool
	Shape    *memplan.Shape
	Weights  *residency.Weights // where each layer is read from; the plan as it stands
	KVBudget *memplan.KVBudget  // the KV memory of the sessions
	Chat     Chat               // the chat template and the vocabulary's end tokens
	Defaults Options            // of new sessions: Load's, with the plan's context, KV type and weights
	Adapters []Adapter          // the LoRA adapters applied, in Options.Adapters' order
	mapping  *mem.Mapping
	span     span // the mapping's addresses, to recognise a fault on it
	log      *slog.Logger
	identity func() (snapshot.Model, error)
	info     Info

	// rw is held for reading by every computation and for writing by
	// Close and by a change of where weights are read from (residency), so
	// neither happens under a running forward pass.
	rw     sync.RWMutex
	closed bool
}

// Load maps the GGUF file at path (or "ollama:NAME[:TAG]", see
// ollama.Path), plans its memory, builds the model and
// its tokenizer, and starts its threads and the residency of its weights.
// Errors wrap model.ErrBadModel (also for a path that is not a regular
// file, or an empty one), model.ErrUnsupportedArch,
// quant.ErrUnsupportedType, memplan.ErrOutOfBudget or
// seq.ErrInvalidOption (a shift keeping the whole context); once ctx is done,
// ctx.Err(): it is checked while the header is parsed, the weights built
// and between the steps.
func Load(ctx context.Context, path string, o Options) (*Engine, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if ctx == nil {
		return nil, fmt.Errorf("llm: load %s: nil context: %w", path, seq.ErrInvalidOption)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	if err := ollamaAdapters(path, &o); err != nil {
		return nil, err
	}
	path, err := modelPath(path)
	if err != nil {
		return nil, err
	}
	mp, err := mem.Map(path)
	if errors.Is(err, mem.ErrNotRegular) || errors.Is(err, mem.ErrEmptyFile) {
		err = fmt.Errorf("%w: %w", err, model.ErrBadModel)
	}
	if err != nil {
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	e, err := loadMapped(ctx, mp, o)
	if err != nil {
		mp.Close()
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	p := e.Plan()
	e.Defaults = o
	e.Defaults.Context, e.Defaults.KVType, e.Defaults.Weights = p.Context, p.KVType, p.Weights
	e.Defaults.KVNoRecent = p.KVNoRecent
	e.info = e.describe()
	if err := seq.CheckShift(o.Shift, o.Keep, p.Context); err != nil {
		e.Close()
		return nil, err
	}
	if o.Draft != nil {
		if err := e.CheckDraft(o.Draft); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// modelPath resolves an "ollama:" reference to its file.
func modelPath(path string) (string, error) {
	file, err := ollama.Path(path)
	if err != nil {
		return "", fmt.Errorf("llm: load %s: %w", path, err)
	}
	return file, nil
}

// PlanFile is the plan Load would make for the file at path (or an
// "ollama:" reference) with o, from its header alone.
func PlanFile(path string, o Options) (memplan.Plan, error) {
	if err := ollamaAdapters(path, &o); err != nil {
		return memplan.Plan{}, err
	}
	path, err := modelPath(path)
	if err != nil {
		return memplan.Plan{}, err
	}
	sh, err := memplan.ReadShape(path)
	if err != nil {
		return memplan.Plan{}, fmt.Errorf("llm: plan %s: %w", path, err)
	}
	afs, err := openAdapters(o.Adapters, &o.Request)
	if err != nil {
		return memplan.Plan{}, err
	}
	closeAdapters(afs)
	return memplan.Make(sh, o.Request)
}

// NewSeq makes a sequence (the body of a session) with the model's
// defaults changed by apply, which sets a session's options; a model whose
// attention is not causal gets a batch as large as the context.
func (e *Engine) NewSeq(apply func(*Settings)) (*seq.Seq, error) {
	o, err := Build(e.Defaults, apply)
	if err != nil {
		return nil, err
	}
	// The draft's sequence is made first, outside this engine's lock,
	// which the draft's (the same engine's, perhaps) takes too.
	dft, err := e.draftSeq(o)
	if err != nil {
		return nil, err
	}
	if err := e.Acquire(); err != nil {
		closeSeq(dft)
		return nil, err
	}
	defer e.Release()
	if e.Model.NonCausal {
		// Its attention sees the whole text: one forward pass, however
		// long (the memory plan counts the batch so, memplan.Shape).
		o.Batch = o.Context
	}
	q, err := seq.New(e.Model, ops.NewExec(e.Pool), e.KVBudget, seq.Config{
		Context: o.Context, Batch: o.Batch, KVType: o.KVType, NoRecent: o.KVNoRecent, Preallocate: o.KVPreallocate,
		Shift: o.Shift, Keep: o.Keep, Logger: o.Logger, Guard: e, Vocab: e.Tok, Draft: dft,
	})
	if err != nil {
		closeSeq(dft)
	}
	return q, err
}

// closeSeq closes q unless it is nil.
func closeSeq(q *seq.Seq) {
	if q != nil {
		q.Close()
	}
}

// loadMapped is load turning a panic into an error: reading the header and
// the norm weights from the mapping faults if the file shrinks meanwhile.
func loadMapped(ctx context.Context, mp *mem.Mapping, o Options) (e *Engine, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, recovered(r, spanOf(mp.Bytes()), o.Logger)
		}
	}()
	return load(ctx, mp, o)
}

// ctxReader reads through r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReader) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

func load(ctx context.Context, mp *mem.Mapping, o Options) (*Engine, error) {
	data := mp.Bytes()
	f, err := gguf.Read(ctxReader{ctx, mp.ReaderAt()}, int64(len(data)))
	if err != nil {
		return nil, err
	}
	sh, err := memplan.ShapeOf(f, int64(len(data)))
	if err != nil {
		return nil, err
	}
	afs, err := openAdapters(o.Adapters, &o.Request)
	if err != nil {
		return nil, err
	}
	defer closeAdapters(afs)
	plan, err := memplan.Make(sh, o.Request)
	if err != nil {
		return nil, err
	}
	if !plan.Fits {
		return nil, fmt.Errorf("%s: %w", plan.Reason, memplan.ErrOutOfBudget)
	}
	for _, step := range plan.Steps {
		o.Logger.Warn("llm: memory plan degraded the request to fit the limit", "step", step,
			"limit", plan.Limit, "source", plan.LimitSource)
	}
	residency.AdviseBeforeLoad(mp, plan)
	mm, err := model.NewContext(ctx, f, data)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Before residency starts: streamed blocks copy the matrices' headers,
	// corrections included.
	adapters, err := attachAdapters(mm, f, afs)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	switch {
	case errors.Is(err, tokenizer.ErrUnsupported):
		return nil, fmt.Errorf("%w: %w", err, model.ErrUnsupportedArch)
	case errors.Is(err, model.ErrBadModel):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %w", err, model.ErrBadModel)
	}
	// model.New checked the token list's length against the embedding's
	// rows; the tokenizer is what was built from it. A token without a row
	// would fail every Eval, a row without a token could be sampled and
	// print nothing: llama.cpp refuses both.
	if tok.Size() != mm.Vocab {
		return nil, fmt.Errorf("model: the tokenizer has %d tokens, but token_embd.weight has %d rows: %w", tok.Size(), mm.Vocab, model.ErrBadModel)
	}
	for _, w := range tok.Warnings() {
		o.Logger.Warn("llm: the vocabulary has a problem llama.cpp tolerates", "problem", w)
	}
	if plan.Context > mm.Context {
		o.Logger.Warn("llm: context size exceeds the model's trained context; quality may degrade past it",
			"context", plan.Context, "trained", mm.Context)
	}
	ch, err := loadChat(f, tok, o.ChatTemplate, o.Logger)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e := &Engine{Model: mm, Tok: tok, Chat: ch, Pool: ops.NewPool(o.Threads), Shape: sh, mapping: mp, span: spanOf(data), log: o.Logger,
		Adapters: adapters}
	e.Weights, err = residency.Start(residency.Config{Mapping: mp, Model: mm, File: f, Shape: sh, Plan: plan,
		Auto: o.Weights == memplan.WeightsAuto, Budget: o.Limit, Readers: o.Readers, OnPressure: o.OnPressure, Logger: o.Logger, Pool: e.Pool})
	if err != nil {
		e.Pool.Close()
		return nil, err
	}
	e.KVBudget = e.Weights.KVBudget()
	e.identity = sync.OnceValues(func() (snapshot.Model, error) { return snapshot.Identify(mm, data) })
	return e, nil
}

// Plan is the memory plan as it stands (residency.Weights.Plan).
func (e *Engine) Plan() memplan.Plan {
	e.rw.RLock()
	defer e.rw.RUnlock()
	return e.Weights.Plan()
}

// Acquire holds the engine open for a computation; Release must follow.
// After Close it fails with seq.ErrClosed.
func (e *Engine) Acquire() error {
	e.rw.RLock()
	if e.closed {
		e.rw.RUnlock()
		return seq.ErrClosed
	}
	return nil
}

// Release ends what Acquire began.
func (e *Engine) Release() { e.rw.RUnlock() }

// Check reports seq.ErrClosed once the engine is closed.
func (e *Engine) Check() error {
	if err := e.Acquire(); err != nil {
		return err
	}
	e.Release()
	return nil
}

// Identity identifies the model in saved sessions (snapshot.Identify),
// computed on first use from the mapped file, with its LoRA adapters and
// their scales now.
func (e *Engine) Identity() (snapshot.Model, error) { return e.identityOf(nil) }

// identityOf is Identity with q's own adapter scales, when it has some
// (seq.(*Seq).LoRAScales), in place of the adapters'.
func (e *Engine) identityOf(q *seq.Seq) (snapshot.Model, error) {
	if err := e.Acquire(); err != nil {
		return snapshot.Model{}, err
	}
	defer e.Release()
	var own []float32
	if q != nil {
		var err error
		if own, err = q.LoRAScales(); err != nil {
			return snapshot.Model{}, err
		}
	}
	id, err := e.identity()
	return e.withAdapters(id, own), err
}

// Close stops the threads and unmaps the file, after waiting for
// computations in progress. It is safe to call twice.
func (e *Engine) Close() error {
	e.Weights.StopWatch()
	e.rw.Lock()
	defer e.rw.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.Pool.Close()
	return errors.Join(e.Weights.Close(), e.mapping.Close())
}
