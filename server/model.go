package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/rand/v2"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/chat"
)

// Errors a Backend's Generate or Embed wraps so that the server answers
// 400 (or 501) rather than 500.
var (
	// ErrContextLength: the prompt does not fit the session's context
	// (OpenAI's code context_length_exceeded).
	ErrContextLength = errors.New("server: the prompt does not fit the context")
	// ErrBadPrompt: the prompt or its settings cannot be used (for
	// example an empty prompt for a model that adds no BOS).
	ErrBadPrompt = errors.New("server: the prompt cannot be used")
	// ErrNoEmbeddings: the model cannot embed (for example a reranker,
	// whose file pools by rank); /v1/embeddings answers 501.
	ErrNoEmbeddings = errors.New("server: the model does not make embeddings")
)

// Model is the Backend of a loaded model: each slot is one of its
// sessions, and a request makes its slot's session hold exactly the
// request's prompt (llm.Session.Complete), so a conversation continued
// on the same slot evaluates only its new turn.
type Model struct {
	m    *llm.Model
	info ModelInfo
	opts []llm.SessionOption
	// What Tokenize needs of the vocabulary: its size, and whether the
	// tokenizer adds BOS and EOS itself.
	vocab          int
	addBOS, addEOS bool
	spec           llm.PromptLookup // Speculate's
	draft          llm.Drafting     // Draft's
}

// Speculate makes every request generate with speculative decoding by
// prompt lookup (llm.WithSpeculation), as llama-server's --spec-type
// ngram-simple with --draft-max and --draft-min; a request's
// speculative.n_max and speculative.n_min replace l's Draft and MinDraft
// for it (MinDraft clamped to Draft, as llama-server does). Call it before
// serving; fields out of range are an error wrapping llm.ErrInvalidOption
// that names the field.
func (b *Model) Speculate(l llm.PromptLookup) error {
	if err := l.Check(); err != nil {
		return err
	}
	b.spec = l
	b.report()
	return nil
}

// Draft makes every request generate with speculative decoding by draft
// model d (llm.WithDraftModel: each slot's session owns a session of d),
// as llama-server's --model-draft with --draft-max, --draft-min and
// --draft-p-min; a request's speculative.n_max, n_min and p_min replace
// dr's Draft, MinDraft and PMin for it (MinDraft clamped to Draft). It
// takes the place of Speculate's prompt lookup. Call it before New
// (which makes the sessions: a draft whose vocabulary does not match
// fails there, with llm.ErrInvalidOption naming the difference); plan
// d's memory with llm.WithSessions at its Load, one per slot. Fields out
// of range are an error wrapping llm.ErrInvalidOption naming the field.
func (b *Model) Draft(d *llm.Model, dr llm.Drafting) error {
	if err := dr.Check(); err != nil {
		return err
	}
	b.opts = append(b.opts, llm.WithDraftModel(d))
	b.draft = dr
	b.report()
	return nil
}

// report sets what Info says of the speculation: the draft model's, else
// prompt lookup's.
func (b *Model) report() {
	switch {
	case b.draft.Draft > 0:
		b.info.Speculative = &Speculative{NMax: b.draft.Draft, NMin: b.draft.MinDraft, PMin: float64(b.draft.PMin)}
	case b.spec.Draft > 0:
		b.info.Speculative = &Speculative{NMax: b.spec.Draft, NMin: b.spec.MinDraft}
	}
}

// FromModel serves m under the name id (what /v1/models lists and
// responses carry). Sessions are made with opts; plan their memory with
// llm.WithSessions at Load (one per slot, WithParallel). A model without a
// chat template still serves /v1/completions.
func FromModel(m *llm.Model, id string, opts ...llm.SessionOption) (*Model, error) {
	info := m.Info()
	mi := ModelInfo{ID: id, ContextLength: info.Context, EmbeddingLength: info.Embedding, EmbeddingOnly: info.EmbeddingOnly, Render: chat.RenderOptions{
		BOSToken: info.BOSText, EOSToken: info.EOSText, StripBOS: info.AddBOS, StripEOS: info.AddEOS},
		Family: info.Architecture, Parameters: info.Parameters, Quantization: info.FileType, Size: info.FileBytes}
	if info.ChatTemplate != "" {
		t, err := chat.Parse(info.ChatTemplate)
		if err != nil {
			return nil, fmt.Errorf("server: the model's chat template: %w", err)
		}
		mi.Template = t
	}
	if len(opts) > 0 {
		// A session option may set another context than new sessions'
		// default (WithContextSize): ask a session made with them.
		se, err := m.NewSession(opts...)
		if err != nil {
			return nil, fmt.Errorf("server: a session with the options given: %w", err)
		}
		mi.ContextLength = se.Context()
		se.Close()
	}
	fim := info.FIM
	mi.FIM = &fim
	return &Model{m: m, info: mi, opts: opts, vocab: info.VocabSize, addBOS: info.AddBOS, addEOS: info.AddEOS}, nil
}

// Tokenize implements Vocabulary: llm.Model.Tokenize, or TokenizeSpecial
// with parseSpecial, without the BOS and EOS the tokenizer adds unless
// addSpecial.
func (b *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	tokenize := b.m.Tokenize
	if parseSpecial {
		tokenize = b.m.TokenizeSpecial
	}
	ids, err := tokenize(text)
	if err != nil || addSpecial {
		return ids, err
	}
	if b.addBOS && len(ids) > 0 && ids[0] == b.m.BOS() {
		ids = ids[1:]
	}
	if b.addEOS && len(ids) > 0 && ids[len(ids)-1] == b.m.EOS() {
		ids = ids[:len(ids)-1]
	}
	return ids, nil
}

// Piece implements Vocabulary with llm.Model.TokenText.
func (b *Model) Piece(id int32) (string, bool) {
	if id < 0 || int(id) >= b.vocab {
		return "", false
	}
	return b.m.TokenText(id), true
}

// Info implements Backend.
func (b *Model) Info() ModelInfo { return b.info }

// NewSession implements Backend.
func (b *Model) NewSession() (Session, error) {
	s, err := b.m.NewSession(b.opts...)
	if err != nil {
		return nil, err
	}
	return modelSession{s, b.m, b.spec, b.draft}, nil
}

type modelSession struct {
	s     *llm.Session
	m     *llm.Model
	spec  llm.PromptLookup // Model.Speculate's
	draft llm.Drafting     // Model.Draft's
}

func (ms modelSession) Close() error { return ms.s.Close() }

// Save implements StateSession with llm.Session.Save.
func (ms modelSession) Save(w io.Writer) error { return ms.s.Save(w) }

// Restore implements StateSession with llm.Session.Restore.
func (ms modelSession) Restore(r io.Reader) error { return ms.s.Restore(r) }

// Context is the session's context (llm.Session.Context), which GET
// /slots reports as its slot's n_ctx.
func (ms modelSession) Context() int { return ms.s.Context() }

// Len implements StateSession.
func (ms modelSession) Len() int { return ms.s.Len() }

// Reset implements StateSession.
func (ms modelSession) Reset() { ms.s.Reset() }

// Generate implements Session (see GenerateLogprobs).
func (ms modelSession) Generate(ctx context.Context, prompt string, p Params, yield func(string) bool) (Result, error) {
	return ms.GenerateLogprobs(ctx, prompt, p, func(pc Piece) bool { return pc.Text == "" || yield(pc.Text) })
}

// GenerateLogprobs implements LogprobSession: the sampler defaults are the
// library's (llm.GenerateOption), except that a request without a seed
// gets a random one, as OpenAI's API samples differently each time.
func (ms modelSession) GenerateLogprobs(ctx context.Context, prompt string, p Params, yield func(Piece) bool) (Result, error) {
	return ms.run(ctx, p, yield, func(opts []llm.GenerateOption) iter.Seq2[llm.Token, error] {
		return ms.s.Complete(ctx, prompt, opts...)
	})
}

// GenerateTokens implements TokenSession with llm.Session.CompleteTokens,
// as GenerateLogprobs does with Complete.
func (ms modelSession) GenerateTokens(ctx context.Context, prompt []int32, p Params, yield func(Piece) bool) (Result, error) {
	return ms.run(ctx, p, yield, func(opts []llm.GenerateOption) iter.Seq2[llm.Token, error] {
		return ms.s.CompleteTokens(ctx, prompt, opts...)
	})
}

// run generates with p's options from the tokens complete yields.
func (ms modelSession) run(ctx context.Context, p Params, yield func(Piece) bool, complete func([]llm.GenerateOption) iter.Seq2[llm.Token, error]) (Result, error) {
	s := ms.s
	maxTokens := p.MaxTokens
	if maxTokens <= 0 {
		maxTokens = s.Context()
	}
	seed := rand.Uint64()
	if p.Seed != nil {
		seed = uint64(*p.Seed)
	}
	opts := []llm.GenerateOption{llm.MaxTokens(maxTokens), llm.Seed(seed)}
	if o, err := loraOption(ms.m, p.LoRA); err != nil {
		return Result{}, err
	} else if o != nil {
		opts = append(opts, o)
	}
	f32 := func(o func(float32) llm.GenerateOption) func(float64) llm.GenerateOption {
		return func(v float64) llm.GenerateOption { return o(float32(v)) }
	}
	opts = given(opts, p.Temperature, f32(llm.Temperature))
	opts = given(opts, p.TopP, f32(llm.TopP))
	opts = given(opts, p.PresencePenalty, f32(llm.PresencePenalty))
	opts = given(opts, p.FrequencyPenalty, f32(llm.FrequencyPenalty))
	opts = given(opts, p.TopK, llm.TopK)
	opts = given(opts, p.MinP, f32(llm.MinP))
	opts = given(opts, p.RepeatPenalty, f32(llm.RepeatPenalty))
	opts = given(opts, p.RepeatLastN, llm.PenaltyLastN)
	switch {
	case len(p.JSONSchema) > 0:
		opts = append(opts, llm.WithJSONSchema(p.JSONSchema))
	case p.JSON:
		opts = append(opts, llm.WithJSON())
	}
	if p.Logprobs {
		opts = append(opts, llm.WithLogprobs(p.TopLogprobs))
	}
	if p.ToolChoice != "" {
		opts = append(opts, llm.WithTools(p.Tools...), llm.WithToolChoice(p.ToolChoice))
	}
	// As llama-server, a request's draft settings matter only where the
	// server speculates.
	if d := ms.draft; d.Draft > 0 {
		d.Draft, d.MinDraft = requestDrafts(p, d.Draft, d.MinDraft)
		if p.DraftPMin != nil {
			d.PMin = float32(*p.DraftPMin)
		}
		opts = append(opts, llm.WithDrafting(d))
	} else if l := ms.spec; l.Draft > 0 {
		l.Draft, l.MinDraft = requestDrafts(p, l.Draft, l.MinDraft)
		opts = append(opts, llm.WithSpeculation(l))
	}
	var err error
	for tok, e := range complete(opts) {
		if err = e; err != nil {
			break
		}
		pc := Piece{Text: tok.Text, ID: tok.ID}
		if p.Logprobs && tok.ID >= 0 {
			pc.Logprobs = &TokenLogprobs{ID: tok.ID, Token: ms.m.TokenText(tok.ID), Logprob: float64(tok.Logprob)}
			for _, t := range tok.TopLogprobs {
				pc.Logprobs.Top = append(pc.Logprobs.Top, TopLogprob{ID: t.ID, Token: t.Text, Logprob: float64(t.Logprob)})
			}
		}
		if (pc.Text != "" || pc.Logprobs != nil || pc.ID >= 0) && !yield(pc) {
			break
		}
	}
	u := s.Usage()
	res := Result{PromptTokens: u.PromptTokens, CompletionTokens: u.GeneratedTokens, CachedTokens: u.ReusedTokens, Finish: "stop",
		Drafted: u.DraftTokens, Accepted: u.AcceptedTokens}
	prompted := u.PromptTokens > 0 // the prompt was evaluated
	switch {
	case err == nil && u.Finish == llm.FinishLength:
		res.Finish = "length"
	case errors.Is(err, llm.ErrContextFull) && prompted:
		res.Finish, err = "length", nil
	default:
		err = backendError(err)
	}
	return res, err
}

// requestDrafts are the most and fewest drafts a step of p makes: the
// server's, replaced by the request's speculative.n_max and n_min, the
// fewest clamped to the most as llama-server clamps them.
func requestDrafts(p Params, most, least int) (int, int) {
	if p.DraftMax != nil {
		most = *p.DraftMax
	}
	if p.DraftMin != nil {
		least = *p.DraftMin
	}
	return most, min(least, most)
}

// Embed implements EmbedSession with Session.EmbedBatch, which packs
// short inputs into shared forward passes (Session.Embed tokenizes as
// this does, but does not say how many tokens it made, which usage
// reports). The session's cached prompt is gone afterwards.
func (ms modelSession) Embed(ctx context.Context, in []EmbedInput, o EmbedOptions) ([][]float32, int, error) {
	ids := make([][]int32, len(in))
	tokens := 0
	// A truncated input counts the tokens that fit, the ones evaluated
	// (the session's context is already within the model's positions).
	limit := math.MaxInt
	if o.Truncate {
		limit = ms.s.Context()
	}
	for i, x := range in {
		ids[i] = x.Tokens
		if ids[i] == nil {
			var err error
			if ids[i], err = ms.m.TokenizeSpecial(x.Text); err != nil {
				return nil, 0, &InputError{Index: i, Err: backendError(err)}
			}
		}
		tokens += min(len(ids[i]), limit)
	}
	opts := []llm.EmbedOption{llm.WithTruncate(o.Truncate), llm.WithNormalize(!o.Raw)}
	if o.Dimensions > 0 {
		opts = append(opts, llm.WithDimensions(o.Dimensions))
	}
	vs, err := ms.s.EmbedBatch(ctx, ids, opts...)
	var te *llm.TextError
	switch {
	case errors.Is(err, llm.ErrUnsupportedArch): // the file pools by rank
		return nil, 0, fmt.Errorf("%w: %w", ErrNoEmbeddings, err)
	case errors.As(err, &te):
		return nil, 0, &InputError{Index: te.Index, Err: backendError(te.Err)}
	case err != nil:
		return nil, 0, backendError(err)
	}
	return vs, tokens, nil
}

// given appends option(*v) to opts when the request set v (nil: the
// library's default).
func given[T any](opts []llm.GenerateOption, v *T, option func(T) llm.GenerateOption) []llm.GenerateOption {
	if v == nil {
		return opts
	}
	return append(opts, option(*v))
}

// backendError wraps the library's errors that a request causes in the
// errors the server answers 400 to.
func backendError(err error) error {
	switch {
	case errors.Is(err, llm.ErrContextFull):
		return fmt.Errorf("%w: %w", ErrContextLength, err)
	case errors.Is(err, llm.ErrInvalidOption), errors.Is(err, llm.ErrBadToken):
		return fmt.Errorf("%w: %w", ErrBadPrompt, err)
	}
	return err
}

// LoRAAdapters implements LoRABackend: the model's adapters
// (llm.Model.LoRAAdapters).
func (b *Model) LoRAAdapters() []LoRAAdapter {
	as := b.m.LoRAAdapters()
	out := make([]LoRAAdapter, len(as))
	for i, a := range as {
		out[i] = LoRAAdapter{ID: a.ID, Path: a.Path, Scale: a.Scale}
	}
	return out
}

// SetLoRAScale implements LoRABackend (llm.Model.SetLoRAScale).
func (b *Model) SetLoRAScale(id int, scale float32) error { return b.m.SetLoRAScale(id, scale) }

// Forget implements ForgetSession: the session drops what it holds.
func (ms modelSession) Forget() { ms.s.Reset() }
