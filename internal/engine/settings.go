package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
)

// Settings is what the options of llm.Load and llm.(*Model).NewSession
// set: Options, and why the options out of range were refused. Its
// setters check a value before taking it, so an option is one call.
type Settings struct {
	Options
	errs []error
}

// DefaultOptions are Load's defaults: a thread per CPU the process may
// use, batches of 512 tokens, repacking allowed, slog.Default.
func DefaultOptions() Options {
	return Options{Request: memplan.Request{Threads: runtime.GOMAXPROCS(0), Batch: 512, Repack: true}, Logger: slog.Default()}
}

// Build applies options (through apply) to base and reports every value
// they were refused, joined, each wrapping seq.ErrInvalidOption.
func Build(base Options, apply func(*Settings)) (Options, error) {
	s := Settings{Options: base}
	apply(&s)
	return s.Options, errors.Join(s.errs...)
}

// Fail refuses an option: the error reads "llm: " and the formatted text.
func (s *Settings) Fail(format string, a ...any) {
	s.errs = append(s.errs, fmt.Errorf("llm: "+format+": %w", append(a, seq.ErrInvalidOption)...))
}

// SetLogger takes l, unless it is nil (the default stays).
func (s *Settings) SetLogger(l *slog.Logger) {
	if l != nil {
		s.Logger = l
	}
}

// SetInt sets *dst to the option value n when it is within [lo, hi].
func (s *Settings) SetInt(dst *int, name string, n, lo, hi int) {
	if n < lo || n > hi {
		s.Fail("%s %d out of range [%d, %d]", name, n, lo, hi)
		return
	}
	*dst = n
}

// SetKVType takes a KV cache type the kv package has.
func (s *Settings) SetKVType(t kv.Type) {
	if t != kv.F16 && t != kv.Int8 && t != kv.Int4 {
		s.Fail("KV type %v not supported (KVF16, KVInt8, KVInt4)", t)
		return
	}
	s.KVType = t
}

// SetShift turns the context shift on, keeping keep tokens (Load and
// NewSession check keep against the context).
func (s *Settings) SetShift(keep int) {
	if keep < 0 {
		s.Fail("context shift keep %d must not be negative", keep)
		return
	}
	s.Shift, s.Keep = true, keep
}

// SetLimit sets the memory limit; 0 detects it.
func (s *Settings) SetLimit(bytes int64) {
	if bytes < 0 {
		s.Fail("memory limit %d is negative", bytes)
		return
	}
	s.Limit = bytes
}

// SetWeights sets how the weights are kept.
func (s *Settings) SetWeights(w memplan.WeightsMode) {
	if w < memplan.WeightsAuto || w > memplan.WeightsStreaming {
		s.Fail("weights mode %d not supported", int(w))
		return
	}
	s.Weights = w
}
