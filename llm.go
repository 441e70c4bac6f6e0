package llm

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/ollama"
)

// Model is a loaded GGUF model: weights mapped read-only from the file,
// the tokenizer, and the thread pool. It is safe to share between
// goroutines; each goroutine works through its own Session. Its weights
// and vocabulary never change, but where the weights are read from may:
// under memory pressure a model whose weights the plan kept resident
// starts reading half of its layers from disk, which Plan then reports.
type Model struct {
	e    *engine.Engine
	set  settings // the defaults of new sessions
	info Info
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

	// ChatTemplate is the Jinja chat template Session.Chat renders with:
	// WithChatTemplate's, else the file's tokenizer.chat_template; "" when
	// there is none.
	ChatTemplate string
	// BOSText and EOSText are the texts of the BOS and EOS tokens, which
	// templates print as bos_token and eos_token ("" when there is none).
	BOSText, EOSText string
	// AddBOS and AddEOS say whether tokenizing adds BOS (EOS) itself, so
	// that a rendered prompt's own leading BOS text is dropped
	// (RenderOptions.StripBOS), as llama.cpp does.
	AddBOS, AddEOS bool
	// EOG lists every end-of-generation token (EOS, end of turn, end of
	// message …), ascending: generation stops at any of them.
	EOG []int32
}

// Load maps a GGUF file and prepares it to run. Nothing is copied: weights
// are read in place from the mapping. path is a file, or
// "ollama:NAME[:TAG]" for a model a local Ollama has downloaded (its
// store is $OLLAMA_MODELS or ~/.ollama/models; errors wrap the ollama
// package's). Errors wrap ErrBadModel, ErrUnsupportedArch,
// ErrUnsupportedType, ErrInvalidOption or ErrOutOfMemoryBudget.
func Load(path string, opts ...Option) (*Model, error) {
	set, err := loadSettings(opts)
	if err != nil {
		return nil, err
	}
	if path, err = modelPath(path); err != nil {
		return nil, err
	}
	e, err := engine.Load(path, engine.Options{Request: set.Request, Logger: set.logger, OnPressure: set.pressure,
		ChatTemplate: set.chatTemplate})
	if err != nil {
		return nil, err
	}
	p, mm, ch := e.Plan(), e.Model, e.Chat
	set.Context, set.KVType, set.Weights = p.Context, p.KVType, p.Weights
	info := Info{
		Architecture: mm.Arch, Name: mm.Name, FileType: e.Shape.FileType.String(),
		Parameters: e.Shape.Params, FileBytes: e.Shape.FileBytes,
		ContextLength: mm.Context, Context: p.Context, VocabSize: mm.Vocab,
		Layers: mm.Config.Layers, Embedding: mm.Embd, Heads: mm.Heads, HeadsKV: mm.HeadsKV,
		Threads: set.Threads, BOSText: ch.Render.BOSToken, EOSText: ch.Render.EOSToken,
		AddBOS: ch.Render.StripBOS, AddEOS: ch.Render.StripEOS, EOG: ch.EOG,
	}
	if ch.Template != nil {
		info.ChatTemplate = ch.Template.Source()
	}
	return &Model{e: e, set: set, info: info}, nil
}

// modelPath resolves an "ollama:" reference to its file.
func modelPath(path string) (string, error) {
	file, err := ollama.Path(path)
	if err != nil {
		return "", fmt.Errorf("llm: load %s: %w", path, err)
	}
	return file, nil
}

func loadSettings(opts []Option) (settings, error) {
	return buildSettings(defaultSettings(), func(s *settings) {
		for _, o := range opts {
			if o != nil {
				o.applyModel(s)
			}
		}
	})
}

// Plan predicts the memory a model and one session will use with these
// options, and the configuration Load would choose, without loading the
// weights (only the file's header is read). A plan that does not fit is
// returned with Fits false and a nil error; Load would return
// ErrOutOfMemoryBudget for it.
func Plan(path string, opts ...Option) (MemoryPlan, error) {
	set, err := loadSettings(opts)
	if err != nil {
		return MemoryPlan{}, err
	}
	if path, err = modelPath(path); err != nil {
		return MemoryPlan{}, err
	}
	sh, err := memplan.ReadShape(path)
	if err != nil {
		return MemoryPlan{}, fmt.Errorf("llm: plan %s: %w", path, err)
	}
	return memplan.Make(sh, set.Request)
}

// MemoryPlan is the memory a model and one session will use, predicted
// from the GGUF metadata alone, and the configuration chosen to fit the
// limit; String formats it as a table.
type MemoryPlan = memplan.Plan

// Component is one part of a MemoryPlan: a name, its bytes, and a note.
type Component = memplan.Component

// Info describes the model.
func (m *Model) Info() Info {
	i := m.info
	i.EOG = slices.Clone(i.EOG)
	return i
}

// Plan is the memory plan Load made: the predicted bytes of the model and
// one session, and the configuration chosen to fit the limit. Its weights
// mode and steps change when memory pressure makes the model read weights
// from disk.
func (m *Model) Plan() MemoryPlan { return m.e.Plan() }

// Tokenize converts text to token ids, adding the beginning-of-sequence
// token when the model asks for it. Special-token text in the input is
// treated as plain text.
func (m *Model) Tokenize(text string) ([]int32, error) {
	if err := m.e.Check(); err != nil {
		return nil, err
	}
	return m.e.Tok.Encode(text, true), nil
}

// TokenizeSpecial is Tokenize, except that special-token text such as
// "<|im_start|>" in the input becomes the special token (for chat templates).
func (m *Model) TokenizeSpecial(text string) ([]int32, error) {
	if err := m.e.Check(); err != nil {
		return nil, err
	}
	return m.e.Tok.EncodeSpecial(text, true), nil
}

// Detokenize converts token ids back to text. Control tokens (BOS, EOS)
// produce no text; an id outside the vocabulary is an error wrapping
// ErrBadToken.
func (m *Model) Detokenize(ids []int32) (string, error) {
	if err := m.e.Check(); err != nil {
		return "", err
	}
	// The model's vocabulary is its embedding rows; rows past the
	// tokenizer's tokens (padding) are valid and have no text.
	for _, id := range ids {
		if id < 0 || int(id) >= m.e.Model.Vocab {
			return "", fmt.Errorf("llm: detokenize: token %d not in vocabulary of %d: %w", id, m.e.Model.Vocab, ErrBadToken)
		}
	}
	return m.e.Tok.Decode(ids), nil
}

// TokenText is the text of one token as it appears in generated output
// (special tokens give their literal text, e.g. "</s>").
func (m *Model) TokenText(id int32) string { return string(m.e.Tok.Piece(id)) }

// BOS is the model's beginning-of-sequence token.
func (m *Model) BOS() int32 { return m.e.Tok.BOS() }

// EOS is the model's end-of-sequence token.
func (m *Model) EOS() int32 { return m.e.Tok.EOS() }

// IsEndOfGeneration reports whether generation stops at token id (EOS,
// end-of-turn and similar tokens).
func (m *Model) IsEndOfGeneration(id int32) bool { return m.e.Tok.IsEOG(id) }

// Close stops the model's threads and unmaps the file, after waiting for
// computations in progress. Sessions of the model return ErrClosed after it.
func (m *Model) Close() error { return m.e.Close() }
