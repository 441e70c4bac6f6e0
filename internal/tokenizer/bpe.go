package tokenizer

// encodeBPE appends the tokens of one text fragment for a byte-level BPE
// vocabulary: pre-tokenize into words, spell each word in GPT-2's byte
// alphabet, merge by rank within the word, and emit the resulting symbols.
func (t *Tokenizer) encodeBPE(s *scratch, text string, out []int32) []int32 {
	x := t.pre.split(s, text)
	for _, w := range s.spans {
		s.buf = s.buf[:0]
		var enc [4]byte
		for _, r := range x.cps[w.start:w.end] {
			for _, b := range appendRune(enc[:0], r) {
				s.buf = appendRune(s.buf, byteToRune[b])
			}
		}
		out = t.mergeWord(s, s.buf, out)
	}
	return out
}

// mergeWord runs the BPE merges over one byte-encoded word.
func (t *Tokenizer) mergeWord(s *scratch, word []byte, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.ids[string(word)]; ok {
			return append(out, id)
		}
	}
	syms := splitSymbols(s.syms, word)
	h := s.heap[:0]
	key := s.key[:0]
	try := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		a, b := syms[l], syms[r]
		key = append(key[:0], word[a.start:a.start+a.n]...)
		key = append(key, ' ')
		key = append(key, word[b.start:b.start+b.n]...)
		rank, ok := t.merges[string(key)]
		if !ok {
			return
		}
		h = pushBigram(h, bigram{left: l, right: r, size: a.n + b.n, prio: -float32(rank)})
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
	for i := int32(0); len(syms) > 0 && i != -1; i = syms[i].next {
		sym := syms[i]
		piece := word[sym.start : sym.start+sym.n]
		if id, ok := t.ids[string(piece)]; ok {
			out = append(out, id)
			continue
		}
		// llama.cpp looks up each byte of the encoded text on its own;
		// only ASCII bytes can be tokens, the rest are dropped.
		for j := range piece {
			if id, ok := t.ids[string(piece[j:j+1])]; ok {
				out = append(out, id)
			}
		}
	}
	s.syms, s.heap, s.key = syms, h, key
	return out
}
