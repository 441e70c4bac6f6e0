package llm

import (
	"context"
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/tokenizer"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/residency"
)

// Model is a loaded GGUF model: weights mapped read-only from the file,
// the tokenizer and the thread pool; share it between goroutines, each
// with its own Session. Its weights never change, but blocks that no
// longer fit beside the sessions' KV caches (or under pressure) are read
// from disk until the caches shrink (Residency reports which), and its
// LoRA adapters' scales change with SetLoRAScale.
type Model struct {
	e *engine.Engine
}

// Info describes a loaded model: Architecture, Name, FileType,
// Parameters, FileBytes; ContextLength (trained) and Context (new
// sessions' default); VocabSize, Layers, Embedding, Heads, HeadsKV;
// Threads; ChatTemplate, BOSText/EOSText, AddBOS/AddEOS and EOG (the
// end-of-generation tokens) as chat uses them; EmbeddingOnly; FIM (the
// fill-in-the-middle tokens); Kernels (per weight type, for this CPU).
// Each field's comment is on engine.Info.
type Info = engine.Info

// FIMTokens are a vocabulary's fill-in-the-middle token ids, -1 when
// absent: Pre, Suf, Mid, Pad, Rep (repository) and Sep (file separator).
type FIMTokens = tokenizer.FIM

// Load maps a GGUF file, weights read in place, and prepares it to run.
// path is a file, or "ollama:NAME[:TAG]" for a model a local Ollama has
// pulled ($OLLAMA_MODELS or ~/.ollama/models). Errors wrap ErrBadModel,
// ErrUnsupportedArch, ErrUnsupportedType, ErrInvalidOption or
// ErrOutOfMemoryBudget (or the ollama package's).
func Load(path string, opts ...Option) (*Model, error) {
	return LoadContext(context.Background(), path, opts...)
}

// LoadContext is Load giving up, with an error wrapping ctx.Err(), once
// ctx is done (checked while parsing and building the weights).
func LoadContext(ctx context.Context, path string, opts ...Option) (m *Model, err error) {
	defer engine.Catch(&err, debug.SetPanicOnFault(true))
	o, err := loadOptions(opts)
	if err != nil {
		return nil, err
	}
	e, err := engine.Load(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return &Model{e: e}, nil
}

var (
	// ErrBadModel: the file is not a valid GGUF model (truncated, corrupt,
	// inconsistent metadata, missing tensors).
	ErrBadModel = model.ErrBadModel
	// ErrUnsupportedArch: a valid GGUF file of an architecture (or rope
	// scaling, layer kind, or tokenizer) this library does not run; also
	// generation on an embedding-only model (Info.EmbeddingOnly).
	ErrUnsupportedArch = model.ErrUnsupportedArch
	// ErrUnsupportedType: a tensor type this library has no kernels for
	// (F64, I32 as a weight, a type newer than the library).
	ErrUnsupportedType = quant.ErrUnsupportedType
	// ErrOutOfMemoryBudget: the model cannot run within the memory limit
	// after every degradation allowed (Plan says why in MemoryPlan.Reason),
	// or a session's KV cache cannot be reserved; it says what would fit.
	ErrOutOfMemoryBudget = memplan.ErrOutOfBudget
)

func loadOptions(opts []Option) (engine.Options, error) {
	return engine.Build(engine.DefaultOptions(), func(s *engine.Settings) {
		for _, o := range opts {
			if o != nil {
				o.applyModel(s)
			}
		}
	})
}

// Plan predicts, from the file's header alone, the memory a model and one
// session will use with these options and the configuration Load would
// choose; one that does not fit has Fits false (and a nil error), where
// Load would return ErrOutOfMemoryBudget.
func Plan(path string, opts ...Option) (_ MemoryPlan, err error) {
	defer engine.Catch(&err, debug.SetPanicOnFault(true))
	o, err := loadOptions(opts)
	if err != nil {
		return MemoryPlan{}, err
	}
	return engine.PlanFile(path, o)
}

// MemoryPlan is the memory a model and one session will use, predicted
// from the GGUF metadata alone, and the configuration chosen to fit the
// limit; String formats it as a table.
type MemoryPlan = memplan.Plan

// Component is one part of a MemoryPlan: a name, its bytes, and a note.
type Component = memplan.Component

// Info describes the model.
func (m *Model) Info() Info { defer m.engine().Absorb(); return m.e.Info() }

// Plan is the memory plan Load made; its weights mode and steps change
// when memory pressure makes the model read weights from disk.
func (m *Model) Plan() MemoryPlan { defer m.engine().Absorb(); return m.e.Plan() }

// ResidencyStats says where a model's blocks are now and what reading them
// from disk has cost since Load (see residency.Stats).
type ResidencyStats = residency.Stats

// Residency reports which of the model's blocks are read from disk now
// (they move as the sessions' KV caches grow and shrink, and under memory
// pressure), and the bytes read and the time passes waited for them.
func (m *Model) Residency() ResidencyStats { defer m.engine().Absorb(); return m.e.Weights.Stats() }

// Tokenize converts text to token ids, adding the beginning-of-sequence
// token when the model asks for it. Special-token text in the input is
// treated as plain text.
func (m *Model) Tokenize(text string) (_ []int32, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	return m.e.Tokenize(text, false)
}

// TokenizeSpecial is Tokenize, except that special-token text such as
// "<|im_start|>" in the input becomes the special token (for chat templates).
func (m *Model) TokenizeSpecial(text string) (_ []int32, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	return m.e.Tokenize(text, true)
}

// Detokenize converts token ids back to text. Control tokens (BOS, EOS)
// produce no text; an id outside the vocabulary is an error wrapping
// ErrBadToken.
func (m *Model) Detokenize(ids []int32) (_ string, err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	return m.e.Detokenize(ids)
}

// TokenText is the text of one token as it appears in generated output
// (special tokens give their literal text, e.g. "</s>").
func (m *Model) TokenText(id int32) string {
	defer m.engine().Absorb()
	return string(m.e.Tok.Piece(id))
}

// BOS is the model's beginning-of-sequence token.
func (m *Model) BOS() int32 { defer m.engine().Absorb(); return m.e.Tok.BOS() }

// EOS is the model's end-of-sequence token.
func (m *Model) EOS() int32 { defer m.engine().Absorb(); return m.e.Tok.EOS() }

// IsEndOfGeneration reports whether generation stops at token id (EOS,
// end-of-turn and similar tokens).
func (m *Model) IsEndOfGeneration(id int32) bool { defer m.engine().Absorb(); return m.e.Tok.IsEOG(id) }

// Close stops the model's threads and unmaps the file after any forward
// pass running; calls on its sessions then end with ErrClosed (their
// memory needs Session.Close). It may be called again.
func (m *Model) Close() (err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	return m.e.Close()
}
