package sampler

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidOption is wrapped by every error New and Config.Validate return,
// so callers can test for it with errors.Is.
var ErrInvalidOption = errors.New("sampler: invalid option")

// Config selects the sampling chain. The filters run in llama.cpp's default
// order: penalties, top-k, top-p, min-p, temperature, then a seeded draw.
//
// The zero value is not valid (TopP and RepeatPenalty must be set; 1 turns
// them off); start from DefaultConfig or GreedyConfig.
type Config struct {
	// Temperature divides the logits before the draw. 0 means greedy: the
	// token with the highest (penalized) logit, ties to the lowest id.
	// Must be >= 0 and finite.
	Temperature float32

	// TopK keeps the K highest logits (ties to the lowest ids). 0 turns it
	// off. Must be >= 0.
	TopK int

	// TopP keeps the smallest set of most likely tokens whose probabilities
	// (softmax of the logits after top-k, before temperature) sum to at
	// least TopP. 1 turns it off. Must be in (0, 1].
	TopP float32

	// MinP keeps tokens whose probability is at least MinP times that of
	// the most likely token. 0 turns it off. Must be in [0, 1].
	MinP float32

	// RepeatPenalty divides positive logits and multiplies non-positive
	// logits of tokens seen in the penalty window. 1 turns it off. Must be
	// > 0 and finite.
	RepeatPenalty float32

	// FrequencyPenalty is subtracted once per occurrence of a token in the
	// penalty window; PresencePenalty once if it occurs at all. 0 turns
	// them off. Negative values encourage repetition. Must be finite.
	FrequencyPenalty, PresencePenalty float32

	// PenaltyLastN is how many of the most recent history tokens the
	// penalties look at: 0 means the default of 64, -1 the whole history.
	// To switch penalties off, leave them at their neutral values.
	PenaltyLastN int

	// Seed fully determines the random draws: the same seed, config,
	// logits and history give the same tokens. Pick a random seed yourself
	// if you want different output on every run.
	Seed uint64
}

// DefaultPenaltyLastN is the penalty window used when Config.PenaltyLastN
// is 0, as in llama.cpp.
const DefaultPenaltyLastN = 64

// DefaultConfig returns llama.cpp's default sampling settings (temperature
// 0.8, top-k 40, top-p 0.95, min-p 0.05, no penalties) with the given seed.
func DefaultConfig(seed uint64) Config {
	return Config{
		Temperature:   0.8,
		TopK:          40,
		TopP:          0.95,
		MinP:          0.05,
		RepeatPenalty: 1,
		PenaltyLastN:  DefaultPenaltyLastN,
		Seed:          seed,
	}
}

// GreedyConfig returns a config that always picks the highest logit,
// ties to the lowest token id, with no penalties.
func GreedyConfig() Config {
	return Config{TopP: 1, RepeatPenalty: 1}
}

// Validate reports the first out-of-range field, wrapping ErrInvalidOption.
func (c Config) Validate() error {
	floats := []struct {
		name string
		v    float32
	}{
		{"temperature", c.Temperature},
		{"top_p", c.TopP},
		{"min_p", c.MinP},
		{"repeat_penalty", c.RepeatPenalty},
		{"frequency_penalty", c.FrequencyPenalty},
		{"presence_penalty", c.PresencePenalty},
	}
	for _, f := range floats {
		if math.IsNaN(float64(f.v)) || math.IsInf(float64(f.v), 0) {
			return fmt.Errorf("sampler: %s is %v, want a finite number: %w", f.name, f.v, ErrInvalidOption)
		}
	}
	switch {
	case c.Temperature < 0:
		return fmt.Errorf("sampler: temperature %v is negative (0 means greedy): %w", c.Temperature, ErrInvalidOption)
	case c.TopK < 0:
		return fmt.Errorf("sampler: top_k %d is negative (0 turns it off): %w", c.TopK, ErrInvalidOption)
	case c.TopP <= 0 || c.TopP > 1:
		return fmt.Errorf("sampler: top_p %v outside (0, 1] (1 turns it off): %w", c.TopP, ErrInvalidOption)
	case c.MinP < 0 || c.MinP > 1:
		return fmt.Errorf("sampler: min_p %v outside [0, 1] (0 turns it off): %w", c.MinP, ErrInvalidOption)
	case c.RepeatPenalty <= 0:
		return fmt.Errorf("sampler: repeat_penalty %v must be positive (1 turns it off): %w", c.RepeatPenalty, ErrInvalidOption)
	case c.PenaltyLastN < -1:
		return fmt.Errorf("sampler: penalty_last_n %d below -1 (-1 means the whole history): %w", c.PenaltyLastN, ErrInvalidOption)
	}
	return nil
}
