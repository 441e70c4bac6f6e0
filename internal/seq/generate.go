package seq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/lowmem/llm/internal/callgrammar"
	"github.com/lowmem/llm/internal/jsonprefix"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/sampler"
)

// Generation is how Generate samples and when it stops.
type Generation struct {
	sampler.Config          // how to sample; validated by sampler.New
	MaxTokens      int      // at least 1
	Stop           []string // stop strings: generation ends before them
	// Preserve are control tokens whose text is output all the same: the
	// markers a chat reply is parsed by (plain output leaves control
	// tokens out).
	Preserve []int32
	// JSON restricts sampling to the tokens that keep the output the start
	// of one JSON object (jsonprefix.Filter), and ends the generation
	// (FinishEnd) when the object is complete.
	JSON bool
	// JSONSchema, when not empty, is a JSON schema the object must satisfy
	// (jsonprefix.Compile says which keywords); it implies JSON. With
	// JSONLoose it is compiled by jsonprefix.CompileLoose (a forced tool
	// call's arguments), and JSONPrefix and JSONSuffix frame the object
	// (a tool call's markers, which may be control tokens in Preserve).
	JSONSchema             []byte
	JSONLoose              bool
	JSONPrefix, JSONSuffix string
	// CallGrammar, when not nil, holds the output to one tool call in a
	// syntax that is not JSON (callgrammar.Filter: the forced calls of
	// Qwen 3.5's XML form, Seed-OSS's, Gemma 4's) and ends the generation
	// when the call is complete; its markers may be control tokens in
	// Preserve. It is not JSON's to combine with.
	CallGrammar *callgrammar.Grammar
	// Logprobs computes each yielded token's log-probability, and those
	// of the TopLogprobs (0 to MaxTopLogprobs) most likely tokens at its
	// step, for Seq.Logprobs.
	Logprobs    bool
	TopLogprobs int
	// Speculate drafts tokens by prompt lookup and verifies them in one
	// pass (see Lookup); the zero value is off.
	Speculate Lookup
	// Drafting drafts them by the sequence's draft model instead, when it
	// has one (Config.Draft; see Drafting); the zero value is off.
	Drafting Drafting
	// LoRA, when not nil, are the scales of the model's LoRA adapters for
	// this generation, by adapter index (those not listed 0, as
	// llama-server's per-request "lora"); nil takes the adapters' own.
	// When the scales change the sequence forgets what it held first.
	LoRA map[int]float32
}

// Finish says why a generation ended.
type Finish string

// Reasons a generation ends. A generation that fails (context full,
// cancelled, closed) reports FinishNone with its error.
const (
	FinishNone   Finish = ""
	FinishEnd    Finish = "end"    // the model produced an end-of-generation token
	FinishStop   Finish = "stop"   // a stop string
	FinishLength Finish = "length" // MaxTokens tokens
	FinishCaller Finish = "caller" // the caller stopped reading (yield returned false)
)

// Usage reports what the last Generate or GenerateFrom call did.
type Usage struct {
	PromptTokens    int           // tokens of the prompt
	ReusedTokens    int           // of them, kept from the cache: not evaluated again
	GeneratedTokens int           // tokens sampled and handed to yield
	Finish          Finish        // why generation ended
	PromptTime      time.Duration // evaluating the prompt's new tokens
	GenerateTime    time.Duration // sampling and evaluating the generated tokens
	// DraftTokens are the tokens speculation (Generation.Speculate, or
	// the draft model's Generation.Drafting) drafted and evaluated; AcceptedTokens, of them, those that sampling
	// confirmed and the generation went on after without a pass of their
	// own (not a confirmed token that ended it: an end-of-generation
	// token, one that completed a stop string or whose yield returned
	// false, which settle evaluates alone as plain generation does).
	// GeneratedTokens counts the tokens yielded, drafted or not.
	DraftTokens    int
	AcceptedTokens int
}

// Usage reports the last Generate or GenerateFrom call, or the tokens of
// the last call Scored records.
func (s *Seq) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// Scored records a call that evaluated tokens without generating (a
// reranking) as the sequence's usage: PromptTokens, nothing else.
func (s *Seq) Scored(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = Usage{PromptTokens: tokens}
}

// Generate evaluates prompt after the sequence's tokens and samples a
// continuation until an end-of-generation token, a stop string or
// g.MaxTokens, handing yield each token and the text it releases (see
// textOut). The prompt of an empty sequence starts with the
// beginning-of-sequence token; text appended to tokens already held is
// tokenized as their continuation (Vocab.EncodeContinuation: no
// SentencePiece space prefix in the middle of a text).
//
// When Generate returns, the sequence holds exactly the text yielded: the
// prompt and the generated tokens whose text was handed out, the last one
// included when yield returned false; not the tokens of text held back
// (the start of a possible stop string, an incomplete UTF-8 character) nor
// the end-of-generation token; and when a stop string begins inside a
// token, the text before it, tokenized again. The same holds after a
// cancelled context (the last token is evaluated regardless) and when the
// context is full (the token that does not fit is not yielded). After
// ErrClosed or a panic the sequence holds what it had evaluated.
//
// A sampler that applies penalties gets a copy of the logits (a buffer kept
// for the next calls), so Logits is never changed by sampling.
func (s *Seq) Generate(ctx context.Context, prompt string, g Generation, yield func(id int32, text string) bool) error {
	return s.generate(ctx, g, yield, func() error {
		var ids []int32
		if n := len(s.history); n == 0 {
			ids = s.cfg.Vocab.Encode(prompt, true)
		} else {
			ids = s.cfg.Vocab.EncodeContinuation(s.history[n-1], prompt)
		}
		if len(ids) > 0 {
			start := time.Now()
			if err := s.eval(ctx, ids, nil); err != nil {
				return err
			}
			s.setUsage(func(u *Usage) { u.PromptTokens, u.PromptTime = len(ids), time.Since(start) })
		} else if len(s.history) == 0 {
			return fmt.Errorf("llm: empty prompt and empty session: nothing to continue: %w", ErrInvalidOption)
		}
		return nil
	})
}

// GenerateFrom is Generate for a prompt that is the whole sequence: the
// sequence is made to hold exactly prompt (Hold: the prefix it shares with
// the tokens held is reused, the rest evaluated) and a continuation is
// sampled after it.
func (s *Seq) GenerateFrom(ctx context.Context, prompt []int32, g Generation, yield func(id int32, text string) bool) error {
	if ctx != nil && len(prompt) == 0 { // a nil context is reported first, as by generate
		return fmt.Errorf("llm: a prompt of no tokens: %w", ErrInvalidOption)
	}
	return s.generate(ctx, g, yield, func() error {
		start := time.Now()
		reused, err := s.hold(ctx, prompt)
		if err != nil {
			return err
		}
		s.setUsage(func(u *Usage) {
			u.PromptTokens, u.ReusedTokens, u.PromptTime = len(prompt), reused, time.Since(start)
		})
		return nil
	})
}

// generate is one generation: it takes the sequence, checks g, has
// evalPrompt bring the prompt in (and report it in the usage), and samples
// after it.
func (s *Seq) generate(ctx context.Context, g Generation, yield func(id int32, text string) bool, evalPrompt func() error) error {
	if err := s.enterCtx(ctx); err != nil {
		return err
	}
	defer s.leave()
	if err := s.m.Generative(); err != nil {
		return fmt.Errorf("llm: %w", err)
	}
	smp, jf, err := s.begin(g)
	if err != nil {
		return err
	}
	if err := s.setLoRA(g.LoRA); err != nil {
		return err
	}
	if err := evalPrompt(); err != nil {
		return err
	}
	return s.sample(ctx, smp, jf, g, yield)
}

// setUsage changes the usage report under the lock its readers take.
func (s *Seq) setUsage(f func(u *Usage)) {
	s.mu.Lock()
	f(&s.usage)
	s.mu.Unlock()
}

// begin checks a generation's settings and starts its usage report.
func (s *Seq) begin(g Generation) (*sampler.Sampler, constraint, error) {
	s.setUsage(func(u *Usage) { *u = Usage{} })
	if g.MaxTokens < 1 {
		return nil, nil, fmt.Errorf("llm: max tokens %d must be at least 1: %w", g.MaxTokens, ErrInvalidOption)
	}
	if slices.Contains(g.Stop, "") {
		return nil, nil, fmt.Errorf("llm: empty stop string: %w", ErrInvalidOption)
	}
	if g.TopLogprobs < 0 || g.TopLogprobs > MaxTopLogprobs {
		return nil, nil, fmt.Errorf("llm: top logprobs %d outside [0, %d]: %w", g.TopLogprobs, MaxTopLogprobs, ErrInvalidOption)
	}
	if err := g.Speculate.Check(); err != nil {
		return nil, nil, err
	}
	if err := g.Drafting.Check(); err != nil {
		return nil, nil, err
	}
	if most, _ := s.draftSizes(g); most > 0 && len(s.draft) < most+1 {
		s.draft = make([]int32, most+1)
	}
	s.mu.Lock()
	s.logprob, s.top = 0, nil
	s.mu.Unlock()
	smp, err := sampler.New(g.Config, s.m.Vocab)
	if err != nil {
		return nil, nil, optionError{err}
	}
	switch {
	case g.CallGrammar != nil && (g.JSON || len(g.JSONSchema) > 0):
		return nil, nil, fmt.Errorf("llm: a forced call whose syntax is not JSON cannot be JSON output too: %w", ErrInvalidOption)
	case g.CallGrammar != nil:
		return smp, callgrammar.NewFilter(preserved{s, g.Preserve}, g.CallGrammar), nil
	case len(g.JSONSchema) > 0:
		compile := jsonprefix.Compile
		if g.JSONLoose {
			compile = jsonprefix.CompileLoose
		}
		schema, err := compile(g.JSONSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("llm: %w: %w", err, ErrInvalidOption)
		}
		var v jsonprefix.Pieces = s.cfg.Vocab
		if g.JSONPrefix != "" || g.JSONSuffix != "" {
			schema = schema.Framed(g.JSONPrefix, g.JSONSuffix)
			v = preserved{s, g.Preserve} // the markers may be control tokens
		}
		return smp, jsonprefix.NewFilter(v, s.m.Vocab, schema), nil
	case g.JSON:
		return smp, jsonprefix.NewFilter(s.cfg.Vocab, s.m.Vocab, nil), nil
	}
	return smp, nil, nil
}

// constraint holds sampling to a grammar: JSON's (jsonprefix.Filter) or a
// forced call's in a syntax that is not JSON (callgrammar.Filter).
type constraint interface {
	sampler.Allower
	Accept(id int32) bool
	Done() bool
}

// preserved is the vocabulary as output reads with Generation.Preserve:
// the control tokens listed keep their text.
type preserved struct {
	s   *Seq
	ids []int32
}

func (p preserved) OutputPiece(id int32) []byte { return p.s.piece(id, p.ids) }

// piece is the text token id adds to the output: its output text, or for a
// control token listed in preserve its own text.
func (s *Seq) piece(id int32, preserve []int32) []byte {
	p := s.cfg.Vocab.OutputPiece(id)
	if len(p) == 0 && slices.Contains(preserve, id) {
		p = s.cfg.Vocab.Piece(id)
	}
	return p
}

// sample generates after the tokens held, whose logits are current, then
// settles the sequence on the text yielded (see Generate).
func (s *Seq) sample(ctx context.Context, smp *sampler.Sampler, jf constraint, g Generation, yield func(id int32, text string) bool) error {
	start := time.Now()
	t := tally{pending: -1}
	err := s.loop(ctx, smp, jf, g, yield, &t)
	if t.spec > 0 {
		// Drafts no sample confirmed, or whose token was not kept.
		s.truncate(len(s.history) - t.spec)
	}
	if err == nil || !errors.Is(err, ErrClosed) {
		// After a cancelled context the text yielded is settled all the
		// same: the last token costs one more step.
		if serr := s.settle(context.WithoutCancel(ctx), &t, g.Preserve); err == nil {
			err = serr
		}
	}
	s.setUsage(func(u *Usage) {
		u.GeneratedTokens, u.GenerateTime = t.yielded, time.Since(start)
		u.DraftTokens, u.AcceptedTokens = t.drafted, t.accepted
		if err == nil {
			u.Finish = t.finish
		}
	})
	return err
}

// tally is what the sampling loop did: the tokens and text it produced.
type tally struct {
	yielded   int    // tokens handed to yield
	evaluated int    // generated tokens evaluated into the sequence
	pending   int32  // a token yielded but not evaluated, or -1
	total     int    // bytes of text the generated tokens carry
	shown     int    // of them, bytes handed to yield
	finish    Finish // why sampling ended
	// spec is how many tokens at the end of the history are drafts that
	// sampling has not confirmed yet (the first of them, at the stop that
	// ends a generation, may be the token sampled last); drafted and
	// accepted count drafts as Usage does.
	spec, drafted, accepted int
}

// loop samples and evaluates tokens until generation ends; jf, when not
// nil, holds the output to its grammar (JSON, or a forced call's).
func (s *Seq) loop(ctx context.Context, smp *sampler.Sampler, jf constraint, g Generation, yield func(id int32, text string) bool, t *tally) error {
	// Sampling changes the logits it is given when it applies penalties
	// or a constraint; Logits must not see that.
	private := smp.Penalized() || jf != nil
	logits := s.logits
	if private {
		if len(s.scratch) != len(s.logits) {
			s.scratch = make([]float32, len(s.logits))
		}
		logits = s.scratch
	}
	out := newTextOut(g.Stop)
	drafts := s.drafting(g)
	var rows []float32 // the last verification pass's logits, a row a token
	row := 0           // the row s.logits holds
	for range g.MaxTokens {
		if s.closed.Load() {
			return ErrClosed
		}
		if private {
			copy(logits, s.logits)
		}
		// The history the plain loop would have: no unconfirmed drafts.
		history := s.history[:len(s.history)-t.spec]
		var id int32
		if jf != nil {
			if id = smp.SampleAllowed(logits, history, jf); id < 0 {
				return fmt.Errorf("llm: %s: no token of the vocabulary continues it after %d tokens: %w", constrained(g), t.yielded, ErrInvalidOption)
			}
			jf.Accept(id)
		} else {
			id = smp.Sample(logits, history)
		}
		// A draft the sample confirms is evaluated already; one it does
		// not goes, with the drafts after it.
		confirmed := t.spec > 0 && id == s.history[len(history)]
		if t.spec > 0 && !confirmed {
			s.truncate(len(history))
			t.spec = 0
		}
		if s.cfg.Vocab.IsEOG(id) {
			t.finish = FinishEnd
			break
		}
		if !confirmed && !s.cfg.Shift && len(s.history) >= s.cfg.Context {
			// Not yielded: the sequence could not hold it.
			return fmt.Errorf("llm: generation reached the context size %d: %w", s.cfg.Context, kv.ErrFull)
		}
		piece := s.piece(id, g.Preserve)
		if g.Logprobs {
			s.setLogprobs(id, g.TopLogprobs)
		}
		t.total += len(piece)
		t.yielded++
		t.pending = id
		text, stop := out.add(piece)
		t.shown += len(text)
		if stop {
			t.finish = FinishStop
			if text != "" {
				yield(id, text)
			}
			return nil
		}
		if !yield(id, text) {
			t.finish = FinishCaller
			return nil
		}
		if confirmed {
			t.spec--
			t.accepted++
			row++
			copy(s.logits, rows[row*len(s.logits):(row+1)*len(s.logits)])
		} else {
			var err error
			if rows, err = s.step(ctx, id, drafts, g, t); err != nil {
				return err
			}
			row = 0
		}
		t.pending = -1
		t.evaluated++
		if jf != nil && jf.Done() {
			t.finish = FinishEnd
			break
		}
	}
	if t.finish == FinishNone {
		t.finish = FinishLength
	}
	if rest := out.flush(); rest != "" {
		t.shown += len(rest)
		yield(-1, rest)
	}
	return nil
}

// settle makes the sequence hold exactly the text yielded (see Generate):
// it drops the generated tokens whose text was not handed out, from the
// end; tokenizes again the shown start of a token cut by a stop string;
// and evaluates the token yielded last if it is kept and not evaluated.
func (s *Seq) settle(ctx context.Context, t *tally, preserve []int32) error {
	unshown := t.total - t.shown
	keepPending := t.pending >= 0
	var tail []byte // the shown start of the token the cut falls in
	cut := func(p []byte) {
		if unshown < len(p) {
			tail = p[:len(p)-unshown]
		}
		unshown -= len(p)
	}
	if unshown > 0 && t.pending >= 0 {
		keepPending = false
		cut(s.piece(t.pending, preserve))
	}
	drop := 0
	for unshown > 0 && drop < min(t.evaluated, len(s.history)) {
		drop++
		cut(s.piece(s.history[len(s.history)-drop], preserve))
	}
	if drop > 0 {
		s.truncate(len(s.history) - drop)
	}
	var ids []int32
	switch {
	case keepPending:
		s.one[0] = t.pending
		ids = s.one[:]
	case len(tail) > 0 && len(s.history) > 0:
		ids = s.cfg.Vocab.EncodeContinuation(s.history[len(s.history)-1], string(tail))
	}
	if len(ids) == 0 {
		return nil
	}
	return s.eval(ctx, ids, nil)
}

// optionError is a sampling option the sampler refused. It reads as the
// sampler's own message (which names the field) and matches both
// ErrInvalidOption and sampler.ErrInvalidOption.
type optionError struct{ err error }

func (e optionError) Error() string   { return "llm: " + e.err.Error() }
func (e optionError) Unwrap() []error { return []error{e.err, ErrInvalidOption} }

// textOut turns token pieces into text that is safe to hand out: whole
// UTF-8 characters, and nothing that might be the start of a stop string.
// Each stop string is matched as the bytes arrive (Knuth–Morris–Pratt), so
// a piece costs time in its own length whatever the stop strings' length.
type textOut struct {
	stops   []stopMatch
	pending []byte
}

// stopMatch follows one stop string through the text.
type stopMatch struct {
	s    string
	fail []int32 // fail[i]: the longest proper prefix of s[:i+1] that is also its suffix
	at   int     // the longest prefix of s the text ends with
}

func newTextOut(stops []string) textOut {
	o := textOut{stops: make([]stopMatch, len(stops))}
	for i, st := range stops {
		m := stopMatch{s: st, fail: make([]int32, len(st))}
		for j, k := 1, int32(0); j < len(st); j++ {
			for k > 0 && st[j] != st[k] {
				k = m.fail[k-1]
			}
			if st[j] == st[k] {
				k++
			}
			m.fail[j] = k
		}
		o.stops[i] = m
	}
	return o
}

// step advances the match by one byte of text and reports whether the stop
// string is complete.
func (m *stopMatch) step(b byte) bool {
	for m.at > 0 && m.s[m.at] != b {
		m.at = int(m.fail[m.at-1])
	}
	if m.s[m.at] == b {
		m.at++
	}
	if m.at == len(m.s) {
		m.at = int(m.fail[m.at-1])
		return true
	}
	return false
}

// add appends a piece and returns the text that can be released, and
// whether a stop string was found (the text then ends before it).
func (o *textOut) add(piece []byte) (string, bool) {
	for i, b := range piece {
		for j := range o.stops {
			if m := &o.stops[j]; m.step(b) {
				o.pending = append(o.pending, piece[:i+1]...)
				out := string(o.pending[:len(o.pending)-len(m.s)])
				o.pending = o.pending[:0]
				return out, true
			}
		}
	}
	o.pending = append(o.pending, piece...)
	p := o.pending
	// Hold back an incomplete UTF-8 sequence at the end.
	keep := 0
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				keep = len(p) - i
			}
			break
		}
	}
	// Hold back the longest end that begins a stop string.
	for j := range o.stops {
		keep = max(keep, o.stops[j].at)
	}
	if keep == len(p) {
		return "", false
	}
	out := string(p[:len(p)-keep])
	o.pending = append(o.pending[:0], p[len(p)-keep:]...)
	return out, false
}

// flush returns whatever is still held back.
func (o *textOut) flush() string {
	s := string(o.pending)
	o.pending = o.pending[:0]
	return s
}

// constrained names the output g constrains, for errors.
func constrained(g Generation) string {
	if g.CallGrammar != nil {
		return "forced tool call"
	}
	return "JSON output"
}

// setLoRA gives the sequence's state the scales of a generation (nil:
// the adapters' own), forgetting every token held when the scales the
// state computes with change: its cache was computed with others.
func (s *Seq) setLoRA(scales map[int]float32) error {
	var sc []float32
	if scales != nil {
		sc = make([]float32, s.m.Adapters)
		for id, v := range scales {
			if err := CheckLoRAScale(id, len(sc), v); err != nil {
				return err
			}
			sc[id] = v
		}
	}
	changed, err := s.st.SetLoRAScales(sc)
	if err != nil {
		return err
	}
	if changed {
		s.truncate(0)
	}
	return nil
}

// CheckLoRAScale refuses (ErrInvalidOption) a scale for adapter id of a
// model with n adapters when there is no such adapter or the scale is
// not finite.
func CheckLoRAScale(id, n int, scale float32) error {
	if id < 0 || id >= n {
		return fmt.Errorf("llm: LoRA adapter %d: the model has %d: %w", id, n, ErrInvalidOption)
	}
	if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return fmt.Errorf("llm: LoRA adapter %d: scale %v is not finite: %w", id, scale, ErrInvalidOption)
	}
	return nil
}

// LoRAScales are the adapter scales the sequence's last generation set
// (nil: the adapters' own): ErrClosed once closed, ErrBusy while another
// call runs.
func (s *Seq) LoRAScales() ([]float32, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	return slices.Clone(s.st.LoRAScales()), nil
}
