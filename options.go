package llm

import (
	"encoding/json"
	"log/slog"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/residency"
)

// ErrInvalidOption: an option or argument is out of range or not
// supported. A sampling option the sampler refuses matches both this and
// sampler.ErrInvalidOption.
var ErrInvalidOption = seq.ErrInvalidOption

// KVType is the element type of a session's KV cache.
type KVType = kv.Type

// KV cache element types: KVF16 (llama.cpp's default); KVInt8, half of it
// at a small cost in accuracy; KVInt4, llama.cpp's q4_0 of rotated keys
// and values (28% of F16, the newest 128 and first 16 positions also in
// F16), for head sizes that are multiples of 32.
const (
	KVF16  KVType = kv.F16
	KVInt8 KVType = kv.Int8
	KVInt4 KVType = kv.Int4
)

// Option configures Load.
type Option interface {
	applyModel(*engine.Settings)
}

// SessionOption configures NewSession, overriding what Load was given.
type SessionOption interface {
	applySession(*engine.Settings)
}

// ModelSessionOption is an option for Load and NewSession alike: given to
// Load it sets the default for every session of the model.
type ModelSessionOption interface {
	Option
	SessionOption
}

type bothOption func(*engine.Settings)

func (f bothOption) applyModel(s *engine.Settings)   { f(s) }
func (f bothOption) applySession(s *engine.Settings) { f(s) }

type modelOption func(*engine.Settings)

func (f modelOption) applyModel(s *engine.Settings) { f(s) }

// WithContextSize sets the context length in tokens: the most tokens a
// session can hold. The default is the model's trained context length. A
// larger value than the model was trained for is allowed and logged.
func WithContextSize(n int) ModelSessionOption {
	return bothOption(func(s *engine.Settings) { s.SetInt(&s.Context, "context size", n, 1, 1<<24) })
}

// WithKVType sets the KV cache element type (KVF16 by default). KVInt4
// needs head sizes that are multiples of 32; NewSession refuses it for
// other models.
func WithKVType(t KVType) ModelSessionOption {
	return bothOption(func(s *engine.Settings) { s.SetKVType(t) })
}

// WithBatchSize sets how many prompt tokens are processed per forward pass
// (default 512). Activation memory grows with it; prompts longer than it
// are processed in chunks.
func WithBatchSize(n int) ModelSessionOption {
	return bothOption(func(s *engine.Settings) { s.SetInt(&s.Batch, "batch size", n, 1, 1<<16) })
}

// WithKVPreallocate makes each session reserve and touch its whole
// context's KV cache at NewSession (failing there with
// ErrOutOfMemoryBudget, not mid-generation, when it does not fit), instead
// of starting with 256 cells and growing on demand.
func WithKVPreallocate() ModelSessionOption {
	return bothOption(func(s *engine.Settings) { s.KVPreallocate = true })
}

// WithContextShift lets sessions go on past a full context (or a KV cache
// the memory budget stops growing) instead of failing with ErrContextFull,
// as llama.cpp's context shift does: the session keeps its first keep
// tokens (a system prompt), drops the older half of the rest, and moves
// and re-rotates the kept keys and values rather than recomputing them.
// keep must be less than the context size (else ErrInvalidOption); a long
// prompt is evaluated in pieces of at most context−keep tokens.
func WithContextShift(keep int) ModelSessionOption {
	return bothOption(func(s *engine.Settings) { s.SetShift(keep) })
}

// WithDraftModel gives sessions a draft model for speculative decoding
// (llama-server's --model-draft): a small model of the same vocabulary
// (as llama.cpp checks it; else ErrInvalidOption naming the first
// difference) drafts the next tokens greedily and the session's model
// verifies them in one pass, output exactly as without. Each session
// owns a draft session as long as its context (or the draft's default
// context, if shorter), whose KV cache and scratch the draft's own Load
// plans and its memory limit bounds: load d with WithSessions and a
// WithMemoryLimit of its own. Models with conv or recurrent layers,
// either one, are refused. nil turns it off; WithDrafting tunes it.
func WithDraftModel(d *Model) ModelSessionOption {
	return bothOption(func(s *engine.Settings) { s.Draft = d.engine() })
}

// WithThreads sets how many threads compute (default: GOMAXPROCS, which
// follows the cgroup CPU quota). The threads are created once, at Load.
func WithThreads(n int) Option {
	return modelOption(func(s *engine.Settings) { s.SetInt(&s.Threads, "threads", n, 1, 1024) })
}

// WithMemoryLimit sets the memory budget in bytes that Load plans against.
// 0 (the default) detects it from the cgroup and /proc/meminfo.
func WithMemoryLimit(bytes int64) Option {
	return modelOption(func(s *engine.Settings) { s.SetLimit(bytes) })
}

// WeightsMode is how the model's weights are kept in memory: WeightsAuto
// (the plan chooses), WeightsResident or WeightsStreaming.
type WeightsMode = memplan.WeightsMode

// Weights modes (see memplan.WeightsMode for what each does).
const (
	WeightsAuto      WeightsMode = memplan.WeightsAuto
	WeightsResident  WeightsMode = memplan.WeightsResident
	WeightsStreaming WeightsMode = memplan.WeightsStreaming
)

// WithWeights chooses how weights are kept (default WeightsAuto: blocks
// resident while they fit beside the KV caches, else read from disk;
// WeightsStreaming plans so even when all would fit; WeightsResident
// shortens the context instead).
func WithWeights(w WeightsMode) Option {
	return modelOption(func(s *engine.Settings) { s.SetWeights(w) })
}

// WithRepack lets the plan hold weight matrices repacked at load, eight
// rows interleaved, which runs faster (default true; the types and CPUs:
// quant.X8; the lattice types IQ2_XXS … IQ1_M take 1.5–2.9× their bytes
// so, the others at most 1.25×). It repacks only when, repacked, every
// block stays resident at the full context (MemoryPlan.Repacked; a
// streamed MoE's expert cache: RepackExperts), moving each matrix out of
// the mapping; the blocks then stay in memory for the model's life,
// whatever the pressure. false keeps the file's layout, blocks movable.
func WithRepack(on bool) Option {
	return modelOption(func(s *engine.Settings) { s.Repack = on })
}

// WithDiskReads sets how many weight reads from disk are in flight at once
// (default 4): more for deep-queue disks (NVMe), fewer for an SD card.
func WithDiskReads(n int) Option {
	return modelOption(func(s *engine.Settings) { s.SetInt(&s.Readers, "disk reads", n, 1, 64) })
}

// WithStrictMemory makes Load refuse with ErrOutOfMemoryBudget instead of
// degrading (INT8 or INT4 KV, shorter context, streaming) to fit the limit.
func WithStrictMemory() Option {
	return modelOption(func(s *engine.Settings) { s.Strict = true })
}

// PressureEvent reports memory running short or recovering (see
// WithMemoryPressure): the headroom, the limit and what the model did.
type PressureEvent = residency.PressureEvent

// WithMemoryPressure calls fn when headroom falls below the larger of 5%
// of the limit and 64 MiB or memory stalls (cgroup v2 memory.pressure
// "some avg10") reach 10%, and again when headroom is back above twice
// that; it runs on the goroutine polling twice a second from Load to
// Close, and must not close the model. Under pressure sessions stop
// growing their KV caches and, unless WithWeights(WeightsResident) or
// repacked, half the resident blocks are read from disk until it ends.
// Without fn the model watches only when its plan is tight (over half the
// limit, or streaming).
func WithMemoryPressure(fn func(PressureEvent)) Option {
	return modelOption(func(s *engine.Settings) { s.OnPressure = fn })
}

// WithChatTemplate makes Session.Chat render with this Jinja source instead
// of the file's template; one that does not parse fails Load with
// ErrInvalidOption.
func WithChatTemplate(src string) Option {
	return modelOption(func(s *engine.Settings) { s.ChatTemplate = src })
}

// WithSessions plans memory for n sessions at once (default 1), as a
// server with n slots needs: the KV caches, activations and logits count
// n times.
func WithSessions(n int) Option {
	return modelOption(func(s *engine.Settings) { s.SetInt(&s.Sessions, "sessions", n, 1, 1024) })
}

// WithLogger sets where Load and sessions log warnings and decisions
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return modelOption(func(s *engine.Settings) { s.SetLogger(l) })
}

// GenerateOption configures one generation. Defaults are llama.cpp's
// (sampler.DefaultConfig) and 128 tokens; a value out of range fails the
// call with ErrInvalidOption.
type GenerateOption func(*engine.Gen)

// MaxTokens limits how many tokens are generated (default 128; at least 1).
func MaxTokens(n int) GenerateOption { return func(g *engine.Gen) { g.MaxTokens = n } }

// Temperature sets the sampling temperature (>= 0); 0 is greedy decoding
// (always the most likely token).
func Temperature(t float32) GenerateOption { return func(g *engine.Gen) { g.Temperature = t } }

// TopK keeps only the k most likely tokens; 0 disables the filter.
func TopK(k int) GenerateOption { return func(g *engine.Gen) { g.TopK = k } }

// TopP keeps the smallest set of tokens whose probability adds up to p, in
// (0, 1]; 1 disables the filter.
func TopP(p float32) GenerateOption { return func(g *engine.Gen) { g.TopP = p } }

// MinP drops tokens less likely than p (in [0, 1]) times the most likely
// one; 0 disables the filter.
func MinP(p float32) GenerateOption { return func(g *engine.Gen) { g.MinP = p } }

// RepeatPenalty divides the logits of recently seen tokens by p (when
// positive; multiplies when negative); p must be > 0, and 1 disables it.
// How many recent tokens count is set with PenaltyLastN.
func RepeatPenalty(p float32) GenerateOption { return func(g *engine.Gen) { g.RepeatPenalty = p } }

// FrequencyPenalty subtracts p × (times seen) from recent tokens' logits.
func FrequencyPenalty(p float32) GenerateOption {
	return func(g *engine.Gen) { g.FrequencyPenalty = p }
}

// PresencePenalty subtracts p from the logits of tokens seen recently.
func PresencePenalty(p float32) GenerateOption { return func(g *engine.Gen) { g.PresencePenalty = p } }

// PenaltyLastN sets how many recent tokens the penalties look at (default
// 64; -1 means the whole session).
func PenaltyLastN(n int) GenerateOption { return func(g *engine.Gen) { g.PenaltyLastN = n } }

// Seed makes sampling reproducible: the same seed, prompt and options give
// the same text.
func Seed(seed uint64) GenerateOption { return func(g *engine.Gen) { g.Seed = seed } }

// Stop ends generation when the output contains any of the strings (none
// empty); the stop string itself is not returned.
func Stop(stops ...string) GenerateOption {
	return func(g *engine.Gen) { g.Stop = append(g.Stop, stops...) }
}

// WithThinking turns a reasoning model's thinking on or off in Chat: the
// template reads it as enable_thinking (Qwen3 closes the reasoning block
// in the prompt when it is false). Templates that do not read it ignore it.
func WithThinking(on bool) GenerateOption { return func(g *engine.Gen) { g.Thinking = &on } }

// WithReasoningEffort sets a gpt-oss model's reasoning_effort in Chat:
// "low", "medium" (the default) or "high"; other models refuse a level
// with ErrInvalidOption, as Ollama does.
func WithReasoningEffort(level string) GenerateOption {
	return func(g *engine.Gen) { g.ReasoningEffort = level }
}

// WithTools offers functions the model may call in Chat: they are passed
// to the chat template, and calls in the reply are parsed into
// Message.ToolCalls. Answer a call with a RoleTool message naming its ID.
func WithTools(tools ...Tool) GenerateOption {
	return func(g *engine.Gen) { g.Tools = append(g.Tools, tools...) }
}

// WithJSON makes the output one JSON object (RFC 8259): only tokens that
// keep the text an object's start may be sampled, and generation ends when
// it closes. Whitespace runs are at most 24 bytes with one line feed, and
// nesting 64 levels, so a model cannot idle; MaxTokens may still cut it
// short (FinishLength). A reasoning model answers without thinking, and
// Chat puts the object in Content.
func WithJSON() GenerateOption { return func(g *engine.Gen) { g.JSON = true } }

// WithToolChoice is OpenAI's tool_choice for WithTools' tools: "auto"
// (default), "none", "required" (one call of one of them) or a tool's
// name, held token by token to the template's call syntax, arguments to
// the tool's parameters as far as WithJSONSchema's subset goes; a choice
// that cannot be forced fails with ErrInvalidOption.
func WithToolChoice(choice string) GenerateOption {
	return func(g *engine.Gen) { g.ToolChoice = choice }
}

// WithLogprobs asks for each token's Logprob and its step's top (0 to 20)
// TopLogprobs, as OpenAI's logprobs and top_logprobs, at a pass over the
// vocabulary a token; another top fails with ErrInvalidOption.
func WithLogprobs(top int) GenerateOption {
	return func(g *engine.Gen) { g.Logprobs, g.TopLogprobs = true, top }
}

// WithJSONSchema is WithJSON for an object satisfying a JSON schema (OpenAI's
// structured outputs): type, properties, required, additionalProperties,
// items, min/maxItems, enum and const of strings and null, anyOf/oneOf told
// apart by their start or one constant property, local $ref; annotations
// ignored, any other keyword refused with ErrInvalidOption naming it.
func WithJSONSchema(schema json.RawMessage) GenerateOption {
	return func(g *engine.Gen) { g.JSONSchema = schema }
}

// PromptLookup is WithSpeculation's drafting: Draft, the most tokens a
// step (0 off, at most MaxDraft; llama-server's --draft-max); MinDraft,
// the fewest worth a pass (--draft-min); NGram, the last tokens matched
// (0 means 3, at most 64).
type PromptLookup = seq.Lookup

// MaxDraft bounds PromptLookup.Draft.
const MaxDraft = seq.MaxDraft

// Drafting is how a session with a draft model (WithDraftModel) drafts:
// Draft, the most tokens a step (0 off, at most MaxDraft; llama-server's
// --draft-max, default 3); MinDraft, the fewest worth a pass
// (--draft-min, 0); PMin, the draft's probability below which it stops
// (--draft-p-min, 0).
type Drafting = seq.Drafting

// DefaultDrafting is llama-server's drafting, a generation's default.
func DefaultDrafting() Drafting { return seq.DefaultDrafting() }

// WithDrafting sets how a session with a draft model drafts (see
// Drafting); a field out of range is ErrInvalidOption. Drafting.Draft 0
// generates without the draft model. A session without one ignores it.
func WithDrafting(d Drafting) GenerateOption {
	return func(g *engine.Gen) { g.Drafting = d }
}

// WithSpeculation drafts the next tokens by copying what followed the
// last NGram tokens' latest earlier occurrence in the session, and
// verifies them in one pass whose logits are sampled exactly as token by
// token: it pays where output repeats its input (summaries, code edits,
// extraction). Usage counts drafted and kept tokens; a field out of range
// is ErrInvalidOption. Models with conv or recurrent layers generate
// without it; a session's draft model (WithDraftModel) drafts instead.
func WithSpeculation(l PromptLookup) GenerateOption {
	return func(g *engine.Gen) { g.Speculate = l }
}
