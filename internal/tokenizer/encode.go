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

	ugm []ugmBest // UGM's best segmentation at each offset
}

// Encode converts text to token ids as llama.cpp's llama_tokenize does with
// parse_special = false: text that looks like a control token ("<s>",
// "<|im_end|>") is tokenized as ordinary text; only user-defined tokens are
// matched literally. With addSpecial, BOS and EOS are added when the
// vocabulary asks for them (AddBOS, AddEOS); a WordPiece vocabulary adds
// its [CLS] (BOS) and [SEP].
//
// Encode tokenizes text that starts a sequence. For text appended to a
// sequence that already holds tokens, use EncodeContinuation.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int32 {
	return t.encode(text, encodeOpts{addSpecial: addSpecial, prevSpecial: true})
}

// EncodeSpecial is Encode with parse_special = true: the texts of control,
// user-defined and unknown tokens found in text become those tokens. Use it
// for prompts rendered from chat templates.
func (t *Tokenizer) EncodeSpecial(text string, addSpecial bool) []int32 {
	return t.encode(text, encodeOpts{addSpecial: addSpecial, parseSpecial: true, prevSpecial: true})
}

// EncodeContinuation converts text that is appended to a sequence whose
// last token is last, giving the ids llama.cpp gives this text when it
// tokenizes the whole sequence's text at once. No BOS or EOS is added, and
// special-token text is plain text, as in Encode.
//
// The difference from Encode is SentencePiece's dummy prefix: Encode puts a
// space before text that starts a sequence, so " world" after "Hello"
// would become "▁" "▁world" instead of "▁world". EncodeContinuation adds
// the prefix only where llama.cpp adds it inside one text — after a special
// token (BOS, a control or user-defined token) — and, like llama.cpp,
// drops the whitespace after a special token that strips it on the right
// (Phi-3's chat markers). A last outside the vocabulary (-1, say) means an
// empty sequence: the result is Encode(text, false). BPE and WordPiece
// vocabularies have no prefix, so for them only the whitespace rule can
// make the result differ from Encode(text, false); a unigram (UGM)
// vocabulary's prefix goes before every piece of text between special
// tokens in llama.cpp, so it goes before a continuation too.
//
// The ids equal those of encoding the whole text only when the join
// between the two texts is also a token boundary there: where a split
// falls inside a word ("Hel" + "lo"), between a word and the space that
// ends it ("Hello " + "world"), inside a run of spaces, digits or
// punctuation, or where a token of the vocabulary spans the join, the
// whole text tokenizes differently, and no per-piece encoding can match
// it. Splits before a space that starts a word, as in streaming chat
// turns, are exact.
func (t *Tokenizer) EncodeContinuation(last int32, text string) []int32 {
	return t.encode(text, t.continuation(last, false))
}

// EncodeSpecialContinuation is EncodeContinuation with parse_special =
// true, for chat-template text appended to a conversation.
func (t *Tokenizer) EncodeSpecialContinuation(last int32, text string) []int32 {
	return t.encode(text, t.continuation(last, true))
}

func (t *Tokenizer) continuation(last int32, parseSpecial bool) encodeOpts {
	o := encodeOpts{parseSpecial: parseSpecial, prevSpecial: true}
	if last < 0 || int(last) >= len(t.attrs) {
		return o
	}
	a := t.attrs[last]
	o.prevSpecial = a&(attrControl|attrUserDefined|attrUnknown) != 0
	o.rstrip = o.prevSpecial && a&attrRStrip != 0
	return o
}

// encodeOpts are the settings of one encode call.
type encodeOpts struct {
	addSpecial   bool // BOS/EOS (WPM: CLS/SEP) as the vocabulary asks
	parseSpecial bool // special-token text becomes special tokens
	// prevSpecial: the text follows a special token or starts the
	// sequence, so SPM puts its space prefix before the first fragment.
	prevSpecial bool
	// rstrip: the text follows a special token that strips whitespace on
	// its right, so leading whitespace is dropped.
	rstrip bool
}

func (t *Tokenizer) encode(text string, o encodeOpts) []int32 {
	s := t.pool.Get().(*scratch)
	defer t.pool.Put(s)

	if o.rstrip {
		i := 0
		for i < len(text) && isCSpace(text[i]) {
			i++
		}
		text = text[i:]
	}
	// Most text needs fewer than one token per three bytes.
	out := make([]int32, 0, len(text)/3+4)
	frags := t.partition(s, text, o.parseSpecial)
	switch t.kind {
	case kindSPM:
		if o.addSpecial && t.addBOS && t.bos >= 0 {
			out = append(out, t.bos)
			o.prevSpecial = true
		}
		prevSpecial := o.prevSpecial
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
		if o.addSpecial && t.addEOS && t.eos >= 0 {
			out = append(out, t.eos)
		}
	case kindBPE:
		out = encodeFragments(s, text, frags, out, ifSet(o.addSpecial && t.addBOS, t.bos), ifSet(o.addSpecial && t.addEOS, t.eos), t.encodeBPE)
	case kindUGM:
		out = encodeFragments(s, text, frags, out, ifSet(o.addSpecial && t.addBOS, t.bos), ifSet(o.addSpecial && t.addEOS, t.eos), t.encodeUGM)
	case kindRWKV:
		// llama.cpp's RWKV tokenizer adds nothing, whatever the flags.
		out = encodeFragments(s, text, frags, out, -1, -1, t.encodeRWKV)
	case kindWPM:
		// llama.cpp adds [CLS] and [SEP] whenever add_special is set.
		out = encodeFragments(s, text, frags, out, ifSet(o.addSpecial, t.bos), ifSet(o.addSpecial, t.sep), t.encodeWPM)
	}
	return out
}

// encodeFragments appends first, the fragments of text (special tokens as
// they are, the text between them through enc) and last; first and last
// are left out when negative.
func encodeFragments(s *scratch, text string, frags []fragment, out []int32, first, last int32,
	enc func(s *scratch, text string, out []int32) []int32) []int32 {
	if first >= 0 {
		out = append(out, first)
	}
	for _, f := range frags {
		if f.start < 0 {
			out = append(out, f.id)
			continue
		}
		out = enc(s, text[f.start:f.end], out)
	}
	if last >= 0 {
		out = append(out, last)
	}
	return out
}

// ifSet is id when ok, else -1 (no token).
func ifSet(ok bool, id int32) int32 {
	if ok {
		return id
	}
	return -1
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
