package sampler

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		ok     bool
	}{
		{"default", func(*Config) {}, true},
		{"greedy", func(c *Config) { *c = GreedyConfig() }, true},
		{"top_p 1", func(c *Config) { c.TopP = 1 }, true},
		{"min_p 0", func(c *Config) { c.MinP = 0 }, true},
		{"min_p 1", func(c *Config) { c.MinP = 1 }, true},
		{"negative frequency and presence", func(c *Config) { c.FrequencyPenalty, c.PresencePenalty = -1, -2 }, true},
		{"penalty_last_n -1", func(c *Config) { c.PenaltyLastN = -1 }, true},
		{"penalty_last_n 0", func(c *Config) { c.PenaltyLastN = 0 }, true},
		{"zero value", func(c *Config) { *c = Config{} }, false},
		{"negative temperature", func(c *Config) { c.Temperature = -0.1 }, false},
		{"infinite temperature", func(c *Config) { c.Temperature = inf }, false},
		{"negative top_k", func(c *Config) { c.TopK = -1 }, false},
		{"top_p 0", func(c *Config) { c.TopP = 0 }, false},
		{"top_p above 1", func(c *Config) { c.TopP = 1.01 }, false},
		{"top_p negative", func(c *Config) { c.TopP = -0.5 }, false},
		{"min_p negative", func(c *Config) { c.MinP = -0.01 }, false},
		{"min_p above 1", func(c *Config) { c.MinP = 1.5 }, false},
		{"repeat penalty 0", func(c *Config) { c.RepeatPenalty = 0 }, false},
		{"repeat penalty negative", func(c *Config) { c.RepeatPenalty = -1 }, false},
		{"repeat penalty infinite", func(c *Config) { c.RepeatPenalty = inf }, false},
		{"penalty_last_n -2", func(c *Config) { c.PenaltyLastN = -2 }, false},
		{"NaN temperature", func(c *Config) { c.Temperature = nan }, false},
		{"NaN top_p", func(c *Config) { c.TopP = nan }, false},
		{"NaN min_p", func(c *Config) { c.MinP = nan }, false},
		{"NaN repeat", func(c *Config) { c.RepeatPenalty = nan }, false},
		{"NaN frequency", func(c *Config) { c.FrequencyPenalty = nan }, false},
		{"NaN presence", func(c *Config) { c.PresencePenalty = nan }, false},
		{"infinite presence", func(c *Config) { c.PresencePenalty = -inf }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig(1)
			tt.mutate(&cfg)
			err := cfg.Validate()
			if tt.ok {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if _, err := New(cfg, 10); err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalidOption", err)
			}
			if s, err := New(cfg, 10); s != nil || !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("New = %v, %v; want nil and ErrInvalidOption", s, err)
			}
		})
	}
}

func TestNewVocab(t *testing.T) {
	vocabs := []int{0, -1}
	if strconv.IntSize == 64 {
		past := uint(math.MaxInt32) // a variable: the constant overflows int on 32-bit targets
		vocabs = append(vocabs, int(past+1))
	}
	for _, v := range vocabs {
		if _, err := New(DefaultConfig(1), v); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("New(vocab=%d) error = %v, want ErrInvalidOption", v, err)
		}
	}
}
