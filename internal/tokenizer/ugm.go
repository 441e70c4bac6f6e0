package tokenizer

import "math"

// This file is llama.cpp's UGM tokenizer (tokenizer.ggml.model "t5"), the
// SentencePiece unigram model of T5 and of the XLM-RoBERTa vocabularies
// that bge-m3, multilingual-e5 and nomic-embed-text-v2-moe carry. A text
// is normalized (the precompiled charsmap's replacements, spaces escaped
// as "▁", a dummy prefix, runs of spaces merged on request) and then cut
// by a Viterbi search for the segmentation whose token scores sum
// highest, a code point no token covers costing the lowest score less 10.

// ugmUnknownPenalty is how much less than the lowest normal token's score
// a code point scores as UNK (llama.cpp's unknown_token_score_penalty).
const ugmUnknownPenalty = 10

// ugm is what a UGM vocabulary adds to a Tokenizer.
type ugm struct {
	tokens trie // normal, user-defined and unused tokens
	user   trie // user-defined tokens, copied through normalization as they are
	norm   charsmap

	unkScore float64 // the score of a code point no token covers

	// llama.cpp's normalizer flags. Only remove_extra_whitespaces is read
	// from the file; escaping spaces is always on and whitespace is never
	// a suffix in llama.cpp, but both are kept to say what normalize does.
	mergeSpaces    bool
	escapeSpaces   bool
	spaceAsSuffix  bool
	addSpacePrefix bool
}

// ugmBest is the best segmentation found so far of the normalized text up
// to some offset: its last token, where that token starts, and the sum of
// the scores.
type ugmBest struct {
	id    int32
	from  int
	score float64
}

// buildUGM fills t.ugm from the tokens' attributes and scores and the
// precompiled charsmap, as llama.cpp's llm_tokenizer_ugm constructor does.
func (t *Tokenizer) buildUGM(v Vocab) error {
	norm, err := parseCharsmap(v.Charsmap)
	if err != nil {
		return err
	}
	u := &ugm{
		tokens:         newTrie(),
		user:           newTrie(),
		norm:           norm,
		mergeSpaces:    v.RemoveExtraWhitespaces,
		escapeSpaces:   true,
		addSpacePrefix: t.addSpacePrefix,
	}
	minScore := float32(math.MaxFloat32)
	for id, s := range t.tokens {
		a := t.attrs[id]
		if a&attrNormal != 0 {
			minScore = min(minScore, t.scores[id])
		}
		if a&(attrNormal|attrUserDefined|attrUnused) != 0 {
			u.tokens.insert(s, int32(id))
		}
		if a&attrUserDefined != 0 {
			u.user.insert(s, int32(id))
		}
	}
	// In float32, as llama.cpp computes it: with no normal token the
	// penalty vanishes into MaxFloat32.
	u.unkScore = float64(minScore - ugmUnknownPenalty)
	t.ugm = u
	return nil
}

// encodeUGM appends the tokens of text: the best-scoring segmentation of
// its normalized form, consecutive UNKs merged into one. A user-defined
// token scores 0, above any normal token's log probability. With no UNK
// in the vocabulary the uncovered code points give nothing (llama.cpp
// would emit the id -1).
func (t *Tokenizer) encodeUGM(s *scratch, text string, out []int32) []int32 {
	u := t.ugm
	s.buf = u.normalize(s.buf[:0], text)
	norm := s.buf
	n := len(norm)
	if n == 0 {
		return out
	}
	best := s.ugm[:0]
	for range n + 1 {
		best = append(best, ugmBest{id: t.unk, score: -math.MaxFloat64})
	}
	s.ugm = best
	best[0].score = 0
	for off := 0; off < n; {
		cpLen := min(utf8Len(norm[off]), n-off)
		cur := best[off].score
		whole := false // a token is exactly this code point
		node := int32(0)
		for p := off; p < n; p++ {
			if node = u.tokens.step(node, norm[p]); node < 0 {
				break
			}
			id := u.tokens.value[node]
			if id < 0 {
				continue
			}
			if p+1-off == cpLen {
				whole = true
			}
			score := float64(t.scores[id])
			if t.attrs[id]&attrUserDefined != 0 {
				score = 0
			}
			if c := cur + score; c > best[p+1].score {
				best[p+1] = ugmBest{id: id, from: off, score: c}
			}
		}
		if !whole {
			if c := cur + u.unkScore; c > best[off+cpLen].score {
				best[off+cpLen] = ugmBest{id: t.unk, from: off, score: c}
			}
		}
		off += cpLen
	}

	// Walk back from the end; every step starts strictly earlier, and a
	// position never reached keeps from = 0, so the walk ends.
	start := len(out)
	prevUnk := false
	for i := n; ; {
		b := best[i]
		isUnk := b.id == t.unk
		if !(prevUnk && isUnk) && b.id >= 0 {
			out = append(out, b.id)
		}
		if b.from == 0 {
			break
		}
		prevUnk = isUnk
		i = b.from
	}
	for i, j := start, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// normalize appends text normalized as llama.cpp's UGM normalize does:
// each prefix replaced (see normalizePrefix), every space escaped as "▁",
// a "▁" put before the first word (add_space_prefix) — or, when extra
// whitespace is removed, before every word, the spaces themselves
// dropped — and with whitespace as a suffix, after the text instead.
// Only the byte ' ' counts as a space; the charsmap maps the others to it.
func (u *ugm) normalize(dst []byte, text string) []byte {
	space := " "
	if u.escapeSpaces {
		space = "\u2581"
	}
	prepend := !u.spaceAsSuffix && u.addSpacePrefix
	prepended, inWord := false, false
	for off := 0; off < len(text); {
		piece, n := u.normalizePrefix(text[off:])
		for i := 0; i < len(piece); i++ {
			c := piece[i]
			if c == ' ' {
				inWord = false
				if !u.mergeSpaces {
					dst = append(dst, space...)
				}
				continue
			}
			if !inWord {
				inWord = true
				if (prepend && !prepended) || u.mergeSpaces {
					dst = append(dst, space...)
					prepended = true
				}
			}
			dst = append(dst, c)
		}
		off += n
	}
	if u.spaceAsSuffix && u.addSpacePrefix {
		dst = append(dst, space...)
	}
	return dst
}

// normalizePrefix returns the normalized form of the start of s (empty
// when the charsmap deletes it) and how many bytes of s, at least one, it
// consumed:
//   - a start along the user-defined tokens' trie as it is — as deep as
//     the trie goes, whether or not a token ends there, as llama.cpp's
//     naive_trie::get_longest_prefix walks it;
//   - else the replacement of the longest prefix the charsmap holds;
//   - else one code point as it is, or U+FFFD for one byte of invalid
//     UTF-8.
func (u *ugm) normalizePrefix(s string) (string, int) {
	if n := u.user.walk(s); n > 0 {
		return s[:n], n
	}
	if repl, n := u.norm.longest(s); n > 0 {
		return repl, n
	}
	r, n := decodeRune(s)
	if r == 0xFFFD && n == 1 {
		return "\uFFFD", 1
	}
	return s[:n], n
}

// trie is a byte trie kept as first-child and next-sibling lists, the
// node 0 its root: smaller than a map per node for a vocabulary of
// 250,000 tokens, and the sibling lists are short below the first byte.
type trie struct {
	label []byte
	child []int32 // first child, -1 for none
	next  []int32 // next sibling, -1 for none
	value []int32 // token id ending here, -1 for none
}

func newTrie() trie {
	return trie{label: []byte{0}, child: []int32{-1}, next: []int32{-1}, value: []int32{-1}}
}

// insert adds s with id, a later id taking the place of an earlier one.
func (t *trie) insert(s string, id int32) {
	node := int32(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		k := t.step(node, c)
		if k < 0 {
			k = int32(len(t.label))
			t.label = append(t.label, c)
			t.child = append(t.child, -1)
			t.next = append(t.next, t.child[node])
			t.value = append(t.value, -1)
			t.child[node] = k
		}
		node = k
	}
	t.value[node] = id
}

// step returns node's child by c, or -1.
func (t *trie) step(node int32, c byte) int32 {
	for k := t.child[node]; k >= 0; k = t.next[k] {
		if t.label[k] == c {
			return k
		}
	}
	return -1
}

// walk returns how many bytes of s the trie follows from its root.
func (t *trie) walk(s string) int {
	node := int32(0)
	for i := 0; i < len(s); i++ {
		if node = t.step(node, s[i]); node < 0 {
			return i
		}
	}
	return len(s)
}
