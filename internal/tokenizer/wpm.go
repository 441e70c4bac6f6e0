package tokenizer

//go:generate python3 gen_nfd.py

import (
	"sort"
	"unicode"
)

// WordPiece (WPM), the tokenizer of BERT vocabularies, as llama.cpp's
// llm_tokenizer_wpm implements it. The text is normalised and cut into
// words; each word, with "▁" in front, is then split greedily into the
// longest tokens from the left. In a GGUF vocabulary a word-initial piece
// is stored as "▁piece" and a continuation piece (BERT's "##piece") as
// plain "piece", so one longest-match pass over "▁word" finds both. A word
// that cannot be split entirely becomes the unknown token.
//
// Normalisation, per code point:
//   - each code point is replaced by the first code point of its NFD form,
//     which strips the accents of precomposed letters (é → e) — llama.cpp's
//     table-driven stand-in for NFD;
//   - whitespace ends a word; NUL, U+FFFD and control and format
//     characters (Cc, Cf, Co, Cs) are dropped;
//   - combining marks (\p{M}) are dropped, unless the vocabulary keeps
//     accents (tokenizer.ggml.normalizer.strip_accents = false);
//   - letters are lowercased, unless the vocabulary keeps case
//     (tokenizer.ggml.normalizer.lowercase = false; it also keeps accents
//     unless strip_accents says otherwise);
//   - punctuation, ASCII symbols and CJK ideographs are words of their own.

// nfdRange maps the code points lo…hi to the code point to.
type nfdRange struct{ lo, hi, to rune }

// nfdFirst returns the first code point of the NFD form of r.
func nfdFirst(r rune) rune {
	if r < 0xC0 {
		return r
	}
	i := sort.Search(len(nfdRanges), func(i int) bool { return nfdRanges[i].hi >= r })
	if i < len(nfdRanges) && nfdRanges[i].lo <= r {
		return nfdRanges[i].to
	}
	return r
}

// isChineseChar is BERT's test for a CJK ideograph, with the same ranges
// as llama.cpp (which copies one off-by-something bound from Hugging Face:
// 0x2B920 where the block starts at 0x2B820).
func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

func isControlChar(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// wpmWords normalises text and appends its words to s.buf, one span of
// bytes per word in s.spans.
func (t *Tokenizer) wpmWords(s *scratch, text string) {
	s.buf, s.spans = s.buf[:0], s.spans[:0]
	start := 0 // of the word being built, in s.buf
	end := func() {
		if len(s.buf) > start {
			s.spans = append(s.spans, span{int32(start), int32(len(s.buf))})
			start = len(s.buf)
		}
	}
	for i := 0; i < len(text); {
		r, n := decodeRune(text[i:])
		i += n
		r = nfdFirst(r)
		info := infoOf(r)
		if info.space {
			end()
			continue
		}
		if r == 0 || r == 0xFFFD || isControlChar(r) || (!t.keepAccents && info.cat == catMark) {
			continue
		}
		lower := r
		if !t.keepCase {
			lower = unicode.ToLower(r)
		}
		if info.cat == catPunct || (r < 0x7F && info.cat == catSymbol) || isChineseChar(r) {
			end()
			s.buf = appendRune(s.buf, lower)
			end()
			continue
		}
		s.buf = appendRune(s.buf, lower)
	}
	end()
}

// encodeWPM appends the tokens of one text fragment.
func (t *Tokenizer) encodeWPM(s *scratch, text string, out []int32) []int32 {
	t.wpmWords(s, text)
	for _, w := range s.spans {
		word := append(append(s.key[:0], "▁"...), s.buf[w.start:w.end]...)
		s.key = word
		n := len(word)
		mark := len(out)
		for i := 0; i < n; {
			j := min(n, i+t.maxTokenLen)
			for ; j > i; j-- {
				if id, ok := t.ids[string(word[i:j])]; ok {
					out = append(out, id)
					break
				}
			}
			if j == i { // no token starts here: the whole word is unknown
				out = out[:mark]
				break
			}
			i = j
		}
		if len(out) == mark && t.unk >= 0 {
			out = append(out, t.unk)
		}
	}
	return out
}
