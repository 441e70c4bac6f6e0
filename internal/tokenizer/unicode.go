package tokenizer

import "unicode"

// utf8Len returns the length of the UTF-8 sequence that starts with lead,
// judged by the lead byte alone, the way llama.cpp splits text into symbols:
// a stray continuation byte counts as one byte, and nothing is validated.
func utf8Len(lead byte) int {
	switch {
	case lead < 0xC0:
		return 1
	case lead < 0xE0:
		return 2
	case lead < 0xF0:
		return 3
	}
	return 4
}

// decodeRune decodes one code point from s the way llama.cpp does before
// pre-tokenizing: the lead byte fixes the length and the continuation bytes
// must be present and well formed, but overlong forms and surrogates are
// accepted as they are. An invalid byte yields U+FFFD and a size of 1.
func decodeRune(s string) (r rune, size int) {
	b0 := s[0]
	switch {
	case b0 < 0x80:
		return rune(b0), 1
	case b0 < 0xC0:
		return 0xFFFD, 1
	case b0 < 0xE0:
		if len(s) < 2 || !isCont(s[1]) {
			return 0xFFFD, 1
		}
		return rune(b0&0x1F)<<6 | rune(s[1]&0x3F), 2
	case b0 < 0xF0:
		if len(s) < 3 || !isCont(s[1]) || !isCont(s[2]) {
			return 0xFFFD, 1
		}
		return rune(b0&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	case b0 < 0xF8:
		if len(s) < 4 || !isCont(s[1]) || !isCont(s[2]) || !isCont(s[3]) {
			return 0xFFFD, 1
		}
		return rune(b0&0x07)<<18 | rune(s[1]&0x3F)<<12 | rune(s[2]&0x3F)<<6 | rune(s[3]&0x3F), 4
	}
	return 0xFFFD, 1
}

func isCont(b byte) bool { return b&0xC0 == 0x80 }

// appendRune appends the UTF-8 encoding of r without Go's validity checks,
// so surrogates decoded by decodeRune are written back unchanged. Values
// past U+10FFFF cannot be encoded and become U+FFFD.
func appendRune(dst []byte, r rune) []byte {
	switch {
	case r < 0:
		return appendRune(dst, 0xFFFD)
	case r < 0x80:
		return append(dst, byte(r))
	case r < 0x800:
		return append(dst, 0xC0|byte(r>>6), 0x80|byte(r)&0x3F)
	case r < 0x10000:
		return append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	case r <= 0x10FFFF:
		return append(dst, 0xF0|byte(r>>18), 0x80|byte(r>>12)&0x3F, 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
	return appendRune(dst, 0xFFFD)
}

// category is the Unicode general category group of a code point, as far as
// the pre-tokenizers care.
type category uint8

const (
	catOther  category = iota // C*, Z* and unassigned
	catLetter                 // L*
	catNumber                 // N*
	catPunct                  // P*
	catSymbol                 // S*
	catMark                   // M*
)

// cpInfo describes one code point for the pre-tokenizers.
type cpInfo struct {
	cat   category
	space bool // Unicode White_Space, the set llama.cpp calls whitespace
}

var latin1Info [256]cpInfo

func init() {
	for r := range rune(256) {
		latin1Info[r] = classify(r)
	}
}

func classify(r rune) cpInfo {
	var c cpInfo
	switch {
	case unicode.IsLetter(r):
		c.cat = catLetter
	case unicode.IsNumber(r):
		c.cat = catNumber
	case unicode.IsPunct(r):
		c.cat = catPunct
	case unicode.IsSymbol(r):
		c.cat = catSymbol
	case unicode.IsMark(r):
		c.cat = catMark
	}
	c.space = unicode.Is(unicode.White_Space, r)
	return c
}

func infoOf(r rune) cpInfo {
	if r >= 0 && r < 256 {
		return latin1Info[r]
	}
	return classify(r)
}

// byteToRune is GPT-2's byte-level alphabet: every byte is shown as a
// printable code point so that BPE merges never see raw control bytes or
// spaces. Printable Latin-1 bytes stand for themselves; the rest are
// numbered from U+0100 in byte order.
var byteToRune [256]rune

// runeToByte inverts byteToRune for code points below 0x144; -1 elsewhere.
var runeToByte [0x144]int16

func init() {
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	n := rune(0)
	for b := range 256 {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
		runeToByte[byteToRune[b]] = int16(b)
	}
}

// unescapeSpaces replaces SentencePiece's "▁" (U+2581) with a space.
func unescapeSpaces(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if i+3 <= len(s) && s[i] == 0xE2 && s[i+1] == 0x96 && s[i+2] == 0x81 {
			out = append(out, ' ')
			i += 3
			continue
		}
		out = append(out, s[i])
		i++
	}
	return out
}

// escapeSpaces appends s to dst with every space replaced by "▁".
func escapeSpaces(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			dst = append(dst, 0xE2, 0x96, 0x81)
		} else {
			dst = append(dst, s[i])
		}
	}
	return dst
}
