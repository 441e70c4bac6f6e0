package engine

import (
	"slices"

	"github.com/lowmem/llm/internal/tokenizer"
)

// Info describes a loaded model (llm.Info).
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

	// ChatTemplate is the Jinja template Session.Chat renders with
	// (WithChatTemplate's, else the file's; "" when none).
	ChatTemplate string
	// BOSText and EOSText are the texts templates print as bos_token and
	// eos_token ("" when there is none).
	BOSText, EOSText string
	// AddBOS and AddEOS say whether tokenizing adds BOS (EOS) itself, so a
	// rendered prompt's own BOS text is dropped (RenderOptions.StripBOS).
	AddBOS, AddEOS bool
	// EOG lists every end-of-generation token (EOS, end of turn …),
	// ascending: generation stops at any of them.
	EOG []int32
	// EmbeddingOnly: no output head (a BERT-style encoder), so Eval,
	// Generate, Chat and Complete fail with ErrUnsupportedArch.
	EmbeddingOnly bool
	// FIM are the vocabulary's fill-in-the-middle tokens (what a code
	// completion prompt is built around), -1 where it has none.
	FIM tokenizer.FIM
	// Kernels names the kernel chosen for this CPU per weight type, e.g.
	// "Q4_0=avx512vnni-row-nta Q6_K=avx512vnni-rowdot" (LLM_KERNELS
	// overrides the choice; LLM_CPU caps the instruction set).
	Kernels string
}

// Info describes the model as Load made it; the caller owns the result.
func (e *Engine) Info() Info {
	i := e.info
	i.EOG = slices.Clone(i.EOG)
	return i
}

// describe is Info, made once at Load.
func (e *Engine) describe() Info {
	mm, ch := e.Model, e.Chat
	i := Info{
		Architecture: mm.Arch, Name: mm.Name, FileType: e.Shape.FileType.String(),
		Parameters: e.Shape.Params, FileBytes: e.Shape.FileBytes,
		ContextLength: mm.Context, Context: e.Defaults.Context, VocabSize: mm.Vocab,
		Layers: mm.Config.Layers, Embedding: mm.Embd, Heads: mm.Heads, HeadsKV: mm.HeadsKV,
		Threads: e.Defaults.Threads, BOSText: ch.Render.BOSToken, EOSText: ch.Render.EOSToken,
		AddBOS: ch.Render.StripBOS, AddEOS: ch.Render.StripEOS, EOG: slices.Clone(ch.EOG),
		Kernels: e.Kernels(), EmbeddingOnly: mm.Generative() != nil, FIM: e.Tok.FIM(),
	}
	if ch.Template != nil {
		i.ChatTemplate = ch.Template.Source()
	}
	return i
}
