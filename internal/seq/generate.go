package seq

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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
}

// Usage reports the last Generate or GenerateFrom call.
func (s *Seq) Usage() Usage { return s.usage }

// Generate evaluates prompt after the sequence's tokens (with the
// beginning-of-sequence token when the sequence is empty) and samples a
// continuation until an end-of-generation token, a stop string or
// g.MaxTokens, handing yield each token and the text it releases (see
// textOut). Each token yielded is then evaluated into the sequence,
// except one that completed a stop string (so that the sequence continues
// cleanly) and the last one when yield returns false, which ends Generate
// at once.
//
// A sampler that applies penalties gets a copy of the logits (a buffer kept
// for the next calls), so Logits is never changed by sampling.
func (s *Seq) Generate(ctx context.Context, prompt string, g Generation, yield func(id int32, text string) bool) error {
	smp, err := s.begin(g)
	if err != nil {
		return err
	}
	if ids := s.cfg.Vocab.Encode(prompt, len(s.history) == 0); len(ids) > 0 {
		start := time.Now()
		if _, err := s.Eval(ctx, ids); err != nil {
			return err
		}
		s.usage.PromptTokens, s.usage.PromptTime = len(ids), time.Since(start)
	} else if len(s.history) == 0 {
		return fmt.Errorf("llm: empty prompt and empty session: nothing to continue: %w", ErrInvalidOption)
	}
	return s.sample(ctx, smp, g, yield)
}

// GenerateFrom is Generate for a prompt that is the whole sequence: the
// sequence is made to hold exactly prompt (Hold: the prefix it shares with
// the tokens held is reused, the rest evaluated) and a continuation is
// sampled after it.
func (s *Seq) GenerateFrom(ctx context.Context, prompt []int32, g Generation, yield func(id int32, text string) bool) error {
	smp, err := s.begin(g)
	if err != nil {
		return err
	}
	start := time.Now()
	reused, err := s.Hold(ctx, prompt)
	if err != nil {
		return err
	}
	s.usage.PromptTokens, s.usage.ReusedTokens, s.usage.PromptTime = len(prompt), reused, time.Since(start)
	return s.sample(ctx, smp, g, yield)
}

// begin checks a generation's settings and starts its usage report.
func (s *Seq) begin(g Generation) (*sampler.Sampler, error) {
	s.usage = Usage{}
	if s.closed {
		return nil, ErrClosed
	}
	if g.MaxTokens < 1 {
		return nil, fmt.Errorf("llm: max tokens %d must be at least 1: %w", g.MaxTokens, ErrInvalidOption)
	}
	if slices.Contains(g.Stop, "") {
		return nil, fmt.Errorf("llm: empty stop string: %w", ErrInvalidOption)
	}
	smp, err := sampler.New(g.Config, s.m.Vocab)
	if err != nil {
		return nil, optionError{err}
	}
	return smp, nil
}

// sample generates after the tokens held, whose logits are current.
func (s *Seq) sample(ctx context.Context, smp *sampler.Sampler, g Generation, yield func(id int32, text string) bool) error {
	start := time.Now()
	defer func() { s.usage.GenerateTime = time.Since(start) }()
	v := s.cfg.Vocab
	logits := s.logits
	if smp.Penalized() {
		if len(s.scratch) != len(s.logits) {
			s.scratch = make([]float32, len(s.logits))
		}
		logits = s.scratch
	}
	out := textOut{stops: g.Stop}
	u := &s.usage
	for range g.MaxTokens {
		if smp.Penalized() {
			copy(logits, s.logits)
		}
		id := smp.Sample(logits, s.history)
		if v.IsEOG(id) {
			u.Finish = FinishEnd
			break
		}
		u.GeneratedTokens++
		piece := v.OutputPiece(id)
		if len(piece) == 0 && slices.Contains(g.Preserve, id) {
			piece = v.Piece(id)
		}
		text, stop := out.add(piece)
		if stop {
			// The token that completed a stop string stays out of the session
			// so that it can be continued cleanly.
			u.Finish = FinishStop
			if text != "" {
				yield(id, text)
			}
			return nil
		}
		if !yield(id, text) {
			u.Finish = FinishCaller
			return nil
		}
		if !s.cfg.Shift && len(s.history) >= s.cfg.Context {
			return fmt.Errorf("llm: generation reached the context size %d: %w", s.cfg.Context, kv.ErrFull)
		}
		if _, err := s.Eval(ctx, []int32{id}); err != nil {
			return err
		}
	}
	if u.Finish == FinishNone {
		u.Finish = FinishLength
	}
	if rest := out.flush(); rest != "" {
		yield(-1, rest)
	}
	return nil
}

// optionError is a sampling option the sampler refused. It reads as the
// sampler's own message (which names the field) and matches both
// ErrInvalidOption and sampler.ErrInvalidOption.
type optionError struct{ err error }

func (e optionError) Error() string   { return "llm: " + e.err.Error() }
func (e optionError) Unwrap() []error { return []error{e.err, ErrInvalidOption} }

// textOut turns token pieces into text that is safe to hand out: whole
// UTF-8 characters, and nothing that might be the start of a stop string.
type textOut struct {
	stops   []string
	pending []byte
}

// add appends a piece and returns the text that can be released, and
// whether a stop string was found (the text then ends before it).
func (o *textOut) add(piece []byte) (string, bool) {
	o.pending = append(o.pending, piece...)
	s := string(o.pending)
	for _, st := range o.stops {
		if i := strings.Index(s, st); i >= 0 {
			o.pending = o.pending[:0]
			return s[:i], true
		}
	}
	// Hold back an incomplete UTF-8 sequence at the end.
	keep := 0
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				keep = len(s) - i
			}
			break
		}
	}
	// Hold back the longest suffix that begins a stop string.
	for _, st := range o.stops {
		for k := min(len(st)-1, len(s)); k > keep; k-- {
			if strings.HasPrefix(st, s[len(s)-k:]) {
				keep = k
				break
			}
		}
	}
	out := s[:len(s)-keep]
	o.pending = append(o.pending[:0], s[len(s)-keep:]...)
	return out, false
}

// flush returns whatever is still held back.
func (o *textOut) flush() string {
	s := string(o.pending)
	o.pending = o.pending[:0]
	return s
}
