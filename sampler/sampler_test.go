package sampler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Non-finite float32s, for logits and options.
var (
	nan    = float32(math.NaN())
	inf    = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
)

// mustNew is New for configs that are valid by construction.
func mustNew(t testing.TB, cfg Config, vocab int) *Sampler {
	t.Helper()
	s, err := New(cfg, vocab)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sampling returns a config with every filter off and temperature 1.
func sampling() Config {
	return Config{Temperature: 1, TopP: 1, RepeatPenalty: 1}
}

// logProbs returns logits whose softmax is p (p need not sum to 1).
func logProbs(p ...float64) []float32 {
	l := make([]float32, len(p))
	for i, v := range p {
		l[i] = float32(math.Log(v))
	}
	return l
}

func TestGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		want   int32
	}{
		{"single max", []float32{0.1, 3, -2, 2.9}, 1},
		{"tie goes to lowest id", []float32{1, 5, 2, 5, 5}, 1},
		{"tie at id 0", []float32{7, 7}, 0},
		{"NaN skipped", []float32{nan, 1, nan, 2, nan}, 3},
		{"all -Inf", []float32{negInf, negInf, negInf}, 0},
		{"all NaN", []float32{nan, nan}, 0},
		{"+Inf", []float32{1, float32(math.Inf(1)), 3}, 1},
		{"one token", []float32{-4}, 0},
	}
	s := mustNew(t, GreedyConfig(), 8)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Sample(slices.Clone(tt.logits), nil); got != tt.want {
				t.Fatalf("Sample = %d, want %d", got, tt.want)
			}
		})
	}
	if got := s.Sample(nil, nil); got != -1 {
		t.Fatalf("Sample(empty) = %d, want -1", got)
	}
}

func TestGreedyAppliesPenalties(t *testing.T) {
	cfg := GreedyConfig()
	cfg.PresencePenalty = 1
	s := mustNew(t, cfg, 3)
	if got := s.Sample([]float32{1, 1.5, 0}, []int32{1}); got != 0 {
		t.Fatalf("Sample = %d, want 0 (token 1 penalized to 0.5)", got)
	}
}

// survivorIDs returns the ids left after top-k, top-p and min-p, sorted.
func survivorIDs(t *testing.T, cfg Config, logits []float32) []int32 {
	t.Helper()
	s := mustNew(t, cfg, len(logits))
	c, _, ok := s.survivors(slices.Clone(logits))
	if !ok {
		t.Fatal("survivors: no finite maximum")
	}
	return sortedIDs(c)
}

// sortedIDs is the token ids of the candidates, ascending.
func sortedIDs(c []cand) []int32 {
	ids := make([]int32, len(c))
	for i, x := range c {
		ids[i] = x.id
	}
	slices.Sort(ids)
	return ids
}

func TestFilters(t *testing.T) {
	// Probabilities 0.5, 0.3, 0.15, 0.05 at ids 2, 0, 3, 1 so that id order
	// and rank order differ.
	probs := logProbs(0.3, 0.05, 0.5, 0.15)
	flat := []float32{1, 5, 3, 5, 0, 5}
	tests := []struct {
		name   string
		logits []float32
		topK   int
		topP   float32
		minP   float32
		want   []int32
	}{
		{"no filters", probs, 0, 1, 0, []int32{0, 1, 2, 3}},
		{"top-k 1", probs, 1, 1, 0, []int32{2}},
		{"top-k 2", probs, 2, 1, 0, []int32{0, 2}},
		{"top-k 3", probs, 3, 1, 0, []int32{0, 2, 3}},
		{"top-k = n", probs, 4, 1, 0, []int32{0, 1, 2, 3}},
		{"top-k > n", probs, 10, 1, 0, []int32{0, 1, 2, 3}},
		{"top-k tie keeps lowest ids", flat, 2, 1, 0, []int32{1, 3}},
		{"top-k tie all", flat, 3, 1, 0, []int32{1, 3, 5}},
		{"top-k tie plus next", flat, 4, 1, 0, []int32{1, 2, 3, 5}},
		{"top-p 0.4", probs, 0, 0.4, 0, []int32{2}},
		{"top-p 0.5", probs, 0, 0.5, 0, []int32{2}},
		{"top-p 0.75", probs, 0, 0.75, 0, []int32{0, 2}},
		{"top-p 0.85", probs, 0, 0.85, 0, []int32{0, 2, 3}},
		{"top-p 0.97", probs, 0, 0.97, 0, []int32{0, 1, 2, 3}},
		{"top-p tiny", probs, 0, 1e-6, 0, []int32{2}},
		// After top-k 3 the mass is 0.95, so the first two hold 0.8/0.95 = 0.842.
		{"top-p 0.83 without top-k", probs, 0, 0.83, 0, []int32{0, 2, 3}},
		{"top-p 0.83 after top-k renormalizes", probs, 3, 0.83, 0, []int32{0, 2}},
		{"min-p 0.05", probs, 0, 1, 0.05, []int32{0, 1, 2, 3}},
		{"min-p 0.2", probs, 0, 1, 0.2, []int32{0, 2, 3}},
		{"min-p 0.5", probs, 0, 1, 0.5, []int32{0, 2}},
		{"min-p 0.7", probs, 0, 1, 0.7, []int32{2}},
		{"min-p 1", probs, 0, 1, 1, []int32{2}},
		{"min-p 1 with ties", flat, 0, 1, 1, []int32{1, 3, 5}},
		{"min-p after top-k", probs, 2, 1, 0.2, []int32{0, 2}},
		{"top-p shorter than min-p", probs, 0, 0.75, 0.2, []int32{0, 2}},
		{"min-p shorter than top-p", probs, 0, 0.97, 0.5, []int32{0, 2}},
		{"all three", probs, 3, 0.97, 0.25, []int32{0, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := sampling()
			cfg.TopK, cfg.TopP, cfg.MinP = tt.topK, tt.topP, tt.minP
			if got := survivorIDs(t, cfg, tt.logits); !slices.Equal(got, tt.want) {
				t.Fatalf("survivors %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTopPFlatVocabulary(t *testing.T) {
	// 1000 equal logits: the top-p walk must grow its sorted chunk
	// 64 -> 256 -> 1000 and keep the lowest ids.
	logits := make([]float32, 1000)
	for _, tt := range []struct {
		p    float32
		want int
	}{{0.0305, 31}, {0.2005, 201}, {0.5005, 501}, {0.9995, 1000}} {
		cfg := sampling()
		cfg.TopP = tt.p
		got := survivorIDs(t, cfg, logits)
		if len(got) != tt.want || got[0] != 0 || got[len(got)-1] != int32(tt.want-1) {
			t.Fatalf("top-p %v: %d survivors %d..%d, want ids 0..%d", tt.p, len(got), got[0], got[len(got)-1], tt.want-1)
		}
	}
}

// reference filters by sorting every candidate, as a straightforward
// implementation of the llama.cpp chain would.
func reference(logits []float32, cfg Config) []int32 {
	c := make([]cand, len(logits))
	for i, l := range logits {
		c[i] = cand{sanitize(l), int32(i)}
	}
	slices.SortFunc(c, func(a, b cand) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	if cfg.TopK > 0 && cfg.TopK < len(c) {
		c = c[:cfg.TopK]
	}
	maxl := c[0].logit
	if cfg.TopP < 1 {
		var total, cum float64
		for _, x := range c {
			total += math.Exp(float64(x.logit - maxl))
		}
		for i, x := range c {
			cum += math.Exp(float64(x.logit-maxl)) / total
			if cum >= float64(cfg.TopP) {
				c = c[:i+1]
				break
			}
		}
	}
	if cfg.MinP > 0 {
		cut := maxl + float32(math.Log(float64(cfg.MinP)))
		for i := 1; i < len(c); i++ {
			if c[i].logit < cut {
				c = c[:i]
				break
			}
		}
	}
	return sortedIDs(c)
}

func TestFiltersMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 5000)
	for i := range logits {
		// Quarter steps give many ties; a few NaN and -Inf entries too.
		logits[i] = float32(math.Round(r.NormFloat64()*8)) / 4
		switch i % 997 {
		case 3:
			logits[i] = float32(math.NaN())
		case 5:
			logits[i] = negInf
		}
	}
	for _, k := range []int{0, 1, 40, 1000, 5000} {
		for _, p := range []float32{0.1, 0.9, 0.95, 0.999, 1} {
			for _, m := range []float32{0, 0.01, 0.05, 0.5} {
				cfg := sampling()
				cfg.TopK, cfg.TopP, cfg.MinP = k, p, m
				got := survivorIDs(t, cfg, logits)
				want := reference(logits, cfg)
				if !slices.Equal(got, want) {
					t.Fatalf("top-k %d top-p %v min-p %v: %d survivors, reference %d", k, p, m, len(got), len(want))
				}
			}
		}
	}
}

func TestPenalties(t *testing.T) {
	tests := []struct {
		name    string
		lastN   int
		rep     float32
		freq    float32
		pres    float32
		history []int32
		want    []float32
	}{
		{
			// id 0 once: 2/2 - (0.5+0.25); id 1 twice: -1*2 - (1+0.25);
			// id 3 three times: 3/2 - (1.5+0.25); out-of-range ids ignored.
			"all penalties", -1, 2, 0.5, 0.25,
			[]int32{0, 1, 1, 3, 3, 3, 7, -2},
			[]float32{0.25, -3.25, 0.5, -0.25, 0},
		},
		{"zero logit times penalty stays zero", -1, 2, 0, 0, []int32{4}, []float32{2, -1, 0.5, 3, 0}},
		{"repeat only", -1, 1.25, 0, 0, []int32{0, 1}, []float32{1.6, -1.25, 0.5, 3, 0}},
		{"frequency only", -1, 1, 0.5, 0, []int32{3, 3, 2}, []float32{2, -1, 0, 2, 0}},
		{"presence only", -1, 1, 0, 1, []int32{3, 3, 2}, []float32{2, -1, -0.5, 2, 0}},
		{"negative presence", -1, 1, 0, -1, []int32{1}, []float32{2, 0, 0.5, 3, 0}},
		{"window of 2", 2, 2, 0.5, 0.25, []int32{0, 3, 3}, []float32{2, -1, 0.5, 0.25, 0}},
		{"window longer than history", 10, 1, 1, 0, []int32{0}, []float32{1, -1, 0.5, 3, 0}},
		{"empty history", -1, 2, 1, 1, nil, []float32{2, -1, 0.5, 3, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := GreedyConfig()
			cfg.PenaltyLastN, cfg.RepeatPenalty, cfg.FrequencyPenalty, cfg.PresencePenalty = tt.lastN, tt.rep, tt.freq, tt.pres
			s := mustNew(t, cfg, 5)
			for round := range 2 { // the second round checks counts were cleared
				logits := []float32{2, -1, 0.5, 3, 0}
				s.Sample(logits, tt.history)
				if !slices.Equal(logits, tt.want) {
					t.Fatalf("round %d: logits %v, want %v", round, logits, tt.want)
				}
			}
		})
	}
}

func TestPenaltyDefaultWindow(t *testing.T) {
	cfg := GreedyConfig()
	cfg.PresencePenalty = 1 // PenaltyLastN 0 means 64
	s := mustNew(t, cfg, 3)
	history := make([]int32, 100)
	history[100-64-1] = 1 // just outside the window
	history[100-64] = 2   // first entry inside
	logits := []float32{5, 5, 5}
	s.Sample(logits, history)
	if want := []float32{4, 5, 4}; !slices.Equal(logits, want) {
		t.Fatalf("logits %v, want %v", logits, want)
	}
}

func randomLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 2)
	}
	return l
}

func sequence(s *Sampler, logits []float32, n int) []int32 {
	out := make([]int32, n)
	buf := make([]float32, len(logits))
	for i := range out {
		copy(buf, logits)
		out[i] = s.Sample(buf, out[:i])
	}
	return out
}

func TestSeedDeterminism(t *testing.T) {
	logits := randomLogits(500, 3)
	cfg := DefaultConfig(1234)
	cfg.RepeatPenalty = 1.1
	a := sequence(mustNew(t, cfg, 500), logits, 300)
	b := sequence(mustNew(t, cfg, 500), logits, 300)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different sequences")
	}
	cfg.Seed = 1235
	c := sequence(mustNew(t, cfg, 500), logits, 300)
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave the same sequence")
	}
	cfg.Seed = 1234
	s := mustNew(t, cfg, 500)
	sequence(s, logits, 17)
	s.Reset()
	if d := sequence(s, logits, 300); !slices.Equal(a, d) {
		t.Fatal("Reset did not restart the sequence")
	}
}

func TestDistribution(t *testing.T) {
	const draws = 20000
	tests := []struct {
		name   string
		logits []float32
		temp   float32
	}{
		{"temperature 1", []float32{1, 2, 0.5}, 1},
		{"temperature 0.5", []float32{1, 2, 0.5}, 0.5},
		{"temperature 2", []float32{1, 2, 0.5}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := sampling()
			cfg.Temperature = tt.temp
			cfg.Seed = 99
			s := mustNew(t, cfg, len(tt.logits))
			counts := make([]int, len(tt.logits))
			buf := make([]float32, len(tt.logits))
			for range draws {
				copy(buf, tt.logits)
				counts[s.Sample(buf, nil)]++
			}
			var z float64
			for _, l := range tt.logits {
				z += math.Exp(float64(l / tt.temp))
			}
			for i, l := range tt.logits {
				p := math.Exp(float64(l/tt.temp)) / z
				mean := draws * p
				sigma := math.Sqrt(draws * p * (1 - p))
				if d := math.Abs(float64(counts[i]) - mean); d > 4*sigma {
					t.Errorf("token %d: %d draws, want %.0f ± %.0f (4σ)", i, counts[i], mean, 4*sigma)
				}
			}
		})
	}
}

func TestFilteredTokensNeverDrawn(t *testing.T) {
	cfg := sampling()
	cfg.TopK = 2
	cfg.Temperature = 5 // flatten, so the survivors are drawn often
	s := mustNew(t, cfg, 4)
	seen := map[int32]int{}
	for range 2000 {
		seen[s.Sample(logProbs(0.3, 0.05, 0.5, 0.15), nil)]++
	}
	if len(seen) != 2 || seen[0] == 0 || seen[2] == 0 {
		t.Fatalf("drawn %v, want only tokens 0 and 2", seen)
	}
}

func TestNonFiniteLogits(t *testing.T) {
	for _, k := range []int{0, 2} {
		cfg := sampling()
		cfg.TopK = k
		s := mustNew(t, cfg, 6)
		if got := s.Sample([]float32{1, 2, inf, 0, inf, 3}, nil); got != 2 {
			t.Errorf("top-k %d: +Inf logits: got %d, want 2", k, got)
		}
		if got := s.Sample([]float32{negInf, nan, negInf}, nil); got != 0 {
			t.Errorf("top-k %d: no finite logit: got %d, want 0", k, got)
		}
		for range 100 {
			if got := s.Sample([]float32{nan, 1, nan, negInf, 1, nan}, nil); got != 1 && got != 4 {
				t.Fatalf("top-k %d: NaN/-Inf logits: got %d, want 1 or 4", k, got)
			}
		}
	}
}

func TestMoreLogitsThanVocab(t *testing.T) {
	cfg := DefaultConfig(5)
	cfg.FrequencyPenalty = 0.1
	s := mustNew(t, cfg, 4)
	logits := make([]float32, 100)
	logits[77] = 50
	if got := s.Sample(logits, []int32{99, 3}); got != 77 {
		t.Fatalf("got %d, want 77", got)
	}
}

// spreadHistory is n token ids i·stride mod vocab.
func spreadHistory(n, stride, vocab int) []int32 {
	h := make([]int32, n)
	for i := range h {
		h[i] = int32(i * stride % vocab)
	}
	return h
}

func TestNoAllocations(t *testing.T) {
	const vocab = 32000
	logits, history := randomLogits(vocab, 7), spreadHistory(200, 37, vocab)
	withPenalties := DefaultConfig(3)
	withPenalties.RepeatPenalty, withPenalties.FrequencyPenalty, withPenalties.PresencePenalty = 1.1, 0.1, 0.1
	withPenalties.PenaltyLastN = -1
	noTopK := DefaultConfig(3)
	noTopK.TopK = 0
	topPOnly := sampling()
	topPOnly.TopP = 0.9
	configs := map[string]Config{
		"greedy":    GreedyConfig(),
		"default":   DefaultConfig(3),
		"penalties": withPenalties,
		"no top-k":  noTopK,
		"top-p":     topPOnly,
		"plain":     sampling(),
	}
	buf := make([]float32, vocab)
	for name, cfg := range configs {
		s := mustNew(t, cfg, vocab)
		allocs := testing.AllocsPerRun(20, func() {
			copy(buf, logits)
			s.Sample(buf, history)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Sample, want 0", name, allocs)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	const vocab = 128256
	logits, history := randomLogits(vocab, 11), spreadHistory(64, 1999, vocab)
	topKP := sampling()
	topKP.TopK, topKP.TopP, topKP.Temperature, topKP.Seed = 40, 0.95, 0.8, 1
	noTopK := DefaultConfig(1)
	noTopK.TopK = 0
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"greedy", GreedyConfig()},
		{"topk40-topp0.95-temp0.8", topKP},
		{"llama-default", DefaultConfig(1)},
		{"minp0.05-topp0.95-no-topk", noTopK},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := mustNew(b, bc.cfg, vocab)
			buf := make([]float32, vocab)
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, logits)
				s.Sample(buf, history)
			}
		})
	}
}

// TestPenalized checks that Penalized says when Sample changes its logits.
func TestPenalized(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want bool
	}{
		{func(*Config) {}, false},
		{func(c *Config) { c.RepeatPenalty = 1.1 }, true},
		{func(c *Config) { c.FrequencyPenalty = 0.1 }, true},
		{func(c *Config) { c.PresencePenalty = -0.1 }, true},
	} {
		cfg := DefaultConfig(1)
		tc.edit(&cfg)
		s := mustNew(t, cfg, 4)
		logits := []float32{1, 2, 3, 4}
		s.Sample(logits, []int32{0, 1, 2, 3})
		changed := !slices.Equal(logits, []float32{1, 2, 3, 4})
		if s.Penalized() != tc.want || changed != tc.want {
			t.Errorf("%+v: Penalized %v, logits changed %v; want %v", cfg, s.Penalized(), changed, tc.want)
		}
	}
}
