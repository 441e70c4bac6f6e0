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
	// The lowest merge rank goes first.
	h = mergeSymbols(syms, h, func(a, b symbol) (float32, bool) {
		key = append(key[:0], word[a.start:a.start+a.n]...)
		key = append(key, ' ')
		key = append(key, word[b.start:b.start+b.n]...)
		rank, ok := t.merges[string(key)]
		return -float32(rank), ok
	})
	out = t.emitSymbols(syms, word, out, func(out []int32, piece []byte) []int32 {
		// llama.cpp looks up each byte of the encoded text on its own;
		// only ASCII bytes can be tokens, the rest are dropped.
		for j := range piece {
			if id, ok := t.ids[string(piece[j:j+1])]; ok {
				out = append(out, id)
			}
		}
		return out
	})
	s.syms, s.heap, s.key = syms, h, key
	return out
}
