package tokenizer

// This file is llama.cpp's RWKV tokenizer (tokenizer.ggml.model "rwkv",
// the RWKV World vocabulary of RWKV-6 and RWKV-7): each token's text is an
// escaped byte string, and a text is cut greedily, from its start, into
// the longest token that begins there — a trie walk in llama.cpp, which
// finds exactly the longest prefix of the rest that is a token, as the
// lookups by decreasing length here do.

// unescapeRWKV appends to dst the bytes an RWKV token's text stands for,
// as llama.cpp's llama_unescape_rwkv_token reads it: \t, \n and \r are
// those bytes, \xHH the byte HH (digits above 9 read as lowercase letters:
// an uppercase one gives what llama.cpp's arithmetic gives, wrapping in a
// byte), a backslash before any other byte that byte; everything else as
// it is. A text ending inside an escape drops it.
func unescapeRWKV(dst []byte, s string) []byte {
	escaping := false
	hexLeft := 0
	var acc byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case hexLeft > 0:
			v := c - '0'
			if c >= 'a' {
				v = c - 'a' + 10
			}
			acc = acc<<4 + v
			if hexLeft--; hexLeft == 0 {
				dst = append(dst, acc)
				acc = 0
			}
		case escaping:
			escaping = false
			switch c {
			case 't':
				dst = append(dst, '\t')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 'x':
				hexLeft = 2
			default:
				dst = append(dst, c)
			}
		case c == '\\':
			escaping = true
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// buildRWKV fills the byte strings' index: each token's unescaped bytes to
// its id, a later id taking the bytes of an earlier one (llama.cpp's trie
// keeps the last inserted), and the longest in bytes.
func (t *Tokenizer) buildRWKV() {
	t.rwkv = make(map[string]int32, len(t.tokens))
	t.maxTokenLen = 0
	var buf []byte
	for id, s := range t.tokens {
		buf = unescapeRWKV(buf[:0], s)
		t.rwkv[string(buf)] = int32(id)
		t.maxTokenLen = max(t.maxTokenLen, len(buf))
	}
}

// encodeRWKV appends the tokens of text: at each position the longest
// token its bytes start with. A byte no token starts with gives UNK, or
// nothing when the vocabulary has none (llama.cpp would emit the id -1
// there; the RWKV World vocabulary has every byte as a token, so neither
// happens with it).
func (t *Tokenizer) encodeRWKV(_ *scratch, text string, out []int32) []int32 {
	for pos := 0; pos < len(text); {
		n := 0
		var id int32
		for l := min(t.maxTokenLen, len(text)-pos); l > 0; l-- {
			if v, ok := t.rwkv[text[pos:pos+l]]; ok {
				n, id = l, v
				break
			}
		}
		if n == 0 {
			if t.unk >= 0 {
				out = append(out, t.unk)
			}
			pos++
			continue
		}
		out = append(out, id)
		pos += n
	}
	return out
}
