package sampler

// applyPenalties adjusts, in place, the logits of tokens that occur in the
// last lastN entries of history, as llama.cpp's penalties sampler does:
// repeat penalty first (divide a positive logit, multiply a non-positive
// one), then subtract count*FrequencyPenalty + PresencePenalty. Each
// distinct token is penalized once however often it occurs.
func (s *Sampler) applyPenalties(logits []float32, history []int32) {
	w := history
	if s.lastN >= 0 && len(w) > s.lastN {
		w = w[len(w)-s.lastN:]
	}
	n := uint32(len(logits))
	counts := s.counts
	for _, id := range w {
		if uint32(id) < n { // also rejects negative ids
			counts[id]++
		}
	}
	rep, freq, pres := s.cfg.RepeatPenalty, s.cfg.FrequencyPenalty, s.cfg.PresencePenalty
	for _, id := range w {
		if uint32(id) >= n {
			continue
		}
		cnt := counts[id]
		if cnt == 0 {
			continue // already penalized
		}
		// Zeroing here both marks the token done and leaves counts
		// clean for the next call without a separate pass.
		counts[id] = 0
		// The explicit conversions round each step to float32 so the
		// compiler cannot fuse them into an FMA: results match llama.cpp
		// bit for bit on every GOAMD64 level.
		l := logits[id]
		if l <= 0 {
			l = float32(l * rep)
		} else {
			l = float32(l / rep)
		}
		l -= float32(float32(cnt)*freq) + pres
		logits[id] = l
	}
}
