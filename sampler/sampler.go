package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// pcgStream is the second PCG seed word. It is fixed so that Config.Seed
// alone determines the sequence.
const pcgStream = 0x9e3779b97f4a7c15

// Sampler picks the next token from a logits vector. It holds buffers sized
// for the vocabulary so that Sample allocates nothing. A Sampler is not safe
// for concurrent use; give each session its own.
type Sampler struct {
	cfg     Config
	lastN   int     // effective penalty window, -1 = whole history
	penal   bool    // any penalty differs from its neutral value
	logMinP float32 // log(MinP), valid when MinP > 0

	pcg *rand.PCG
	rng *rand.Rand

	cands   []cand    // candidate buffer
	weights []float32 // unnormalized probabilities of the final candidates
	counts  []int32   // per-token occurrence counts, all zero between calls
}

// Bytes is the most memory New allocates for a vocabulary of vocab
// entries: a candidate (8 bytes), a weight and a penalty count (4 each)
// per entry, and for each of the three buffers a page of the allocator's
// rounding. The memory planner counts it for every session.
func Bytes(vocab int) int64 { return int64(vocab)*(8+4+4) + 3*8192 }

// New returns a Sampler for logits of vocab entries. It validates cfg and
// preallocates every buffer Sample needs, about 12 bytes per vocabulary
// entry (8 when top-k is on and no penalties are set).
func New(cfg Config, vocab int) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if vocab <= 0 || vocab > math.MaxInt32 {
		return nil, fmt.Errorf("sampler: vocabulary size %d outside [1, %d]: %w", vocab, math.MaxInt32, ErrInvalidOption)
	}
	s := &Sampler{
		cfg:   cfg,
		lastN: cfg.PenaltyLastN,
		penal: cfg.RepeatPenalty != 1 || cfg.FrequencyPenalty != 0 || cfg.PresencePenalty != 0,
	}
	if s.lastN == 0 {
		s.lastN = DefaultPenaltyLastN
	}
	if cfg.MinP > 0 {
		s.logMinP = float32(math.Log(float64(cfg.MinP)))
	}
	s.pcg = rand.NewPCG(cfg.Seed, pcgStream)
	s.rng = rand.New(s.pcg)
	s.grow(vocab)
	return s, nil
}

// Penalized reports whether Sample changes the logits it is given: some
// penalty differs from its neutral value. A caller that needs its logits
// afterwards hands Sample a copy then.
func (s *Sampler) Penalized() bool { return s.penal }

// Reset rewinds the random number generator to Config.Seed, so the same
// logits and histories produce the same tokens again.
func (s *Sampler) Reset() {
	s.pcg.Seed(s.cfg.Seed, pcgStream)
}

// grow makes the buffers large enough for n logits. It allocates only in
// New, or when Sample is given more logits than the vocab New was told.
func (s *Sampler) grow(n int) {
	nc := n
	if k := s.cfg.TopK; k > 0 && k < n {
		nc = k
	}
	if len(s.cands) < nc {
		s.cands = make([]cand, nc)
		s.weights = make([]float32, nc)
	}
	if s.penal && len(s.counts) < n {
		s.counts = make([]int32, n)
	}
}

// Sample returns the id of the next token.
//
// logits holds one value per token id. Penalties are applied to it in
// place (see Penalized), so the caller must not rely on its contents
// afterwards. history is
// the sequence so far (prompt and generated tokens), oldest first; only the
// last PenaltyLastN entries matter and ids outside [0, len(logits)) are
// ignored. It is read, never modified or retained.
//
// NaN logits are treated as -Inf. If no token has a finite logit the
// choice is greedy (the lowest id with the highest logit, 0 if all are
// -Inf or NaN). Sample returns -1 only for empty logits.
//
// Sample allocates nothing as long as len(logits) is at most the vocab size
// given to New.
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	if !s.penalize(logits, history) {
		return -1
	}
	return s.pick(logits)
}

// penalize makes the buffers fit logits and applies the penalties to
// them; it is false for empty logits.
func (s *Sampler) penalize(logits []float32, history []int32) bool {
	if len(logits) == 0 {
		return false
	}
	s.grow(len(logits))
	if s.penal {
		s.applyPenalties(logits, history)
	}
	return true
}

// Allower says which tokens may come next: a constraint on the output,
// such as jsonprefix.Filter's JSON.
type Allower interface {
	Allowed(id int32) bool
}

// SampleAllowed is Sample restricted to the tokens a allows. As llama.cpp
// applies a grammar, it samples as Sample does and keeps the token when a
// allows it; otherwise it sets the logit of every token a refuses to -Inf
// and samples again, so the second draw's top-k, top-p and min-p see only
// allowed tokens. Penalties are applied once. If no allowed token has a
// logit above -Inf the choice is the lowest allowed id; SampleAllowed
// returns -1 when a allows no token at all (or logits is empty).
//
// It changes logits as Sample does, and sets refused tokens' logits to
// -Inf; it allocates nothing under the same condition as Sample.
func (s *Sampler) SampleAllowed(logits []float32, history []int32, a Allower) int32 {
	if !s.penalize(logits, history) {
		return -1
	}
	if id := s.pick(logits); a.Allowed(id) {
		return id
	}
	lowest, live := int32(-1), false
	ninf := float32(math.Inf(-1))
	for i, l := range logits {
		if !a.Allowed(int32(i)) {
			logits[i] = ninf
			continue
		}
		if lowest < 0 {
			lowest = int32(i)
		}
		live = live || l > ninf // false for NaN
	}
	if !live {
		return lowest
	}
	return s.pick(logits)
}

// pick chooses a token from logits that penalties have been applied to.
func (s *Sampler) pick(logits []float32) int32 {
	if s.cfg.Temperature == 0 {
		return argmax(logits)
	}
	c, maxl, ok := s.survivors(logits)
	if !ok {
		// Probabilities are undefined (all -Inf) or degenerate (+Inf).
		return argmax(logits)
	}
	return s.draw(c, maxl)
}

// survivors runs top-k, top-p and min-p over the logits and returns the
// remaining candidates and their largest logit. ok is false when that
// largest logit is infinite and no distribution exists to draw from.
func (s *Sampler) survivors(logits []float32) (c []cand, maxl float32, ok bool) {
	sorted := false
	if k := s.cfg.TopK; k > 0 && k < len(logits) {
		c = topK(s.cands, logits, k)
		maxl = c[0].logit
		sorted = true
	} else {
		c, maxl = all(s.cands, logits)
	}
	if math.IsInf(float64(maxl), 0) {
		return nil, maxl, false
	}
	return s.filter(c, sorted, maxl), maxl, true
}

// argmax returns the lowest id with the highest logit, skipping NaN, or 0
// when there is none.
func argmax(logits []float32) int32 {
	best := float32(math.Inf(-1))
	id := 0
	for i, l := range logits {
		if l > best {
			best, id = l, i
		}
	}
	return int32(id)
}

// all makes every token a candidate, in id order, and returns the largest
// logit.
func all(dst []cand, logits []float32) ([]cand, float32) {
	c := dst[:len(logits)]
	maxl := float32(math.Inf(-1))
	for i, l := range logits {
		l = sanitize(l)
		c[i] = cand{l, int32(i)}
		maxl = max(maxl, l)
	}
	return c, maxl
}

func sanitize(l float32) float32 {
	if l != l {
		return float32(math.Inf(-1))
	}
	return l
}

// draw picks one candidate with probability softmax(logit/Temperature).
func (s *Sampler) draw(c []cand, maxl float32) int32 {
	if len(c) == 1 {
		return c[0].id
	}
	w := s.weights[:len(c)]
	t := s.cfg.Temperature
	var total float64
	last := 0
	for i, x := range c {
		e := float32(math.Exp(float64((x.logit - maxl) / t)))
		w[i] = e
		total += float64(e)
		if e > 0 {
			last = i
		}
	}
	// The running sum below adds the same values in the same order as
	// total, so it reaches total exactly and u < total always hits.
	u := s.rng.Float64() * total
	var cum float64
	for i, e := range w {
		cum += float64(e)
		if cum > u {
			return c[i].id
		}
	}
	return c[last].id // only if u rounded up to total
}
