package model

import (
	"fmt"

	"github.com/lowmem/llm/kv"
)

// This file lets one forward pass carry several short texts (what
// embedding a list of sentences asks for): they lie one after another in
// the pass and in the KV cache, and each is computed as if it were alone
// — positions from 0 in its own text, attention to its own tokens only —
// so that a matrix product serves all of them at a batch's speed rather
// than a short text's.

// textSpan is the span of a packed pass's tokens [from, to) one text takes.
type textSpan struct{ from, to int32 }

// HiddenPacked is Hidden of several texts in one pass: tokens holds them
// one after another, lens their lengths (each at least 1, summing to
// len(tokens), at most Batch). Each text is evaluated as Hidden evaluates
// it alone from position 0 — its positions start at 0 and its tokens see
// only its own — and out's rows are the rows Hidden gives each text alone,
// bit for bit. The cache must be empty; the texts' keys and values are
// left in it, in the pass's positions, for the caller to truncate.
func (s *State) HiddenPacked(tokens []int32, lens []int, out []float32) error {
	if n := s.cache.Len(); n != 0 {
		return fmt.Errorf("model: a packed pass needs an empty cache (it holds %d positions): %w", n, kv.ErrInvalid)
	}
	if len(tokens) > s.batch {
		return fmt.Errorf("model: forward of %d tokens (batch limit %d)", len(tokens), s.batch)
	}
	if cap(s.textBuf) < len(tokens) {
		s.textBuf = make([]textSpan, s.batch)
	}
	texts := s.textBuf[:len(tokens)]
	from := 0
	for i, l := range lens {
		if l < 1 || l > len(tokens)-from {
			return fmt.Errorf("model: packed text %d of %d tokens after %d of a pass of %d: %w", i, l, from, len(tokens), kv.ErrInvalid)
		}
		for t := from; t < from+l; t++ {
			texts[t] = textSpan{int32(from), int32(from + l)}
		}
		from += l
	}
	if from != len(tokens) {
		return fmt.Errorf("model: packed texts of %d tokens in all for a pass of %d: %w", from, len(tokens), kv.ErrInvalid)
	}
	s.texts = texts
	defer func() { s.texts = nil }()
	return s.Hidden(tokens, 0, out)
}

// position is token t's position in its text, for a pass whose first
// token is at pos0: what RoPE rotates by and a learned position embedding
// reads. Only a packed pass restarts it at each text.
func (s *State) position(pos0, t int) int {
	if s.texts != nil {
		return t - int(s.texts[t].from)
	}
	return pos0 + t
}

// lastPosition is the largest position (State.position) among the n tokens
// of a pass from pos0.
func (s *State) lastPosition(pos0, n int) int {
	if s.texts == nil {
		return pos0 + n - 1
	}
	last := 0
	for _, t := range s.texts {
		last = max(last, int(t.to-t.from)-1)
	}
	return last
}

// sees is the span of cache positions [from, pos] token t of a causal
// pass from pos0 attends to: every position up to its own, or in a packed
// pass those of its text.
func (s *State) sees(pos0, t int) (from, pos int) {
	if s.texts != nil {
		return int(s.texts[t].from), t
	}
	return 0, pos0 + t
}

// seesWhole is sees for a non-causal pass of n tokens: token t sees the
// whole pass, or in a packed pass its whole text.
func (s *State) seesWhole(pos0, n, t int) (from, pos int) {
	if s.texts != nil {
		return int(s.texts[t].from), int(s.texts[t].to) - 1
	}
	return 0, pos0 + n - 1
}

// seesWithin is seesWhole cut to the positions at most half from token t
// (a non-causal layer's symmetric window, llama.cpp's
// LLAMA_SWA_TYPE_SYMMETRIC).
func (s *State) seesWithin(pos0, n, t, half int) (from, pos int) {
	from, pos = s.seesWhole(pos0, n, t)
	at := pos0 + t
	return max(from, at-half), min(pos, at+half)
}

// wholeBlocks splits a non-causal pass of n tokens into the blocks whose
// queries attend together (up to size tokens, never two texts in one)
// into s.wholeStarts and returns their number.
func (s *State) wholeBlocks(n, size int) int {
	b := s.wholeStarts[:0]
	for t := 0; t < n; {
		b = append(b, int32(t))
		end := n
		if s.texts != nil {
			end = int(s.texts[t].to)
		}
		t = min(t+size, end)
	}
	s.wholeStarts = append(b, int32(n))
	return len(s.wholeStarts) - 1
}
