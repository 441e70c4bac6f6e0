package llm

import (
	"encoding/json"
	"log/slog"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/residency"
)

// KVType is the element type of a session's KV cache.
type KVType = kv.Type

// KV cache element types. KVF16 matches llama.cpp's default; KVInt8 halves
// the cache at a small cost in accuracy; KVInt4 stores llama.cpp's q4_0
// blocks with its Walsh–Hadamard rotation of keys and values (28% of F16's
// memory) and keeps each layer's newest 128 positions and first 16 in F16
// too, for models whose head sizes are multiples of 32.
const (
	KVF16  KVType = kv.F16
	KVInt8 KVType = kv.Int8
	KVInt4 KVType = kv.Int4
)

// WeightsMode is how the model's weights are kept in memory: WeightsAuto
// (the plan chooses), WeightsResident or WeightsStreaming.
type WeightsMode = memplan.WeightsMode

// Weights modes (see memplan.WeightsMode for what each does).
const (
	WeightsAuto      = memplan.WeightsAuto
	WeightsResident  = memplan.WeightsResident
	WeightsStreaming = memplan.WeightsStreaming
)

// PressureEvent reports memory running short, or recovering, while a model
// is loaded (see WithMemoryPressure): the headroom, the limit, and what
// the model did about it.
type PressureEvent = residency.PressureEvent

// Option configures Load. Options that also make sense per session
// (WithContextSize, WithKVType, WithBatchSize, WithKVPreallocate,
// WithContextShift) are SessionOptions too: given to Load they set the
// default for every session of the model.
type Option interface {
	applyModel(*engine.Settings)
}

// SessionOption configures NewSession, overriding what Load was given.
type SessionOption interface {
	applySession(*engine.Settings)
}

type bothOption func(*engine.Settings)

func (f bothOption) applyModel(s *engine.Settings)   { f(s) }
func (f bothOption) applySession(s *engine.Settings) { f(s) }

type modelOption func(*engine.Settings)

func (f modelOption) applyModel(s *engine.Settings) { f(s) }

// WithContextSize sets the context length in tokens: the most tokens a
// session can hold. The default is the model's trained context length. A
// larger value than the model was trained for is allowed and logged.
func WithContextSize(n int) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *engine.Settings) { s.SetInt(&s.Context, "context size", n, 1, 1<<24) })
}

// WithKVType sets the KV cache element type (KVF16 by default). KVInt4
// needs head sizes that are multiples of 32; NewSession refuses it for
// other models.
func WithKVType(t KVType) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *engine.Settings) { s.SetKVType(t) })
}

// WithBatchSize sets how many prompt tokens are processed per forward pass
// (default 512). Activation memory grows with it; prompts longer than it
// are processed in chunks.
func WithBatchSize(n int) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *engine.Settings) { s.SetInt(&s.Batch, "batch size", n, 1, 1<<16) })
}

// WithKVPreallocate makes every session reserve its whole context's KV cache
// when it is created, and write to every page of it, so that the memory is
// really held from the start (and a shortage shows at NewSession, not in
// the middle of generation). Without it the cache starts with 256 cells and
// grows on demand. NewSession fails with ErrOutOfMemoryBudget when the
// reservation does not fit the memory budget.
func WithKVPreallocate() interface {
	Option
	SessionOption
} {
	return bothOption(func(s *engine.Settings) { s.KVPreallocate = true })
}

// WithContextShift lets sessions continue past a full context instead of
// failing with ErrContextFull: when the next tokens do not fit, the session
// keeps its first keep tokens (e.g. a system prompt), drops the older half
// of the rest, and goes on, as llama.cpp's context shift does. The kept
// tokens' cached keys and values are reused, moved and re-rotated to their
// new positions rather than recomputed, so later tokens still carry what
// they learnt from the dropped ones. Sessions also shift, rather than fail,
// when the memory budget stops their KV cache from growing.
//
// keep must be less than the context size (Load and NewSession refuse it
// otherwise, with ErrInvalidOption); a long prompt is evaluated in pieces
// of at most context−keep tokens so that a shift can always make room.
// Sliding-window layers (Gemma 2) keep their ring of recent tokens and
// renumber it, so their window goes on seeing the latest tokens.
func WithContextShift(keep int) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *engine.Settings) { s.SetShift(keep) })
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

// WithWeights chooses how weights are kept in memory (default WeightsAuto:
// every block resident while it fits, blocks read from disk as the KV
// caches need their memory; WeightsStreaming plans for that even when the
// whole model would fit; WeightsResident never reads blocks from disk and
// shortens the context instead).
func WithWeights(w WeightsMode) Option {
	return modelOption(func(s *engine.Settings) { s.SetWeights(w) })
}

// WithRepack lets the memory plan hold weight matrices repacked at load,
// eight rows interleaved, which decodes faster (default true; the types
// and CPUs: quant.X8). The lattice types (IQ2_XXS … IQ1_M) take 1.5–2.9×
// their bytes so, the others at most 1.25×. The plan repacks only when
// every block stays resident at the full context with every repackable
// matrix repacked (MemoryPlan.Repacked), and never holds two copies: each
// matrix moves to anonymous memory and its mapped pages are released. A
// repacked model's blocks stay in memory for its life: sessions beyond
// the plan and memory pressure no longer move them to disk. A streamed
// mixture-of-experts model's expert cache holds its experts repacked when
// it has room for every one (MemoryPlan.RepackExperts). Pass false to
// keep every weight in the file's layout, and movable.
func WithRepack(on bool) Option {
	return modelOption(func(s *engine.Settings) { s.Repack = on })
}

// WithDiskReads sets how many reads of weight blocks from disk are in
// flight at once (default 4): more suits disks that serve deep queues
// (NVMe, network block devices), fewer a slow SD card.
func WithDiskReads(n int) Option {
	return modelOption(func(s *engine.Settings) { s.SetInt(&s.Readers, "disk reads", n, 1, 64) })
}

// WithStrictMemory makes Load refuse with ErrOutOfMemoryBudget instead of
// degrading (INT8 KV, INT4 KV, shorter context, streaming) when the request does not
// fit the memory limit.
func WithStrictMemory() Option {
	return modelOption(func(s *engine.Settings) { s.Strict = true })
}

// WithMemoryPressure calls fn when the memory headroom falls below the
// larger of 5% of the limit and 64 MiB, or when memory stalls (the cgroup
// v2 memory.pressure "some avg10") reach 10%, and again when headroom is
// back above twice the threshold. Headroom is polled twice a second on a
// goroutine that runs from Load to Close; fn runs on it and must not close
// the model. The model also logs a warning; while under pressure sessions
// stop growing their KV caches beyond what they hold; and, unless
// WithWeights(WeightsResident) or the weights are repacked (WithRepack), half of the resident blocks are read from
// disk from the next forward pass on, so that the page cache they held can
// be reclaimed without the model thrashing on it; they come back when the
// pressure ends. Without this option
// the model watches only when its memory plan is tight (more than half the
// limit, or streaming weights).
func WithMemoryPressure(fn func(PressureEvent)) Option {
	return modelOption(func(s *engine.Settings) { s.OnPressure = fn })
}

// WithChatTemplate makes Session.Chat render conversations with this chat
// template (Jinja source) instead of the file's tokenizer.chat_template,
// for a model that has none or a wrong one. A template that does not
// parse makes Load fail with ErrInvalidOption.
func WithChatTemplate(src string) Option {
	return modelOption(func(s *engine.Settings) { s.ChatTemplate = src })
}

// WithSessions plans memory for n sessions running at once (default 1),
// as a server with n parallel slots needs: each session's KV cache,
// activations and logits count n times in the plan, and the KV memory
// sessions share at run time is what the plan leaves for n caches.
func WithSessions(n int) Option {
	return modelOption(func(s *engine.Settings) { s.SetInt(&s.Sessions, "sessions", n, 1, 1024) })
}

// WithLogger sets where Load and sessions log warnings and decisions
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return modelOption(func(s *engine.Settings) {
		if l != nil {
			s.Logger = l
		}
	})
}

// GenerateOption configures one Generate or Stream call. The defaults are
// llama.cpp's (sampler.DefaultConfig): temperature 0.8, top-k 40, top-p
// 0.95, min-p 0.05, no penalties; and 128 tokens. A value out of range
// makes Generate and Stream fail with an error wrapping ErrInvalidOption.
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

// WithReasoningEffort sets how hard a gpt-oss model reasons in Chat: "low",
// "medium" or "high" (its harmony template's reasoning_effort; "" keeps the
// default, medium; WithThinking(false) does not stop it). A model of another
// template format refuses a level, as Ollama does: ErrInvalidOption names it.
func WithReasoningEffort(level string) GenerateOption {
	return func(g *engine.Gen) { g.ReasoningEffort = level }
}

// WithTools offers functions the model may call in Chat: they are passed
// to the chat template, and calls in the reply are parsed into
// Message.ToolCalls. Answer a call with a RoleTool message naming its ID.
func WithTools(tools ...Tool) GenerateOption {
	return func(g *engine.Gen) { g.Tools = append(g.Tools, tools...) }
}

// WithJSON makes the output one JSON object: at each step only tokens
// that keep the text the start of a JSON object (RFC 8259) may be sampled,
// and generation ends when the object closes. The text begins with '{';
// whitespace between JSON tokens is limited to runs of 24 bytes with one
// line feed and no carriage return, and nesting to 64 levels, so a model
// cannot idle in it. MaxTokens still bounds the output, and a generation
// cut short by it is an unfinished object (FinishLength). The constraint
// covers everything generated, so a reasoning model answers without
// thinking first, and Chat puts the object in Content even when the
// template's prompt opened a reasoning block.
func WithJSON() GenerateOption { return func(g *engine.Gen) { g.JSON = true } }

// WithToolChoice is OpenAI's tool_choice for the tools of WithTools:
// "auto" (default), "none" (not offered), "required" (the reply is one
// call of one of them) or a tool's name (one call of it), held token by
// token to the template's syntax (Llama 3, Hermes/Qwen, Mistral) with
// arguments following the tool's parameters where WithJSONSchema's subset
// can. A choice that cannot be forced fails with ErrInvalidOption.
func WithToolChoice(choice string) GenerateOption {
	return func(g *engine.Gen) { g.ToolChoice = choice }
}

// WithLogprobs asks for each generated token's log-probability
// (Token.Logprob) and those of the top (0 to 20) most likely tokens at its
// step (Token.TopLogprobs), as OpenAI's logprobs and top_logprobs. They
// cost a pass over the vocabulary a token; a top outside [0, 20] makes the
// call fail with ErrInvalidOption.
func WithLogprobs(top int) GenerateOption {
	return func(g *engine.Gen) { g.Logprobs, g.TopLogprobs = true, top }
}

// WithJSONSchema is WithJSON for an object that satisfies a JSON schema,
// as OpenAI's structured outputs. The subset enforced: type, properties,
// required, additionalProperties (true or false), items, minItems,
// maxItems, enum and const of strings and null, anyOf/oneOf whose branches
// begin differently or are objects told apart by one constant-string
// property, and local $ref; annotations are ignored. Any other keyword
// fails the call with ErrInvalidOption, naming it.
func WithJSONSchema(schema json.RawMessage) GenerateOption {
	return func(g *engine.Gen) { g.JSONSchema = schema }
}
