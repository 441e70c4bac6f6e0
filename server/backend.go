package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/chat"
)

// Backend is the model a Server serves.
type Backend interface {
	// Info describes the model. It is read once, by New.
	Info() ModelInfo
	// NewSession makes the state of one slot: the server calls it once per
	// slot in New and keeps the session for the server's lifetime, so that
	// a slot's next request can reuse the cached prefix of its previous one.
	NewSession() (Session, error)
}

// ModelInfo is what the server needs to know about the model.
type ModelInfo struct {
	// ID names the model in responses and in GET /v1/models.
	ID string
	// ContextLength is the context the sessions were made with (tokens).
	ContextLength int
	// EmbeddingLength is the width of the model's embeddings, the bound of
	// an embedding request's dimensions; 0 leaves that check to the
	// EmbedSession.
	EmbeddingLength int
	// EmbeddingOnly: the model only embeds (an encoder); the generation
	// endpoints answer 501, as llama-server's do when it only embeds.
	EmbeddingOnly bool
	// Template is the chat template; nil makes /v1/chat/completions answer
	// that the model has no chat template (/v1/completions still works).
	Template *chat.Template
	// Render carries the template inputs that come from the vocabulary:
	// BOSToken, EOSToken, StripBOS, StripEOS. The server fills in the rest.
	Render chat.RenderOptions

	// What Ollama's /api/tags, /api/ps and /api/show describe a model by;
	// zero values when the Backend cannot say.

	// Family is the model's architecture (general.architecture, e.g.
	// "llama").
	Family string
	// Parameters is the number of weights.
	Parameters int64
	// Quantization names the weights' dominant type, e.g. "Q4_K".
	Quantization string
	// Size is the model file's size in bytes.
	Size int64

	// FIM are the vocabulary's fill-in-the-middle tokens, which /infill
	// builds its prompt around; nil when the Backend cannot say (/infill
	// then answers as for a vocabulary without them).
	FIM *FIMTokens
	// Speculative, when not nil, is how the Backend speculates by
	// default (GET /props reports it as llama-server does).
	Speculative *Speculative
}

// FIMTokens are a vocabulary's fill-in-the-middle token ids, -1 when
// absent.
type FIMTokens = llm.FIMTokens

// Session generates text; one request uses it at a time.
type Session interface {
	// Generate makes the session hold exactly prompt — reusing the cached
	// prefix of what it held before that still matches — and generates a
	// continuation, passing each new piece of text to yield. It stops at an
	// end-of-generation token (finish "stop"), after p.MaxTokens tokens or
	// when the context is full (finish "length"), when yield returns false
	// (finish "stop"), or when ctx is done (it returns ctx.Err() within one
	// decode step).
	Generate(ctx context.Context, prompt string, p Params, yield func(text string) bool) (Result, error)
	// Close releases the session.
	Close() error
}

// contextSession is a Session that can say its context (tokens), which
// GET /slots reports as the slot's n_ctx; of another Session it reports
// ModelInfo.ContextLength. FromModel's are.
type contextSession interface {
	Session
	Context() int
}

// LogprobSession is a Session that can report log-probabilities: its
// GenerateLogprobs is Generate handing yield each token's Piece, with the
// token's TokenLogprobs when p.Logprobs is set. The server asks for it
// when a request wants logprobs, and answers 400 when the Session is not
// one. FromModel's sessions are.
type LogprobSession interface {
	Session
	GenerateLogprobs(ctx context.Context, prompt string, p Params, yield func(Piece) bool) (Result, error)
}

// TokenSession is a Session that can take its prompt as token ids:
// GenerateTokens is GenerateLogprobs for a prompt of ids taken as they are
// (no BOS added), which llama-server's /completion (a prompt of token
// ids) and /infill (a prompt built around the FIM tokens) ask for; they
// answer 501 when the Session is not one. An id outside the vocabulary is
// an error wrapping ErrBadPrompt. FromModel's sessions are TokenSessions.
type TokenSession interface {
	Session
	GenerateTokens(ctx context.Context, prompt []int32, p Params, yield func(Piece) bool) (Result, error)
}

// StateSession is a Session whose state can be written out and read back:
// llama-server's slot actions (POST /slots/{id}?action=save, restore,
// erase) ask for it and answer 501 when the Session is not one.
// FromModel's are (llm.Session's Save, Restore, Len and Reset).
type StateSession interface {
	Session
	// Save writes what the session holds to w.
	Save(w io.Writer) error
	// Restore replaces the session's state with what Save wrote, reading
	// no further than that; a stream that is damaged, truncated or from
	// another model or KV type is an error wrapping llm.ErrBadState.
	Restore(r io.Reader) error
	// Len is the number of tokens the session holds.
	Len() int
	// Reset empties the session.
	Reset()
}

// EmbedSession is a Session that can embed: the embedding endpoints ask
// for it, and answer 501 when the Backend's sessions are not
// EmbedSessions. FromModel's are.
type EmbedSession interface {
	Session
	// Embed returns the embedding of each input — pooled, cut to its
	// first o.Dimensions elements when that is above 0, and normalised to
	// unit length unless o.Raw — and the number of tokens it evaluated in
	// all. It evaluates them from an empty session and leaves the session
	// empty: the prefix a slot had cached for its next generation is gone.
	// Errors wrap ErrContextLength (more tokens than the context, unless
	// o.Truncate), ErrBadPrompt (no tokens, a token id outside the
	// vocabulary, dimensions above the width) or ErrNoEmbeddings (a model
	// that cannot embed), in an *InputError when one input is the cause;
	// when ctx is done it returns ctx.Err().
	Embed(ctx context.Context, in []EmbedInput, o EmbedOptions) ([][]float32, int, error)
}

// EmbedOptions are how an EmbedSession makes a request's vectors. The
// zero value is OpenAI's /v1/embeddings: whole, unit length, and an input
// longer than the context refused.
type EmbedOptions struct {
	// Dimensions keeps the first n elements of each vector (before
	// normalising, for models trained to be cut short); 0 keeps them all.
	Dimensions int
	// Truncate embeds the first tokens of an input longer than the
	// context (the end token the vocabulary appends kept) instead of
	// failing, as Ollama's /api/embed does by default (llm.WithTruncate).
	Truncate bool
	// Raw leaves the pooled vectors as they are rather than scaling them
	// to unit length, as Ollama's legacy /api/embeddings answers
	// (llm.WithNormalize(false)).
	Raw bool
}

// InputError is an EmbedSession's error caused by one input of a request:
// the answer names it (input[Index]).
type InputError struct {
	Index int
	Err   error
}

func (e *InputError) Error() string { return fmt.Sprintf("input[%d]: %v", e.Index, e.Err) }

func (e *InputError) Unwrap() error { return e.Err }

// EmbedInput is one input of an embedding request: Text, tokenized as the
// model's vocabulary asks (special tokens parsed, BOS and EOS added when
// it says so), or, when Tokens is not nil, token ids embedded as given.
type EmbedInput struct {
	Text   string
	Tokens []int32
}

// Piece is one generated token as a LogprobSession hands it over: the
// text it releases (empty while text is held back) and, with
// Params.Logprobs, its log-probabilities (nil for text released at the
// end without a token).
type Piece struct {
	Text     string
	Logprobs *TokenLogprobs
	// ID is the token's id; -1 for text released at the end without a
	// token (or from a Session that cannot say).
	ID int32
}

// TokenLogprobs is one generated token's log-probability (natural
// logarithm) and the most likely tokens at its step, most likely first.
type TokenLogprobs struct {
	ID      int32
	Token   string // the token's own text
	Logprob float64
	Top     []TopLogprob
}

// TopLogprob is one of the most likely tokens at a step.
type TopLogprob struct {
	ID      int32
	Token   string
	Logprob float64
}

// Params are the sampling settings of one request. Nil pointers mean the
// backend's defaults.
type Params struct {
	// MaxTokens bounds the generated tokens; 0 means until the context is full.
	MaxTokens int
	// LoRA, when not nil, are the adapters' scales for this request, by
	// id (those not listed 0): llama-server's "lora" field. nil takes the
	// adapters' own (POST /lora-adapters).
	LoRA             map[int]float32
	Temperature      *float64
	TopP             *float64
	Seed             *int64
	PresencePenalty  *float64
	FrequencyPenalty *float64
	// TopK keeps the k most likely tokens (0: no filter), MinP drops
	// tokens less likely than p times the most likely one (0: no
	// filter), and RepeatPenalty divides the logits of the tokens among
	// the last RepeatLastN (-1: all the session holds) by itself (1: no
	// penalty): Ollama's options, as llm.TopK, MinP, RepeatPenalty and
	// PenaltyLastN take them.
	TopK          *int
	MinP          *float64
	RepeatPenalty *float64
	RepeatLastN   *int
	// JSON asks for one JSON object (response_format json_object): the
	// Backend samples only tokens that keep the text the start of one, and
	// stops when it is complete (llm.WithJSON).
	JSON bool
	// JSONSchema, when not empty, is the JSON schema that object must
	// satisfy (response_format json_schema; llm.WithJSONSchema). A schema
	// the Backend cannot enforce is an error wrapping ErrBadPrompt.
	JSONSchema json.RawMessage
	// Logprobs asks a LogprobSession for each token's log-probability and
	// those of the TopLogprobs (0 to 20) most likely tokens at its step.
	Logprobs    bool
	TopLogprobs int
	// Tools are a chat request's tools, which the prompt offers already,
	// and ToolChoice, when not empty, forces a call of them: "required"
	// or a tool's name (llm.WithToolChoice).
	Tools      []chat.Tool
	ToolChoice string
	// DraftMax and DraftMin, when not nil, are llama-server's
	// speculative.n_max and speculative.n_min: the most and fewest tokens
	// a speculative step drafts, for a Backend that speculates (FromModel's
	// with Model.Speculate or Model.Draft); DraftPMin, speculative.p_min,
	// the draft model's confidence its drafts stop below (Model.Draft's).
	DraftMax, DraftMin *int
	DraftPMin          *float64
	// slot, when not nil, is the id of the slot the request asked for
	// (llama-server's id_slot); the server sets it.
	slot *int
	// stream is whether the request streams its answer, which GET /slots
	// reports among the slot's params; the server sets it.
	stream bool
}

// Speculative is a Backend's speculative decoding: the most and fewest
// tokens a step drafts and, with a draft model, the probability its
// drafts stop below (llama-server's speculative.n_max, n_min, p_min).
type Speculative struct {
	NMax, NMin int
	PMin       float64
}

// choice is p for the i-th choice of a request: a seed asked for moves
// on by i, so that the choices differ and the request stays reproducible.
func (p Params) choice(i int) Params {
	if p.Seed != nil && i > 0 {
		seed := *p.Seed + int64(i)
		p.Seed = &seed
	}
	return p
}

// Result reports one generation.
type Result struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens are the prompt's first tokens the session held already
	// (its KV cache reused), not evaluated again.
	CachedTokens int
	// Finish is "stop" or "length".
	Finish string
	// Drafted are the tokens speculative decoding drafted, Accepted those
	// of them kept (llama-server's timings.draft_n, draft_n_accepted).
	Drafted, Accepted int
	// stopWord is the stop sequence that ended the generation (the server
	// sets it; a Backend cannot).
	stopWord string
}

// add sums the choices of one request: the prompt once, the completions'
// tokens all.
func (r Result) add(c Result) Result {
	if r.PromptTokens == 0 {
		r.PromptTokens = c.PromptTokens
	}
	r.CompletionTokens += c.CompletionTokens
	r.Drafted += c.Drafted
	r.Accepted += c.Accepted
	return r
}
