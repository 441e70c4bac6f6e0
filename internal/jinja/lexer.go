package jinja

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind uint8

const (
	tText tokKind = iota
	tOpenStmt
	tCloseStmt
	tOpenExpr
	tCloseExpr
	tName
	tString
	tInt
	tFloat
	tOp // operators and punctuation; the text is in val
	tEOF
)

type token struct {
	kind tokKind
	val  string
	pos  int
}

// lex splits a template into text and tag tokens. Whitespace follows what
// llama.cpp (like Hugging Face's transformers) does for chat templates:
// lstrip_blocks and trim_blocks on, "-" trims, \r\n becomes \n and one
// trailing newline of the source is dropped.
func lex(source string) ([]token, string, error) {
	src := strings.ReplaceAll(source, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	src = strings.TrimSuffix(src, "\n")

	var toks []token
	pos := 0
	prevClose := "" // the closing delimiter of the previous tag, with its "-"
	for pos < len(src) {
		// Text up to the next tag opener.
		start := pos
		end := start
		for end < len(src) && !isOpener(src, end) {
			end++
		}
		text := src[start:end]
		if end < len(src) && (src[end+1] == '%' || src[end+1] == '#') {
			text = lstripBlock(text, start == 0)
		}
		if prevClose == "%}" || prevClose == "-%}" || prevClose == "#}" || prevClose == "-#}" {
			text = strings.TrimPrefix(text, "\n")
		}
		if strings.HasPrefix(prevClose, "-") {
			text = strings.TrimLeft(text, " \t\r\n")
		}
		if end+2 < len(src) && src[end+2] == '-' {
			text = strings.TrimRight(text, " \t\r\n")
		}
		if text != "" {
			toks = append(toks, token{tText, text, start})
		}
		pos = end
		if pos >= len(src) {
			break
		}
		switch src[pos+1] {
		case '#':
			close := strings.Index(src[pos+2:], "#}")
			if close < 0 {
				return nil, src, syntaxErr(src, pos, "comment is not closed")
			}
			cend := pos + 2 + close
			prevClose = "#}"
			if cend > pos+2 && src[cend-1] == '-' {
				prevClose = "-#}"
			}
			pos = cend + 2
		case '%', '{':
			isStmt := src[pos+1] == '%'
			open := tOpenExpr
			if isStmt {
				open = tOpenStmt
			}
			toks = append(toks, token{open, src[pos : pos+2], pos})
			pos += 2
			if pos < len(src) && src[pos] == '-' {
				pos++
			}
			var closeTok string
			var err error
			toks, pos, closeTok, err = lexTag(src, pos, isStmt, toks)
			if err != nil {
				return nil, src, err
			}
			prevClose = closeTok
		}
	}
	toks = append(toks, token{tEOF, "", len(src)})
	return toks, src, nil
}

func isOpener(src string, i int) bool {
	return src[i] == '{' && i+1 < len(src) && (src[i+1] == '%' || src[i+1] == '{' || src[i+1] == '#')
}

// lstripBlock removes the spaces and tabs that stand between the start of the
// line and a block tag ({% or {#), as lstrip_blocks does.
func lstripBlock(text string, atSourceStart bool) string {
	i := len(text)
	for i > 0 {
		c := text[i-1]
		if c == '\n' {
			return text[:i]
		}
		if !isSpace(c) {
			return text
		}
		i--
	}
	if atSourceStart {
		return ""
	}
	return text
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// lexTag tokenizes the inside of one {% %} or {{ }} tag starting at pos and
// returns the tokens with the closing token appended.
func lexTag(src string, pos int, isStmt bool, toks []token) ([]token, int, string, error) {
	depth := 0 // curly brackets open inside the tag: "}}" there closes a dict
	tagStart := pos
	for {
		for pos < len(src) && isSpace(src[pos]) {
			pos++
		}
		if pos >= len(src) {
			return nil, pos, "", syntaxErr(src, tagStart, "tag is not closed")
		}
		rest := src[pos:]
		// Closing delimiters.
		if isStmt {
			if strings.HasPrefix(rest, "-%}") {
				return append(toks, token{tCloseStmt, "-%}", pos}), pos + 3, "-%}", nil
			}
			if strings.HasPrefix(rest, "%}") {
				return append(toks, token{tCloseStmt, "%}", pos}), pos + 2, "%}", nil
			}
		} else if depth == 0 {
			if strings.HasPrefix(rest, "-}}") {
				return append(toks, token{tCloseExpr, "-}}", pos}), pos + 3, "-}}", nil
			}
			if strings.HasPrefix(rest, "}}") {
				return append(toks, token{tCloseExpr, "}}", pos}), pos + 2, "}}", nil
			}
		}
		c := src[pos]
		switch {
		case c == '\'' || c == '"':
			s, n, err := lexString(src, pos)
			if err != nil {
				return nil, pos, "", err
			}
			toks = append(toks, token{tString, s, pos})
			pos = n
		case c >= '0' && c <= '9':
			n := pos
			for n < len(src) && (src[n] >= '0' && src[n] <= '9' || src[n] == '_') {
				n++
			}
			kind := tInt
			if n+1 < len(src) && src[n] == '.' && src[n+1] >= '0' && src[n+1] <= '9' {
				n++
				for n < len(src) && src[n] >= '0' && src[n] <= '9' {
					n++
				}
				kind = tFloat
			}
			if n < len(src) && (src[n] == 'e' || src[n] == 'E') {
				m := n + 1
				if m < len(src) && (src[m] == '+' || src[m] == '-') {
					m++
				}
				if m < len(src) && src[m] >= '0' && src[m] <= '9' {
					for m < len(src) && src[m] >= '0' && src[m] <= '9' {
						m++
					}
					n = m
					kind = tFloat
				}
			}
			toks = append(toks, token{kind, strings.ReplaceAll(src[pos:n], "_", ""), pos})
			pos = n
		case isNameStart(c):
			n := pos
			for n < len(src) && isNameChar(src[n]) {
				n++
			}
			toks = append(toks, token{tName, src[pos:n], pos})
			pos = n
		default:
			op := ""
			for _, o := range [...]string{"**", "//", "==", "!=", "<=", ">="} {
				if strings.HasPrefix(rest, o) {
					op = o
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("+-*/%~<>=()[]{},.:|", rune(c)) {
					r, _ := utf8.DecodeRuneInString(rest)
					return nil, pos, "", syntaxErr(src, pos, "unexpected character %q", r)
				}
				op = rest[:1]
			}
			switch op {
			case "{":
				depth++
			case "}":
				depth--
			}
			toks = append(toks, token{tOp, op, pos})
			pos += len(op)
		}
	}
}

// lexString reads a quoted literal at pos and returns its value and the
// position after it. Escapes follow Python: unknown ones are kept as written.
func lexString(src string, pos int) (string, int, error) {
	q := src[pos]
	var b strings.Builder
	i := pos + 1
	for i < len(src) {
		c := src[i]
		if c == q {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(src) {
			break
		}
		e := src[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
			// line continuation
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n <= len(src) {
				if v, err := strconv.ParseUint(src[i:i+n], 16, 32); err == nil && utf8.ValidRune(rune(v)) {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", pos, syntaxErr(src, pos, "string literal is not closed")
}
