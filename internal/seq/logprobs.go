package seq

import "math"

// MaxTopLogprobs is the most alternatives Generation.TopLogprobs may ask
// for, OpenAI's bound.
const MaxTopLogprobs = 20

// TokenLogprob is a token, its text (a control token's own, such as
// "<|im_end|>"), and its log-probability (natural logarithm) under the
// model at one step: the softmax of the raw logits, before penalties,
// temperature, top-k, top-p, min-p or a JSON constraint.
type TokenLogprob struct {
	ID      int32
	Text    string
	Logprob float32
}

// Logprobs returns the log-probability of the token Generate handed to
// yield last and, most likely first, the Generation.TopLogprobs most
// likely tokens at that step (a slice of its own). Without
// Generation.Logprobs it returns 0 and nil. Call it from yield, or after
// Generate returns.
func (s *Seq) Logprobs() (float32, []TokenLogprob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logprob, s.top
}

// setLogprobs computes the log-probabilities of token id, sampled from the
// current logits, and of the n most likely tokens.
func (s *Seq) setLogprobs(id int32, n int) {
	lp, top := logprobs(s.logits, id, n)
	for i := range top {
		top[i].Text = string(s.cfg.Vocab.Piece(top[i].ID))
	}
	s.mu.Lock()
	s.logprob, s.top = lp, top
	s.mu.Unlock()
}

// logprobs is the log-softmax of logits at id, and the n largest entries
// (ties to the lower id), NaN counting as -Inf.
func logprobs(logits []float32, id int32, n int) (float32, []TokenLogprob) {
	top := make([]TokenLogprob, 0, n)
	maxl := float32(math.Inf(-1))
	for i, l := range logits {
		if l != l {
			continue
		}
		maxl = max(maxl, l)
		if n == 0 || len(top) == n && l <= top[n-1].Logprob {
			continue
		}
		// Insert in order, largest first; among equals the lower id
		// (met first) stays ahead.
		j := len(top)
		if j < n {
			top = append(top, TokenLogprob{})
		} else {
			j--
		}
		for ; j > 0 && top[j-1].Logprob < l; j-- {
			top[j] = top[j-1]
		}
		top[j] = TokenLogprob{ID: int32(i), Logprob: l}
	}
	of := func(l float32) float32 { return float32(math.Inf(-1)) }
	switch {
	case math.IsInf(float64(maxl), 1):
		// Infinite logits share all the probability.
		k := 0
		for _, l := range logits {
			if l == maxl {
				k++
			}
		}
		share := float32(-math.Log(float64(k)))
		of = func(l float32) float32 {
			if l == maxl {
				return share
			}
			return float32(math.Inf(-1))
		}
	case !math.IsInf(float64(maxl), -1):
		var sum float64
		for _, l := range logits {
			if l == l {
				sum += math.Exp(float64(l - maxl))
			}
		}
		lse := float64(maxl) + math.Log(sum)
		of = func(l float32) float32 {
			if l != l {
				return float32(math.Inf(-1))
			}
			return float32(float64(l) - lse)
		}
	}
	for i := range top {
		top[i].Logprob = of(top[i].Logprob)
	}
	lp := float32(math.Inf(-1))
	if id >= 0 && int(id) < len(logits) {
		lp = of(logits[id])
	}
	return lp, top
}
