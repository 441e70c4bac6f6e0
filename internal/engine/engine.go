package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/internal/tokenizer"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/residency"
)

// Options is what Load is asked for.
type Options struct {
	memplan.Request // the configuration wanted, and the memory limit
	Logger          *slog.Logger
	OnPressure      func(residency.PressureEvent) // see residency.Config
	ChatTemplate    string                        // overrides tokenizer.chat_template
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
	mapping  *mem.Mapping
	identity func() (snapshot.Model, error)

	// rw is held for reading by every computation and for writing by
	// Close and by a change of where weights are read from (residency), so
	// neither happens under a running forward pass.
	rw     sync.RWMutex
	closed bool
}

// Load maps the GGUF file at path, plans its memory, builds the model and
// its tokenizer, and starts its threads and the residency of its weights.
// Errors wrap model.ErrBadModel, model.ErrUnsupportedArch,
// quant.ErrUnsupportedType or memplan.ErrOutOfBudget.
func Load(path string, o Options) (*Engine, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	mp, err := mem.Map(path)
	if err != nil {
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	e, err := load(mp, o)
	if err != nil {
		mp.Close()
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	return e, nil
}

func load(mp *mem.Mapping, o Options) (*Engine, error) {
	data := mp.Bytes()
	f, err := gguf.Read(mp.ReaderAt(), int64(len(data)))
	if err != nil {
		return nil, err
	}
	sh, err := memplan.ShapeOf(f, int64(len(data)))
	if err != nil {
		return nil, err
	}
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
	mm, err := model.New(f, data)
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
	// A token without an embedding row could come out of Tokenize and then
	// fail every Eval; rows without a token (padding) are harmless.
	if tok.Size() > mm.Vocab {
		return nil, fmt.Errorf("model: tokenizer.ggml.tokens has %d tokens, but token_embd.weight has only %d rows: %w", tok.Size(), mm.Vocab, model.ErrBadModel)
	}
	if tok.Size() != mm.Vocab {
		o.Logger.Warn("llm: tokenizer and embedding disagree on vocabulary size", "tokenizer", tok.Size(), "embedding", mm.Vocab)
	}
	if plan.Context > mm.Context {
		o.Logger.Warn("llm: context size exceeds the model's trained context; quality may degrade past it",
			"context", plan.Context, "trained", mm.Context)
	}
	ch, err := loadChat(f, tok, o.ChatTemplate, o.Logger)
	if err != nil {
		return nil, err
	}
	e := &Engine{Model: mm, Tok: tok, Chat: ch, Pool: ops.NewPool(o.Threads), Shape: sh, mapping: mp}
	e.Weights, err = residency.Start(residency.Config{Mapping: mp, Model: mm, File: f, Shape: sh, Plan: plan,
		Auto: o.Weights == memplan.WeightsAuto, Budget: o.Limit, OnPressure: o.OnPressure, Logger: o.Logger, Exclusive: &e.rw})
	if err != nil {
		e.Pool.Close()
		return nil, err
	}
	e.KVBudget = memplan.NewKVBudget(plan.KVLimit(), e.Weights.Short)
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
// computed on first use from the mapped file.
func (e *Engine) Identity() (snapshot.Model, error) {
	if err := e.Acquire(); err != nil {
		return snapshot.Model{}, err
	}
	defer e.Release()
	return e.identity()
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
