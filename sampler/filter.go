package sampler

import "math"

// firstChunk is how many candidates the top-p walk sorts first when top-k is
// off. Peaked distributions reach p within it; flat ones grow it 4x at a
// time, so the total sorting work stays within a constant factor of sorting
// only the tokens that survive.
const firstChunk = 64

// filter applies top-p, then min-p, to the candidates c (ordered best first
// when sorted is set) whose largest logit is maxl, and returns the
// survivors.
//
// Both filters keep a prefix of the candidates in best-first order, so the
// result is the shorter of the two prefixes. Top-p's probabilities are
// normalized over all of c (as when it runs first in llama.cpp's chain), so
// min-p may be applied first as a cheap O(n) cut that leaves less to sort.
func (s *Sampler) filter(c []cand, sorted bool, maxl float32) []cand {
	topP := s.cfg.TopP < 1
	if !topP && s.cfg.MinP <= 0 {
		return c
	}
	var total float64
	if topP {
		for _, x := range c {
			total += math.Exp(float64(x.logit - maxl))
		}
	}
	if s.cfg.MinP > 0 {
		c = minP(c, sorted, maxl+s.logMinP)
	}
	if topP {
		c = topPPrefix(c, sorted, maxl, total, float64(s.cfg.TopP))
	}
	return c
}

// minP keeps the candidates with logit >= cut. max(logit) >= cut always, so
// at least one survives. Unsorted input is partitioned in place, not sorted.
func minP(c []cand, sorted bool, cut float32) []cand {
	if sorted {
		for i := 1; i < len(c); i++ {
			if c[i].logit < cut {
				return c[:i]
			}
		}
		return c
	}
	m := 0
	for i := range c {
		if c[i].logit >= cut {
			c[m], c[i] = c[i], c[m]
			m++
		}
	}
	return c[:m]
}

// topPPrefix returns the shortest best-first prefix of c whose probability
// mass, exp(logit-maxl)/total, reaches p; all of c if it never does. The
// prefix comes back sorted. Unsorted input is sorted only as far as needed.
func topPPrefix(c []cand, sorted bool, maxl float32, total, p float64) []cand {
	var cum float64
	if sorted {
		for i, x := range c {
			cum += math.Exp(float64(x.logit-maxl)) / total
			if cum >= p {
				return c[:i+1]
			}
		}
		return c
	}
	lo, hi := 0, min(firstChunk, len(c))
	for lo < len(c) {
		selectTop(c[lo:], hi-lo)
		for i := lo; i < hi; i++ {
			cum += math.Exp(float64(c[i].logit-maxl)) / total
			if cum >= p {
				return c[:i+1]
			}
		}
		lo, hi = hi, min(hi*4, len(c))
	}
	return c
}
