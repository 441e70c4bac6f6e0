package llm

import (
	"fmt"
	"log/slog"
	"math"
	"runtime"

	"github.com/lowmem/llm/kv"
)

// KVType is the element type of a session's KV cache.
type KVType int

// KV cache element types. KVF16 matches llama.cpp's default; KVInt8 halves
// the cache at a small cost in accuracy; KVInt4 stores llama.cpp's q4_0
// blocks with its Walsh–Hadamard rotation of keys and values (28% of F16's
// memory), for models whose head sizes are multiples of 32.
const (
	KVF16  KVType = KVType(kv.F16)
	KVInt8 KVType = KVType(kv.Int8)
	KVInt4 KVType = KVType(kv.Int4)
)

func (t KVType) String() string {
	switch t {
	case KVF16:
		return "f16"
	case KVInt8:
		return "int8"
	case KVInt4:
		return "int4"
	}
	return fmt.Sprintf("KVType(%d)", int(t))
}

// settings are the values Load and NewSession options set.
type settings struct {
	context int // 0 = the model's trained context length
	threads int
	kvType  KVType
	batch   int
	memory  int64
	weights WeightsMode
	strict  bool
	logger  *slog.Logger

	pressure func(PressureEvent) // WithMemoryPressure (stream.go)

	kvPrealloc bool // WithKVPreallocate (kvgrow.go)
	shift      bool // WithContextShift (shift.go)
	shiftKeep  int
	errs       []error
}

func defaultSettings() settings {
	return settings{threads: runtime.GOMAXPROCS(0), batch: 512, logger: slog.Default()}
}

func (s *settings) fail(format string, a ...any) {
	s.errs = append(s.errs, fmt.Errorf("llm: "+format+": %w", append(a, ErrInvalidOption)...))
}

// Option configures Load. Options that also make sense per session
// (WithContextSize, WithKVType, WithBatchSize) are SessionOptions too: given
// to Load they set the default for every session of the model.
type Option interface {
	applyModel(*settings)
}

// SessionOption configures NewSession, overriding what Load was given.
type SessionOption interface {
	applySession(*settings)
}

type bothOption func(*settings)

func (f bothOption) applyModel(s *settings)   { f(s) }
func (f bothOption) applySession(s *settings) { f(s) }

type modelOption func(*settings)

func (f modelOption) applyModel(s *settings) { f(s) }

// WithContextSize sets the context length in tokens: the most tokens a
// session can hold. The default is the model's trained context length. A
// larger value than the model was trained for is allowed and logged.
func WithContextSize(n int) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *settings) {
		if n < 1 || n > 1<<24 {
			s.fail("context size %d out of range [1, %d]", n, 1<<24)
			return
		}
		s.context = n
	})
}

// WithKVType sets the KV cache element type (KVF16 by default). KVInt4
// needs head sizes that are multiples of 32; NewSession refuses it for
// other models.
func WithKVType(t KVType) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *settings) {
		if t != KVF16 && t != KVInt8 && t != KVInt4 {
			s.fail("KV type %v not supported (KVF16, KVInt8, KVInt4)", t)
			return
		}
		s.kvType = t
	})
}

// WithBatchSize sets how many prompt tokens are processed per forward pass
// (default 512). Activation memory grows with it; prompts longer than it
// are processed in chunks.
func WithBatchSize(n int) interface {
	Option
	SessionOption
} {
	return bothOption(func(s *settings) {
		if n < 1 || n > 1<<16 {
			s.fail("batch size %d out of range [1, 65536]", n)
			return
		}
		s.batch = n
	})
}

// WithThreads sets how many threads compute (default: GOMAXPROCS, which
// follows the cgroup CPU quota). The threads are created once, at Load.
func WithThreads(n int) Option {
	return modelOption(func(s *settings) {
		if n < 1 || n > 1024 {
			s.fail("threads %d out of range [1, 1024]", n)
			return
		}
		s.threads = n
	})
}

// WithMemoryLimit sets the memory budget in bytes that Load plans against.
// 0 (the default) detects it from the cgroup and /proc/meminfo.
func WithMemoryLimit(bytes int64) Option {
	return modelOption(func(s *settings) {
		if bytes < 0 {
			s.fail("memory limit %d is negative", bytes)
			return
		}
		s.memory = bytes
	})
}

// WithLogger sets where Load and sessions log warnings and decisions
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return modelOption(func(s *settings) {
		if l != nil {
			s.logger = l
		}
	})
}

// genSettings are the values GenerateOptions set.
type genSettings struct {
	maxTokens int
	temp      float32
	topK      int
	topP      float32
	minP      float32
	repeat    float32
	freq      float32
	presence  float32
	lastN     int
	seed      uint64
	stop      []string
	errs      []error
}

func defaultGen() genSettings {
	return genSettings{maxTokens: 128, temp: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeat: 1, lastN: 64, seed: 0xC0FFEE}
}

func (g *genSettings) fail(format string, a ...any) {
	g.errs = append(g.errs, fmt.Errorf("llm: "+format+": %w", append(a, ErrInvalidOption)...))
}

// GenerateOption configures one Generate or Stream call. The defaults are
// llama.cpp's: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, no
// penalties, 128 tokens.
type GenerateOption func(*genSettings)

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

// MaxTokens limits how many tokens are generated (default 128).
func MaxTokens(n int) GenerateOption {
	return func(g *genSettings) {
		if n < 1 {
			g.fail("max tokens %d must be at least 1", n)
			return
		}
		g.maxTokens = n
	}
}

// Temperature sets the sampling temperature; 0 is greedy decoding (always
// the most likely token).
func Temperature(t float32) GenerateOption {
	return func(g *genSettings) {
		if !finite(t) || t < 0 {
			g.fail("temperature %v must be >= 0", t)
			return
		}
		g.temp = t
	}
}

// TopK keeps only the k most likely tokens; 0 disables the filter.
func TopK(k int) GenerateOption {
	return func(g *genSettings) {
		if k < 0 {
			g.fail("top-k %d must be >= 0", k)
			return
		}
		g.topK = k
	}
}

// TopP keeps the smallest set of tokens whose probability adds up to p;
// 1 disables the filter.
func TopP(p float32) GenerateOption {
	return func(g *genSettings) {
		if !finite(p) || p <= 0 || p > 1 {
			g.fail("top-p %v must be in (0, 1]", p)
			return
		}
		g.topP = p
	}
}

// MinP drops tokens less likely than p times the most likely one; 0
// disables the filter.
func MinP(p float32) GenerateOption {
	return func(g *genSettings) {
		if !finite(p) || p < 0 || p > 1 {
			g.fail("min-p %v must be in [0, 1]", p)
			return
		}
		g.minP = p
	}
}

// RepeatPenalty divides the logits of recently seen tokens by penalty (when
// positive; multiplies when negative); 1 disables it. lastN options are set
// with PenaltyLastN.
func RepeatPenalty(penalty float32) GenerateOption {
	return func(g *genSettings) {
		if !finite(penalty) || penalty <= 0 {
			g.fail("repeat penalty %v must be > 0", penalty)
			return
		}
		g.repeat = penalty
	}
}

// FrequencyPenalty subtracts penalty × (times seen) from recent tokens' logits.
func FrequencyPenalty(penalty float32) GenerateOption {
	return func(g *genSettings) {
		if !finite(penalty) {
			g.fail("frequency penalty %v is not finite", penalty)
			return
		}
		g.freq = penalty
	}
}

// PresencePenalty subtracts penalty from the logits of tokens seen recently.
func PresencePenalty(penalty float32) GenerateOption {
	return func(g *genSettings) {
		if !finite(penalty) {
			g.fail("presence penalty %v is not finite", penalty)
			return
		}
		g.presence = penalty
	}
}

// PenaltyLastN sets how many recent tokens the penalties look at (default
// 64; -1 means the whole session).
func PenaltyLastN(n int) GenerateOption {
	return func(g *genSettings) {
		if n < -1 {
			g.fail("penalty last-n %d must be >= -1", n)
			return
		}
		g.lastN = n
	}
}

// Seed makes sampling reproducible: the same seed, prompt and options give
// the same text.
func Seed(seed uint64) GenerateOption {
	return func(g *genSettings) { g.seed = seed }
}

// Stop ends generation when the output contains any of the strings; the
// stop string itself is not returned.
func Stop(stops ...string) GenerateOption {
	return func(g *genSettings) {
		for _, s := range stops {
			if s == "" {
				g.fail("empty stop string")
				return
			}
		}
		g.stop = append(g.stop, stops...)
	}
}
