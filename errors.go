package llm

import (
	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// Errors callers can branch on with errors.Is: each is the value of the
// package that finds the problem, so errors.Is matches errors made below.
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
	// ErrContextFull: the tokens do not fit in the session's context.
	ErrContextFull = kv.ErrFull
	// ErrInvalidOption: an option or argument is out of range or not
	// supported. A sampling option the sampler refuses matches both this
	// and sampler.ErrInvalidOption.
	ErrInvalidOption = seq.ErrInvalidOption
	// ErrOutOfMemoryBudget: the model cannot run within the memory limit
	// after every degradation allowed (Plan says why in MemoryPlan.Reason),
	// or a session's KV cache cannot be reserved; it says what would fit.
	ErrOutOfMemoryBudget = memplan.ErrOutOfBudget
	// ErrBadState: Restore was given a damaged or truncated stream, or one
	// saved by another model or with another KV type.
	ErrBadState = snapshot.ErrBadState
	// ErrClosed: the model or session was closed.
	ErrClosed = seq.ErrClosed
	// ErrBusy: a call on a session while another runs on it (on another
	// goroutine, or inside a Stream loop over it); nothing was changed.
	ErrBusy = seq.ErrBusy
	// ErrInternal: a bug in this library, a panic (in any thread) caught at
	// the API with its stack; the process keeps running. Please report it.
	ErrInternal = engine.ErrInternal
	// ErrBadToken: a token id outside the vocabulary.
	ErrBadToken = model.ErrTokenOutOfRange
	// ErrBadAdapter: a LoRA adapter file (WithLoRA) that is malformed or
	// does not fit the model: another architecture, a tensor the model
	// does not have, shapes that do not match, a lora_a without its lora_b.
	ErrBadAdapter = model.ErrBadAdapter
	// ErrNoChatTemplate: Chat on a model whose file has no chat template
	// and was given none with WithChatTemplate.
	ErrNoChatTemplate = chat.ErrNoTemplate
)
