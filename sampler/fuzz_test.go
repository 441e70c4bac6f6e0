package sampler

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
)

// FuzzConfig gives New arbitrary Config values and vocabulary sizes, and
// the Sampler arbitrary logits (NaN and ±Inf included) and histories (ids
// outside the vocabulary included). New must never panic; it must fail,
// with an error wrapping ErrInvalidOption, exactly when Validate does or
// the vocabulary size is out of range. A Sampler it returns must pick an
// id in [0, len(logits)) — or -1 for empty logits — and, after Reset, the
// same id again for the same input.
func FuzzConfig(f *testing.F) {
	d := DefaultConfig(1)
	add := func(c Config, vocab int, logits []byte, history []byte) {
		f.Add(c.Temperature, c.TopK, c.TopP, c.MinP, c.RepeatPenalty, c.FrequencyPenalty, c.PresencePenalty,
			c.PenaltyLastN, c.Seed, vocab, logits, history)
	}
	add(d, 8, floatBytes(1, 2, 3, 4, 5, 6, 7, 8), []byte{1, 0, 0, 0, 1, 0, 0, 0})
	add(GreedyConfig(), 4, floatBytes(nan, inf, -inf, 0), nil)
	add(Config{Temperature: 1e-38, TopP: 1e-7, MinP: 1, RepeatPenalty: 3e38, FrequencyPenalty: -3e38, PresencePenalty: 3e38,
		PenaltyLastN: -1, TopK: math.MaxInt}, 3, floatBytes(-inf, 1e30, -1e30), []byte{0, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	add(Config{Temperature: 3e38, TopP: 0.5, MinP: 1e-45, RepeatPenalty: 1e-45}, 5, floatBytes(1, 1, 1, 1, 1), []byte{3, 0, 0, 0})
	add(Config{Temperature: nan, TopP: 1, RepeatPenalty: 1}, 1, nil, nil)
	add(d, 0, nil, nil)
	add(d, -5, nil, nil)
	add(d, math.MaxInt, nil, nil)
	f.Fuzz(func(t *testing.T, temp float32, topK int, topP, minP, rep, freq, pres float32, lastN int, seed uint64,
		vocab int, logitBytes, historyBytes []byte) {
		cfg := Config{Temperature: temp, TopK: topK, TopP: topP, MinP: minP, RepeatPenalty: rep,
			FrequencyPenalty: freq, PresencePenalty: pres, PenaltyLastN: lastN, Seed: seed}
		if vocab > 1<<16 && vocab <= math.MaxInt32 {
			vocab = vocab%(1<<16) + 1 // valid but bounded: New allocates per entry
		}
		verr := cfg.Validate()
		s, err := New(cfg, vocab)
		badVocab := vocab <= 0 || vocab > math.MaxInt32
		switch {
		case err != nil && !errors.Is(err, ErrInvalidOption):
			t.Fatalf("New: %v does not wrap ErrInvalidOption", err)
		case verr != nil && !errors.Is(verr, ErrInvalidOption):
			t.Fatalf("Validate: %v does not wrap ErrInvalidOption", verr)
		case (err != nil) != (verr != nil || badVocab):
			t.Fatalf("New error %v, Validate error %v, vocabulary %d", err, verr, vocab)
		case err != nil:
			if s != nil {
				t.Fatal("New returned a Sampler with an error")
			}
			return
		}
		logits := make([]float32, min(len(logitBytes)/4, vocab))
		for i := range logits {
			logits[i] = math.Float32frombits(binary.LittleEndian.Uint32(logitBytes[4*i:]))
		}
		history := make([]int32, len(historyBytes)/4)
		for i := range history {
			history[i] = int32(binary.LittleEndian.Uint32(historyBytes[4*i:]))
		}
		in := slices.Clone(logits)
		id := s.Sample(logits, history)
		if len(in) == 0 {
			if id != -1 {
				t.Fatalf("Sample of no logits = %d, want -1", id)
			}
			return
		}
		if id < 0 || int(id) >= len(in) {
			t.Fatalf("Sample = %d, outside [0, %d)", id, len(in))
		}
		s.Reset()
		if again := s.Sample(slices.Clone(in), history); again != id {
			t.Fatalf("after Reset, Sample = %d, first time %d", again, id)
		}
	})
}

func floatBytes(xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}
