package tokenizer

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// casedRef splits text as llama.cpp's Tekken (digits 1, no contractions)
// or GPT-4o (digits 3, contractions) expression does, with Go's regexp
// (which picks the match a backtracking engine would) on the text mapped to
// one symbol per code point as the collapsed text distinguishes them: ASCII
// letters, the apostrophe, '/' and ASCII whitespace themselves, '#' any
// other letter, '9' a number, '~' other whitespace, '.' anything else. The
// look-ahead of \s+(?!\S) is done by hand.
func casedRef(x *ptext, digits int, contractions bool) []span {
	sym := make([]byte, len(x.cps))
	for i, c := range x.cps {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			sym[i] = byte(c)
		case x.letter(i):
			sym[i] = '#'
		case x.number(i):
			sym[i] = '9'
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			sym[i] = byte(c)
		case x.space(i):
			sym[i] = '~'
		case c == '/', c == '\'':
			sym[i] = byte(c)
		default:
			sym[i] = '.'
		}
	}
	const sp = ` \t\n\r\v\f~`
	suffix := ""
	if contractions {
		suffix = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?`
	}
	alts := []*regexp.Regexp{
		regexp.MustCompile(`^[^\r\nA-Za-z#9]?[A-Z#]*[a-z#]+` + suffix),
		regexp.MustCompile(`^[^\r\nA-Za-z#9]?[A-Z#]+[a-z#]*` + suffix),
		regexp.MustCompile(`^9{1,` + strconv.Itoa(digits) + `}`),
		regexp.MustCompile(`^ ?[^` + sp + `A-Za-z#9]+[\r\n/]*`),
		regexp.MustCompile(`^[` + sp + `]*[\r\n]+`),
	}
	spaces := regexp.MustCompile(`^[` + sp + `]+`)
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

// The Tekken and GPT-4o pre-tokenizers split as llama.cpp's expressions
// do: fixed cases worked out from the expression, then random text over
// letters of both ASCII cases and other scripts, digits, whitespace of
// every kind, '/', CR/LF, apostrophes with the contraction letters and
// symbols against the regexp reference.
func TestCasedWordsSplits(t *testing.T) {
	for _, tc := range []struct {
		pre          string
		digits       int
		contractions bool
		cases        []splitCase
	}{
		{"tekken", 1, false, []splitCase{
			{"Hello HELLOworld helloWorld ABC", []string{"Hello", " HELLOworld", " hello", "World", " ABC"}},
			{"Привет мир, Ünïcode", []string{"Привет", " мир", ",", " Ünïcode"}},
			{"x 1234 y/z", []string{"x", " ", "1", "2", "3", "4", " y", "/z"}},
			{"a  \n\n  b", []string{"a", "  \n\n", " ", " b"}},
			{"path/to//file\n", []string{"path", "/to", "//", "file", "\n"}},
			{"!!!\n\n z", []string{"!!!\n\n", " z"}},
			{"\tTab", []string{"\tTab"}},
			{"don't", []string{"don", "'t"}},
		}},
		{"gpt-4o", 3, true, []splitCase{
			{"Hello HELLOworld helloWorld ABC", []string{"Hello", " HELLOworld", " hello", "World", " ABC"}},
			{"x 1234567 y/z", []string{"x", " ", "123", "456", "7", " y", "/z"}},
			{"don't I'M we'RE You'Ll it's", []string{"don't", " I'M", " we'RE", " You'Ll", " it's"}},
			{"'s 'x it'sa O'Neil", []string{"'s", " '", "x", " it's", "a", " O", "'Neil"}},
			{"HELLO'd HELLOworld've", []string{"HELLO'd", " HELLOworld've"}},
			{"a  \n\n  b", []string{"a", "  \n\n", " ", " b"}},
			{"<|channel|>analysis", []string{"<|", "channel", "|>", "analysis"}},
			{"١٢٣٤٥ ⅣⅫ", []string{"١٢٣", "٤٥", " ", "ⅣⅫ"}},
		}},
	} {
		t.Run(tc.pre, func(t *testing.T) {
			p, err := newPreTokenizer(tc.pre)
			if err != nil {
				t.Fatal(err)
			}
			ref := func(x *ptext) []span { return casedRef(x, tc.digits, tc.contractions) }
			for _, c := range tc.cases {
				got, spans, x := splitWords(p, c.in)
				if !slices.Equal(got, c.want) {
					t.Errorf("split(%q)\n got %q\nwant %q", c.in, got, c.want)
				}
				if want := ref(x); !slices.Equal(spans, want) {
					t.Errorf("split(%q): reference %v, matcher %v", c.in, want, spans)
				}
			}
			alphabet := []rune("aZbYzA éÉжЖ中ß٣7 \t\n\r\u00a0\u3000/,.!?'\"-_😀ǅ'''sStTrReEvVmMlLdD")
			r := rand.New(rand.NewPCG(1, 2))
			for range 20000 {
				var b strings.Builder
				for range 1 + r.IntN(24) {
					b.WriteRune(alphabet[r.IntN(len(alphabet))])
				}
				in := b.String()
				_, spans, x := splitWords(p, in)
				if want := ref(x); !slices.Equal(spans, want) {
					t.Fatalf("split(%q): reference %v, matcher %v", in, want, spans)
				}
			}
		})
	}
}
