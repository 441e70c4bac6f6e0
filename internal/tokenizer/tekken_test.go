package tokenizer

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tekkenRef splits text as llama.cpp's Tekken expression does, with Go's
// regexp (which picks the match a backtracking engine would) on the text
// mapped to one symbol per code point as the collapsed text distinguishes
// them: 'l' an a-z letter, 'U' an A-Z letter, 'X' any other letter, '9' a
// number, the ASCII whitespace and '/' themselves, 'v' other whitespace,
// '.' anything else. The look-ahead of \s+(?!\S) is done by hand.
func tekkenRef(x *ptext) []span {
	sym := make([]byte, len(x.cps))
	for i, c := range x.cps {
		switch {
		case c >= 'a' && c <= 'z':
			sym[i] = 'l'
		case c >= 'A' && c <= 'Z':
			sym[i] = 'U'
		case x.letter(i):
			sym[i] = 'X'
		case x.number(i):
			sym[i] = '9'
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			sym[i] = byte(c)
		case x.space(i):
			sym[i] = 'v'
		case c == '/':
			sym[i] = '/'
		default:
			sym[i] = '.'
		}
	}
	const sp = ` \t\n\r\v\f`
	alts := []*regexp.Regexp{
		regexp.MustCompile(`^[^\r\nlUX9]?[UX]*[lX]+`),
		regexp.MustCompile(`^[^\r\nlUX9]?[UX]+[lX]*`),
		regexp.MustCompile(`^9`),
		regexp.MustCompile(`^ ?[^` + sp + `vlUX9]+[\r\n/]*`),
		regexp.MustCompile(`^[` + sp + `v]*[\r\n]+`),
	}
	spaces := regexp.MustCompile(`^[` + sp + `v]+`)
	var out []span
	for p := 0; p < len(sym); {
		n := 0
		for _, re := range alts {
			if m := re.Find(sym[p:]); m != nil {
				n = len(m)
				break
			}
		}
		if n == 0 {
			if m := spaces.Find(sym[p:]); m != nil {
				n = len(m)
				if n > 1 && p+n < len(sym) { // \s+(?!\S)
					n--
				}
			}
		}
		n = max(n, 1)
		out = append(out, span{int32(p), int32(p + n)})
		p += n
	}
	return out
}

// The Tekken pre-tokenizer splits as llama.cpp's expression does: fixed
// cases worked out from the expression, then random text over letters of
// both ASCII cases and other scripts, digits, whitespace of every kind,
// '/', CR/LF and symbols against the regexp reference.
func TestTekkenSplits(t *testing.T) {
	p, err := newPreTokenizer("tekken")
	if err != nil {
		t.Fatal(err)
	}
	split := func(in string) ([]string, []span, *ptext) { return splitWords(p, in) }
	for _, c := range []splitCase{
		{"Hello HELLOworld helloWorld ABC", []string{"Hello", " HELLOworld", " hello", "World", " ABC"}},
		{"Привет мир, Ünïcode", []string{"Привет", " мир", ",", " Ünïcode"}},
		{"x 1234 y/z", []string{"x", " ", "1", "2", "3", "4", " y", "/z"}},
		{"a  \n\n  b", []string{"a", "  \n\n", " ", " b"}},
		{"path/to//file\n", []string{"path", "/to", "//", "file", "\n"}},
		{"!!!\n\n z", []string{"!!!\n\n", " z"}},
		{"\tTab", []string{"\tTab"}},
	} {
		got, spans, x := split(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("split(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if ref := tekkenRef(x); !slices.Equal(spans, ref) {
			t.Errorf("split(%q): reference %v, matcher %v", c.in, ref, spans)
		}
	}
	alphabet := []rune("aZbYzA éÉжЖ中ß٣7 \t\n\r\u00a0\u3000/,.!?'\"-_😀ǅ")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(24) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		in := b.String()
		_, spans, x := split(in)
		if ref := tekkenRef(x); !slices.Equal(spans, ref) {
			t.Fatalf("split(%q): reference %v, matcher %v", in, ref, spans)
		}
	}
}
