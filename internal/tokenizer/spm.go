package tokenizer

// symbol is a run of bytes text[start:start+n] in a doubly linked list of
// the symbols still in play. A symbol merged into its left neighbour has
// n = 0.
type symbol struct {
	start, n   int32
	prev, next int32
}

// bigram is a candidate merge of two adjacent symbols. For SPM the priority
// is the score of the merged token (higher first); for BPE it is the merge
// rank (lower first), stored negated so one heap serves both. Ties go to
// the leftmost pair. size is the byte length of the merged text and tells
// stale candidates apart: once either side has changed, the sizes no longer
// add up.
type bigram struct {
	left, right int32
	size        int32
	prio        float32
}

func (a bigram) before(b bigram) bool {
	return a.prio > b.prio || (a.prio == b.prio && a.left < b.left)
}

// pushBigram and popBigram keep s.heap a binary max-heap by before.
func pushBigram(h []bigram, b bigram) []bigram {
	h = append(h, b)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func popBigram(h []bigram) (bigram, []bigram) {
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	if len(h) == 0 {
		return top, h
	}
	// Floyd's variant: walk the hole down along the better children to a
	// leaf, then sift the last element up from there. It needs one
	// comparison per level on the way down instead of two.
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r].before(h[c]) {
			c = r
		}
		h[i] = h[c]
		i = c
	}
	for i > 0 {
		p := (i - 1) / 2
		if !last.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = last
	return top, h
}

// mergeSymbols repeatedly merges the adjacent pair of symbols with the
// highest priority, as both SPM and BPE do; prio returns a pair's priority,
// or false when the pair cannot merge. Merged symbols are unlinked (n = 0)
// and the survivors stay chained through next. It returns the heap's
// storage for reuse.
func mergeSymbols(syms []symbol, h []bigram, prio func(a, b symbol) (float32, bool)) []bigram {
	try := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		if p, ok := prio(syms[l], syms[r]); ok {
			h = pushBigram(h, bigram{left: l, right: r, size: syms[l].n + syms[r].n, prio: p})
		}
	}
	for i := int32(1); i < int32(len(syms)); i++ {
		try(i-1, i)
	}
	for len(h) > 0 {
		var b bigram
		b, h = popBigram(h)
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		try(l.prev, b.left)
		try(b.left, l.next)
	}
	return h
}

// emitSymbols appends the tokens of the symbols left after merging, in
// order: each piece's own token, or what spell appends for a piece that
// is no token.
func (t *Tokenizer) emitSymbols(syms []symbol, text []byte, out []int32, spell func(out []int32, piece []byte) []int32) []int32 {
	for i := int32(0); len(syms) > 0 && i != -1; i = syms[i].next {
		sym := syms[i]
		piece := text[sym.start : sym.start+sym.n]
		if id, ok := t.ids[string(piece)]; ok {
			out = append(out, id)
			continue
		}
		out = spell(out, piece)
	}
	return out
}

// splitSymbols cuts text into one symbol per UTF-8 sequence (judged by the
// lead byte, clipped at the end) and links them.
func splitSymbols(syms []symbol, text []byte) []symbol {
	syms = syms[:0]
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1})
		off += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// encodeSPM appends the tokens of one text fragment, already escaped
// ("▁" for spaces, with the prefix if any), using llama.cpp's SentencePiece
// BPE: repeatedly merge the adjacent pair whose concatenation is the
// highest-scoring token, then emit each remaining symbol as its token or,
// failing that, as byte tokens.
func (t *Tokenizer) encodeSPM(s *scratch, text []byte, out []int32) []int32 {
	syms := splitSymbols(s.syms, text)
	h := s.heap[:0]
	// The merged piece with the highest score goes first.
	h = mergeSymbols(syms, h, func(a, b symbol) (float32, bool) {
		id, ok := t.ids[string(text[a.start:a.start+a.n+b.n])]
		if !ok {
			return 0, false
		}
		return t.scores[id], true
	})
	out = t.emitSymbols(syms, text, out, func(out []int32, piece []byte) []int32 {
		// Merged symbols are always tokens, so this is a single character
		// the vocabulary lacks: spell it in bytes.
		for _, c := range piece {
			if id := t.byteTok[c]; id >= 0 {
				out = append(out, id)
			} else if t.unk >= 0 {
				out = append(out, t.unk)
			}
		}
		return out
	})
	s.syms, s.heap = syms, h
	return out
}
