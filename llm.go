package llm

import (
	"errors"
	"fmt"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/tokenizer"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/sampler"
)

// Errors callers can branch on with errors.Is. Every error the package
// returns wraps one of these or says plainly what went wrong.
var (
	// ErrBadModel: the file is not a valid GGUF model (truncated, corrupt,
	// inconsistent metadata, missing tensors).
	ErrBadModel = model.ErrBadModel
	// ErrUnsupportedArch: a valid GGUF file of an architecture (or rope
	// scaling, layer kind, or tokenizer) this library does not run.
	ErrUnsupportedArch = model.ErrUnsupportedArch
	// ErrUnsupportedType: a tensor type (e.g. IQ2_XXS) this library has no
	// kernels for.
	ErrUnsupportedType = quant.ErrUnsupportedType
	// ErrContextFull: the tokens do not fit in the session's context.
	ErrContextFull = kv.ErrFull
	// ErrInvalidOption: an option value is out of range or not supported.
	ErrInvalidOption = sampler.ErrInvalidOption
	// ErrClosed: the model or session was closed.
	ErrClosed = errors.New("llm: closed")
	// ErrBadToken: a token id outside the vocabulary.
	ErrBadToken = model.ErrTokenOutOfRange
)

// Model is a loaded GGUF model: weights mapped read-only from the file,
// the tokenizer, and the thread pool. It is immutable and safe to share
// between goroutines; each goroutine works through its own Session.
type Model struct {
	m       *model.Model
	tok     *tokenizer.Tokenizer
	mapping *mem.Mapping
	pool    *ops.Pool
	set     settings
	info    Info
	plan    MemoryPlan
	ws      weightState      // streaming weights, pressure watcher (stream.go)
	kvAcct  kvAccount        // KV memory of the sessions (kvgrow.go)
	fp      modelFingerprint // identifies the model in saved sessions (session_state.go)

	// rw is held for reading by every computation and for writing by
	// Close, so the file is never unmapped under a running session.
	rw     sync.RWMutex
	closed bool
}

// Info describes a loaded model.
type Info struct {
	Architecture  string // general.architecture, e.g. "llama"
	Name          string // general.name, if the file has one
	FileType      string // dominant weight type, e.g. "Q4_K"
	Parameters    int64  // number of weights
	FileBytes     int64  // size of the GGUF file
	ContextLength int    // context the model was trained with
	Context       int    // default context of new sessions
	VocabSize     int
	Layers        int
	Embedding     int
	Heads         int
	HeadsKV       int
	Threads       int
}

func buildSettings(opts []Option) (settings, error) {
	s := defaultSettings()
	for _, o := range opts {
		if o != nil {
			o.applyModel(&s)
		}
	}
	return s, errors.Join(s.errs...)
}

// Load maps a GGUF file and prepares it to run. Nothing is copied: weights
// are read in place from the mapping. Errors wrap ErrBadModel,
// ErrUnsupportedArch, ErrUnsupportedType or ErrInvalidOption.
func Load(path string, opts ...Option) (*Model, error) {
	set, err := buildSettings(opts)
	if err != nil {
		return nil, err
	}
	mp, err := mem.Map(path)
	if err != nil {
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	m, err := load(mp, set)
	if err != nil {
		mp.Close()
		return nil, fmt.Errorf("llm: load %s: %w", path, err)
	}
	return m, nil
}

func load(mp *mem.Mapping, set settings) (*Model, error) {
	data := mp.Bytes()
	f, err := gguf.Read(mp.ReaderAt(), int64(len(data)))
	if err != nil {
		return nil, err
	}
	sh, err := shapeOf(f, int64(len(data)))
	if err != nil {
		return nil, err
	}
	plan, err := planFor(sh, set)
	if err != nil {
		return nil, err
	}
	if !plan.Fits {
		return nil, fmt.Errorf("%s: %w", plan.Reason, ErrOutOfMemoryBudget)
	}
	for _, step := range plan.Steps {
		set.logger.Warn("llm: memory plan degraded the request to fit the limit", "step", step,
			"limit", plan.Limit, "source", plan.LimitSource)
	}
	autoWeights := set.weights == WeightsAuto
	set.context, set.kvType, set.weights = plan.Context, plan.KVType, plan.Weights
	adviseBeforeNew(mp, plan)
	mm, err := model.New(f, data)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	switch {
	case errors.Is(err, tokenizer.ErrUnsupported):
		return nil, fmt.Errorf("%w: %w", err, ErrUnsupportedArch)
	case errors.Is(err, ErrBadModel):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %w", err, ErrBadModel)
	}
	// A token without an embedding row could come out of Tokenize and then
	// fail every Eval; rows without a token (padding) are harmless.
	if tok.Size() > mm.Vocab {
		return nil, fmt.Errorf("model: tokenizer.ggml.tokens has %d tokens, but token_embd.weight has only %d rows: %w", tok.Size(), mm.Vocab, ErrBadModel)
	}
	if tok.Size() != mm.Vocab {
		set.logger.Warn("llm: tokenizer and embedding disagree on vocabulary size", "tokenizer", tok.Size(), "embedding", mm.Vocab)
	}
	if set.context == 0 {
		set.context = mm.Context
	}
	if set.context > mm.Context {
		set.logger.Warn("llm: context size exceeds the model's trained context; quality may degrade past it",
			"context", set.context, "trained", mm.Context)
	}
	m := &Model{m: mm, tok: tok, mapping: mp, set: set, plan: plan}
	m.ws.autoWeights = autoWeights
	m.info = Info{
		Architecture: mm.Arch, Name: mm.Name, FileType: dominantType(f).String(),
		Parameters: paramCount(f), FileBytes: int64(len(data)),
		ContextLength: mm.Context, Context: set.context, VocabSize: mm.Vocab,
		Layers: mm.Config.Layers, Embedding: mm.Embd, Heads: mm.Heads, HeadsKV: mm.HeadsKV,
		Threads: set.threads,
	}
	m.pool = ops.NewPool(set.threads)
	if err := m.setupWeights(f, sh); err != nil {
		m.pool.Close()
		return nil, err
	}
	m.startWatch()
	return m, nil
}

func paramCount(f *gguf.File) int64 {
	var n int64
	for _, t := range f.Tensors {
		p := int64(1)
		for _, d := range t.Dims {
			p *= d
		}
		n += p
	}
	return n
}

// dominantType is the type holding the most bytes among 2-D tensors.
func dominantType(f *gguf.File) quant.Type {
	by := map[quant.Type]int64{}
	for _, t := range f.Tensors {
		if len(t.Dims) == 2 {
			by[t.Type] += t.Size
		}
	}
	best, bestN := quant.F32, int64(-1)
	for t, n := range by {
		if n > bestN || (n == bestN && t < best) {
			best, bestN = t, n
		}
	}
	return best
}

// Info describes the model.
func (m *Model) Info() Info { return m.info }

// Plan is the memory plan Load made: the predicted bytes of the model and
// one session, and the configuration chosen to fit the limit.
func (m *Model) Plan() MemoryPlan {
	m.rw.RLock()
	defer m.rw.RUnlock()
	return m.plan
}

// Tokenize converts text to token ids, adding the beginning-of-sequence
// token when the model asks for it. Special-token text in the input is
// treated as plain text.
func (m *Model) Tokenize(text string) ([]int32, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	return m.tok.Encode(text, true), nil
}

// TokenizeSpecial is Tokenize, except that special-token text such as
// "<|im_start|>" in the input becomes the special token (for chat templates).
func (m *Model) TokenizeSpecial(text string) ([]int32, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	return m.tok.EncodeSpecial(text, true), nil
}

// Detokenize converts token ids back to text. Control tokens (BOS, EOS)
// produce no text; an id outside the vocabulary is an error wrapping
// ErrBadToken.
func (m *Model) Detokenize(ids []int32) (string, error) {
	if err := m.check(); err != nil {
		return "", err
	}
	// The model's vocabulary is its embedding rows; rows past the
	// tokenizer's tokens (padding) are valid and have no text.
	for _, id := range ids {
		if id < 0 || int(id) >= m.m.Vocab {
			return "", fmt.Errorf("llm: detokenize: token %d not in vocabulary of %d: %w", id, m.m.Vocab, ErrBadToken)
		}
	}
	return m.tok.Decode(ids), nil
}

// TokenText is the text of one token as it appears in generated output
// (special tokens give their literal text, e.g. "</s>").
func (m *Model) TokenText(id int32) string { return string(m.tok.Piece(id)) }

// BOS and EOS are the model's beginning- and end-of-sequence tokens.
func (m *Model) BOS() int32 { return m.tok.BOS() }

// EOS is the model's end-of-sequence token.
func (m *Model) EOS() int32 { return m.tok.EOS() }

// IsEndOfGeneration reports whether generation stops at token id (EOS,
// end-of-turn and similar tokens).
func (m *Model) IsEndOfGeneration(id int32) bool { return m.tok.IsEOG(id) }

func (m *Model) check() error {
	m.rw.RLock()
	defer m.rw.RUnlock()
	if m.closed {
		return ErrClosed
	}
	return nil
}

// acquire holds the model open for a computation; release must follow.
func (m *Model) acquire() error {
	m.rw.RLock()
	if m.closed {
		m.rw.RUnlock()
		return ErrClosed
	}
	return nil
}

func (m *Model) release() { m.rw.RUnlock() }

// Close stops the model's threads and unmaps the file, after waiting for
// computations in progress. Sessions of the model return ErrClosed after it.
func (m *Model) Close() error {
	m.stopWatch()
	m.rw.Lock()
	defer m.rw.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	m.pool.Close()
	return errors.Join(m.closeWeights(), m.mapping.Close())
}
