package sampler

import (
	"runtime"
	"slices"
	"testing"
)

// allowSet allows the ids it holds.
type allowSet map[int32]bool

func (a allowSet) Allowed(id int32) bool { return a[id] }

// allowEven allows even ids; it allocates nothing.
type allowEven struct{}

func (allowEven) Allowed(id int32) bool { return id%2 == 0 }

func TestSampleAllowedGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		allow  allowSet
		want   int32
	}{
		{"best is allowed", []float32{1, 5, 2}, allowSet{1: true, 2: true}, 1},
		{"best refused", []float32{1, 5, 2}, allowSet{0: true, 2: true}, 2},
		{"only one allowed", []float32{9, 5, 2, 7}, allowSet{1: true}, 1},
		{"allowed ones all -Inf", []float32{negInf, 3, negInf, nan}, allowSet{2: true, 3: true}, 2},
		{"nothing allowed", []float32{1, 2, 3}, allowSet{}, -1},
		{"NaN beside a live one", []float32{nan, 0, -1}, allowSet{0: true, 2: true}, 2},
	}
	s := mustNew(t, GreedyConfig(), 8)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.SampleAllowed(slices.Clone(tt.logits), nil, tt.allow); got != tt.want {
				t.Fatalf("SampleAllowed = %d, want %d", got, tt.want)
			}
		})
	}
	if got := s.SampleAllowed(nil, nil, allowSet{0: true}); got != -1 {
		t.Fatalf("SampleAllowed(empty) = %d, want -1", got)
	}
}

// TestSampleAllowedDraws: with temperature, top-k and top-p, only allowed
// tokens come out, in proportion to their probabilities among themselves,
// and the top-k of the second draw is taken among the allowed tokens.
func TestSampleAllowedDraws(t *testing.T) {
	const draws = 20000
	cfg := sampling()
	cfg.TopK = 2
	cfg.Seed = 5
	s := mustNew(t, cfg, 6)
	// Without the constraint top-k 2 keeps tokens 0 and 1 only.
	logits := logProbs(0.4, 0.3, 0.1, 0.05, 0.1, 0.05)
	allow := allowSet{2: true, 3: true, 4: true}
	counts := map[int32]int{}
	buf := make([]float32, len(logits))
	for range draws {
		copy(buf, logits)
		counts[s.SampleAllowed(buf, nil, allow)]++
	}
	// Top-k 2 among the allowed keeps 2 and 4 (0.1 each), drawn evenly.
	if len(counts) != 2 || counts[2] == 0 || counts[4] == 0 {
		t.Fatalf("drawn %v, want only tokens 2 and 4", counts)
	}
	if d := counts[2] - counts[4]; d > 600 || d < -600 { // the difference has σ ≈ 141: 600 is over 4σ
		t.Errorf("tokens 2 and 4 drawn %d and %d times, want about even", counts[2], counts[4])
	}
}

// TestSampleAllowedPenaltiesOnce: the second draw sees the penalties once.
func TestSampleAllowedPenaltiesOnce(t *testing.T) {
	cfg := GreedyConfig()
	cfg.PresencePenalty = 1
	s := mustNew(t, cfg, 4)
	logits := []float32{9, 3, 2.5, 0}
	// Token 0 is refused; token 1 is penalized once to 2, below 2.5.
	if got := s.SampleAllowed(logits, []int32{1}, allowSet{1: true, 2: true, 3: true}); got != 2 {
		t.Fatalf("SampleAllowed = %d, want 2", got)
	}
	if want := []float32{negInf, 2, 2.5, 0}; !slices.Equal(logits, want) {
		t.Fatalf("logits after = %v, want %v", logits, want)
	}
}

func TestSampleAllowedNoAllocations(t *testing.T) {
	const vocab = 32000
	logits, history := randomLogits(vocab, 7), spreadHistory(200, 37, vocab)
	buf := make([]float32, vocab)
	for name, cfg := range map[string]Config{"greedy": GreedyConfig(), "default": DefaultConfig(3)} {
		s := mustNew(t, cfg, vocab)
		allocs := testing.AllocsPerRun(20, func() {
			copy(buf, logits)
			buf[1] = 100 // refused, so every token is asked
			s.SampleAllowed(buf, history, allowEven{})
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per SampleAllowed, want 0", name, allocs)
		}
	}
}

// TestBytesCoversNew: Bytes covers what New allocates, which the memory
// plan counts, by no more than the allocator's rounding.
func TestBytesCoversNew(t *testing.T) {
	const vocab = 100000
	cfg := sampling()
	cfg.RepeatPenalty = 1.1 // every buffer at its full size
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := mustNew(t, cfg, vocab)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	if got := int64(after.TotalAlloc - before.TotalAlloc); got > Bytes(vocab) || got < Bytes(vocab)-3*8192 {
		t.Errorf("New allocated %d bytes for %d entries; Bytes says %d", got, vocab, Bytes(vocab))
	}
}
