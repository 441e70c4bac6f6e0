package tokenizer

import "fmt"

// buildPieces computes the text of every token once, as llama.cpp's
// token_to_piece cache does (with special = true).
func (t *Tokenizer) buildPieces() {
	t.pieceOffs = make([]int32, len(t.tokens)+1)
	size := 0
	for _, s := range t.tokens {
		size += len(s)
	}
	t.pieces = make([]byte, 0, size)
	for i, s := range t.tokens {
		t.pieces = t.appendTokenText(t.pieces, s, t.attrs[i])
		t.pieceOffs[i+1] = int32(len(t.pieces))
	}
}

func (t *Tokenizer) appendTokenText(dst []byte, s string, a uint16) []byte {
	switch {
	case t.kind == kindRWKV:
		return unescapeRWKV(dst, s) // whatever the token's type, as llama.cpp

	case a&(attrUnknown|attrControl|attrUserDefined) != 0:
		return append(dst, s...)
	case a&attrNormal != 0:
		if t.kind != kindBPE {
			return append(dst, unescapeSpaces(s)...)
		}
		return appendByteDecoded(dst, s)
	case a&attrByte != 0:
		if b, ok := parseByteToken(s); ok {
			return append(dst, b)
		}
	}
	// Unused and undefined tokens have no text.
	return dst
}

// parseByteToken reads the byte of an SPM byte token "<0xNN>".
func parseByteToken(s string) (byte, bool) {
	if len(s) < 5 {
		return 0, false
	}
	hi, ok1 := hexVal(s[3])
	lo, ok2 := hexVal(s[4])
	if !ok1 {
		return 0, false
	}
	if !ok2 { // llama.cpp parses with strtol, which stops at the first non-digit
		return hi, true
	}
	return hi<<4 | lo, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendByteDecoded maps a GPT-2 byte-level token back to its bytes. A code
// point outside the byte alphabet is written as llama.cpp writes it:
// "[UNK_BYTE_0x<hex of its UTF-8>" followed by the whole token and "]".
func appendByteDecoded(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		i += n
		if r >= 0 && int(r) < len(runeToByte) && runeToByte[r] >= 0 {
			dst = append(dst, byte(runeToByte[r]))
			continue
		}
		dst = append(dst, "[UNK_BYTE_0x"...)
		for _, b := range appendRune(nil, r) {
			dst = fmt.Appendf(dst, "%02x", b)
		}
		dst = append(dst, s...)
		dst = append(dst, ']')
	}
	return dst
}

// Piece returns the text of one token as llama.cpp's llama_token_to_piece
// with special = true gives it: SPM "▁" becomes a space, byte tokens
// <0xNN> become that byte, GPT-2 byte-level text becomes the bytes it
// stands for, and control tokens give their own text ("<s>"). A piece can
// be part of a UTF-8 sequence. Piece returns nil for an invalid id.
//
// The returned slice is shared by all callers; do not modify it.
func (t *Tokenizer) Piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokens) {
		return nil
	}
	a, b := t.pieceOffs[id], t.pieceOffs[id+1]
	return t.pieces[a:b:b]
}

// AppendPiece appends Piece(id) to dst and returns the extended slice. It
// allocates only when dst must grow, which makes it the choice for
// streaming generated text.
func (t *Tokenizer) AppendPiece(dst []byte, id int32) []byte {
	return append(dst, t.Piece(id)...)
}

// Decode turns ids back into text as llama.cpp's llama_detokenize does with
// remove_special = true and unparse_special = false:
//   - a leading BOS and a trailing EOS are dropped (when AddBOS / AddEOS);
//   - control and unknown tokens contribute nothing;
//   - with an SPM vocabulary that adds a space prefix, one leading space of
//     the first token is removed — unless a BOS was dropped, as llama.cpp
//     does, so Decode(Encode(s, false)) == s but Decode(Encode(s, true))
//     starts with a space;
//   - BPE vocabularies whose pre-tokenizer asks for it get llama.cpp's
//     clean-up: the space before ? ! . , and before 's 'm 're 've is
//     removed, and " ' " becomes "'".
//
// Invalid ids are skipped.
func (t *Tokenizer) Decode(ids []int32) string {
	removeSpace := t.addSpacePrefix
	if t.addBOS && len(ids) > 0 && ids[0] == t.bos {
		removeSpace = false
		ids = ids[1:]
	}
	if t.addEOS && len(ids) > 0 && ids[len(ids)-1] == t.eos {
		ids = ids[:len(ids)-1]
	}
	var out []byte
	for _, id := range ids {
		p := t.Piece(id)
		if p == nil {
			continue
		}
		if t.attrs[id]&(attrUnknown|attrControl) != 0 {
			p = nil
		}
		if removeSpace && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		removeSpace = false
		out = append(out, p...)
	}
	if t.cleanSpaces {
		out = cleanSpaces(out)
	}
	return string(out)
}

// cleanSpaces is llama.cpp's clean_up_tokenization_spaces, three passes
// over the bytes in place.
func cleanSpaces(text []byte) []byte {
	if len(text) == 0 {
		return text
	}
	// " ?", " !", " .", " ," lose the space.
	text = dropSpaces(text, func(text []byte, i int) (bool, int) {
		x := text[i]
		return x == '?' || x == '!' || x == '.' || x == ',', 0
	})
	// " ' " becomes "'".
	text = dropSpaces(text, func(text []byte, i int) (bool, int) {
		if text[i] == '\'' && i+1 < len(text) && text[i+1] == ' ' {
			// llama.cpp overwrites the next space with NUL and then skips
			// it; the NUL keeps a following quote from matching too.
			text[i+1] = 0
			return true, 1
		}
		return false, 0
	})
	// " 's", " 'm", " 're", " 've" lose the space.
	return dropSpaces(text, func(text []byte, i int) (bool, int) {
		if text[i] != '\'' || i+1 >= len(text) {
			return false, 0
		}
		switch x1 := text[i+1]; {
		case x1 == 's' || x1 == 'm':
			return true, 0
		case x1 == 't' || x1 == 'd':
		case i+2 < len(text):
			return (x1 == 'r' || x1 == 'v') && text[i+2] == 'e', 0
		}
		return false, 0
	})
}

// dropSpaces is one pass of cleanSpaces: it moves text down over itself,
// dropping the space before each byte i that drop picks, and skipping the
// bytes after i that drop says to.
func dropSpaces(text []byte, drop func(text []byte, i int) (bool, int)) []byte {
	n := 1
	for i := 1; i < len(text); i++ {
		x := text[i]
		if text[i-1] == ' ' {
			d, skip := drop(text, i)
			if d {
				n--
			}
			i += skip
		}
		text[n] = x
		n++
	}
	return text[:n]
}

// OutputPiece is the text id adds to generated output: Piece, except that
// control and unknown tokens add nothing, as in Decode.
func (t *Tokenizer) OutputPiece(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokens) || t.attrs[id]&(attrUnknown|attrControl) != 0 {
		return nil
	}
	return t.Piece(id)
}
