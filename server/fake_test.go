package server

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lowmem/llm/chat"
	"github.com/lowmem/llm/internal/testutil"
)

// fakeBackend generates scripted replies, one piece per "decode step".
type fakeBackend struct {
	tmpl      *chat.Template
	reply     func(prompt string) []string
	gate      chan struct{} // when set, every step waits for a token from it
	mu        sync.Mutex
	active    int
	peak      int
	steps     atomic.Int64
	cancelled atomic.Int64
	prompts   []string
	params    []Params
	noEmbed   bool // sessions are not EmbedSessions
	embeds    []EmbedInput
	embedOpts []EmbedOptions // of each input embedded
}

// The fake's embeddings: a text's tokens are its bytes.
const (
	fakeWidth = 8
	fakeVocab = 256
)

func newFake(reply func(prompt string) []string) *fakeBackend {
	t, err := chat.Parse(testutil.HermesTemplate)
	if err != nil {
		panic(err)
	}
	return &fakeBackend{tmpl: t, reply: reply}
}

func (b *fakeBackend) Info() ModelInfo {
	return ModelInfo{ID: "fake-model", ContextLength: 4096, Template: b.tmpl,
		Render: chat.RenderOptions{BOSToken: "<s>", EOSToken: "</s>"}, EmbeddingLength: fakeWidth,
		Family: "llama", Parameters: 1_236_000_000, Quantization: "Q4_K", Size: 770_000_000}
}

func (b *fakeBackend) NewSession() (Session, error) {
	if b.noEmbed {
		return struct{ Session }{&fakeSession{b: b}}, nil // Session's methods only
	}
	return &fakeSession{b: b}, nil
}

// lastPrompt is the prompt the backend was given last.
func (b *fakeBackend) lastPrompt() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.prompts[len(b.prompts)-1]
}

// enter counts a generation or embedding running, until the returned
// function is called; record, run under b.mu, logs what it was asked.
func (b *fakeBackend) enter(record func()) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active++
	b.peak = max(b.peak, b.active)
	record()
	return func() {
		b.mu.Lock()
		b.active--
		b.mu.Unlock()
	}
}

// step is one "decode step": it waits for the gate when there is one,
// and reports whether ctx let it run.
func (b *fakeBackend) step(ctx context.Context) bool {
	if b.gate != nil {
		select {
		case <-b.gate:
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil {
		b.cancelled.Add(1)
		return false
	}
	b.steps.Add(1)
	return true
}

// fakeTokens are in's tokens as the fake sees them: a text's bytes.
func fakeTokens(in EmbedInput) []int32 {
	if in.Tokens != nil {
		return in.Tokens
	}
	ids := make([]int32, len(in.Text))
	for i := range len(in.Text) {
		ids[i] = int32(in.Text[i])
	}
	return ids
}

// fakeEmbedding is the fake's vector of ids, cut to o.Dimensions (0: all)
// and, unless o.Raw, normalised: every token and its place move every
// element.
func fakeEmbedding(ids []int32, o EmbedOptions) []float32 {
	v := make([]float64, fakeWidth)
	for k, id := range ids {
		for j := range v {
			v[j] += float64(id+1) * float64((k+j)%5+1) * math.Pow(-1, float64(j))
		}
	}
	if o.Dimensions > 0 {
		v = v[:o.Dimensions]
	}
	norm := 1.0
	if !o.Raw {
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		norm = math.Sqrt(ss)
	}
	out := make([]float32, len(v))
	for j, x := range v {
		out[j] = float32(x / norm)
	}
	return out
}

type fakeSession struct{ b *fakeBackend }

func (s *fakeSession) Close() error { return nil }

func (s *fakeSession) Generate(ctx context.Context, prompt string, p Params, yield func(string) bool) (Result, error) {
	b := s.b
	defer b.enter(func() { b.prompts, b.params = append(b.prompts, prompt), append(b.params, p) })()
	res := Result{PromptTokens: len(strings.Fields(prompt)), Finish: "stop"}
	for _, piece := range b.reply(prompt) {
		if !b.step(ctx) {
			return res, ctx.Err()
		}
		if p.MaxTokens > 0 && res.CompletionTokens == p.MaxTokens {
			res.Finish = "length"
			return res, nil
		}
		res.CompletionTokens++
		if !yield(piece) {
			return res, nil
		}
	}
	return res, nil
}

// Embed implements EmbedSession: one step an input.
func (s *fakeSession) Embed(ctx context.Context, in []EmbedInput, o EmbedOptions) ([][]float32, int, error) {
	vs := make([][]float32, len(in))
	tokens := 0
	for i, x := range in {
		v, n, err := s.embedOne(ctx, x, o)
		if err != nil {
			if ctx.Err() == nil {
				err = &InputError{Index: i, Err: err}
			}
			return nil, 0, err
		}
		vs[i] = v
		tokens += n
	}
	return vs, tokens, nil
}

func (s *fakeSession) embedOne(ctx context.Context, in EmbedInput, o EmbedOptions) ([]float32, int, error) {
	b := s.b
	defer b.enter(func() { b.embeds, b.embedOpts = append(b.embeds, in), append(b.embedOpts, o) })()
	if !b.step(ctx) {
		return nil, 0, ctx.Err()
	}
	ids := fakeTokens(in)
	n := b.Info().ContextLength
	switch {
	case o.Dimensions > fakeWidth:
		return nil, 0, fmt.Errorf("%w: %d dimensions of %d", ErrBadPrompt, o.Dimensions, fakeWidth)
	case len(ids) > n && o.Truncate:
		ids = ids[:n]
	case len(ids) > n:
		return nil, 0, fmt.Errorf("%w: %d tokens", ErrContextLength, len(ids))
	}
	for _, id := range ids {
		if id < 0 || id >= fakeVocab {
			return nil, 0, fmt.Errorf("%w: token %d not in the vocabulary of %d", ErrBadPrompt, id, fakeVocab)
		}
	}
	return fakeEmbedding(ids, o), len(ids), nil
}

// GenerateTokens implements TokenSession: the ids' pieces
// are the prompt the reply is made of (vocabFake's); each piece yielded is token 1.
func (s *fakeSession) GenerateTokens(ctx context.Context, prompt []int32, p Params, yield func(Piece) bool) (Result, error) {
	var b strings.Builder
	for _, id := range prompt {
		text, ok := vocabFake{}.Piece(id)
		if !ok {
			return Result{}, fmt.Errorf("%w: token %d not in the vocabulary", ErrBadPrompt, id)
		}
		b.WriteString(text)
	}
	res, err := s.Generate(ctx, b.String(), p, func(text string) bool { return yield(Piece{Text: text, ID: 1}) })
	res.PromptTokens = len(prompt)
	return res, err
}

// vocabFake makes the fake a Vocabulary: a text's tokens are its bytes,
// no special tokens added; ids 256 to 261 are the FIM tokens of fakeFIM.
type vocabFake struct{ *fakeBackend }

var fakeFIM = FIMTokens{Pre: 256, Suf: 257, Mid: 258, Pad: 259, Rep: 260, Sep: 261}

func (b vocabFake) Info() ModelInfo {
	info := b.fakeBackend.Info()
	fim := fakeFIM
	info.FIM = &fim
	return info
}

func (vocabFake) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	return fakeTokens(EmbedInput{Text: text}), nil
}

func (vocabFake) Piece(id int32) (string, bool) {
	switch {
	case id >= 0 && id < fakeVocab:
		return string([]byte{byte(id)}), true
	case id >= fakeFIM.Pre && id <= fakeFIM.Sep:
		return fmt.Sprintf("<FIM%d>", id-fakeFIM.Pre), true
	}
	return "", false
}
