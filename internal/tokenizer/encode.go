package tokenizer

import "strings"

// fragment is a piece of the input after special tokens are split out:
// either raw text text[start:end] or a single token id (start = -1).
type fragment struct {
	id         int32
	start, end int
}

// scratch holds the buffers one Encode call needs, reused through a pool.
type scratch struct {
	frags, frags2 []fragment
	buf           []byte // escaped or byte-encoded text
	key           []byte // BPE merge lookup key
	syms          []symbol
	heap          []bigram

	// BPE pre-tokenizer.
	cps   []rune
	info  []cpInfo
	spans []span
	tmp   []span
}

// Encode converts text to token ids as llama.cpp's llama_tokenize does with
// parse_special = false: text that looks like a control token ("<s>",
// "<|im_end|>") is tokenized as ordinary text; only user-defined tokens are
// matched literally. With addSpecial, BOS and EOS are added when the
// vocabulary asks for them (AddBOS, AddEOS).
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	return t.encode(text, addSpecial, false)
}

// EncodeSpecial is Encode with parse_special = true: the texts of control,
// user-defined and unknown tokens found in text become those tokens. Use it
// for prompts rendered from chat templates.
func (t *Tokenizer) EncodeSpecial(text string, addSpecial bool) []int32 {
	return t.encode(text, addSpecial, true)
}

func (t *Tokenizer) encode(text string, addSpecial, parseSpecial bool) []int32 {
	s := t.pool.Get().(*scratch)
	defer t.pool.Put(s)

	// Most text needs fewer than one token per three bytes.
	out := make([]int32, 0, len(text)/3+4)
	frags := t.partition(s, text, parseSpecial)
	if addSpecial && t.addBOS && t.bos >= 0 {
		out = append(out, t.bos)
	}
	switch t.kind {
	case kindSPM:
		prevSpecial := true // the text start counts as after a special token
		for _, f := range frags {
			if f.start < 0 {
				out = append(out, f.id)
				prevSpecial = true
				continue
			}
			s.buf = s.buf[:0]
			if t.addSpacePrefix && prevSpecial {
				s.buf = append(s.buf, 0xE2, 0x96, 0x81) // "▁"
			}
			s.buf = escapeSpaces(s.buf, text[f.start:f.end])
			out = t.encodeSPM(s, s.buf, out)
			prevSpecial = false
		}
	case kindBPE:
		for _, f := range frags {
			if f.start < 0 {
				out = append(out, f.id)
				continue
			}
			out = t.encodeBPE(s, text[f.start:f.end], out)
		}
	}
	if addSpecial && t.addEOS && t.eos >= 0 {
		out = append(out, t.eos)
	}
	return out
}

// partition splits text on the texts of special tokens as llama.cpp's
// tokenizer_st_partition does: token by token, longest text first, each
// splitting every text fragment at every occurrence. Without parseSpecial
// only user-defined tokens take part.
func (t *Tokenizer) partition(s *scratch, text string, parseSpecial bool) []fragment {
	frags := append(s.frags[:0], fragment{start: 0, end: len(text)})
	if text == "" {
		s.frags = frags
		return frags[:0]
	}
	var present [256]bool
	for i := 0; i < len(text); i++ {
		present[text[i]] = true
	}
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		tok := t.tokens[id]
		if !present[tok[0]] || !strings.Contains(text, tok) {
			continue
		}
		next := s.frags2[:0]
		for _, f := range frags {
			if f.start < 0 {
				next = append(next, f)
				continue
			}
			start, end := f.start, f.end
			for {
				i := strings.Index(text[start:end], tok)
				if i < 0 {
					next = append(next, fragment{start: start, end: end})
					break
				}
				m := start + i
				left := m
				if a&attrLStrip != 0 {
					for left > start && isCSpace(text[left-1]) {
						left--
					}
				}
				if left > start {
					next = append(next, fragment{start: start, end: left})
				}
				next = append(next, fragment{id: id, start: -1, end: -1})
				start = m + len(tok)
				if a&attrRStrip != 0 {
					for start < end && isCSpace(text[start]) {
						start++
					}
				}
				if start >= end {
					break
				}
			}
		}
		frags, s.frags2 = next, frags
	}
	s.frags = frags
	return frags
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
