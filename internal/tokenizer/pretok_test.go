package tokenizer

import (
	"slices"
	"testing"
)

type splitCase struct {
	in   string
	want []string
}

// TestPreTokenizerSplits checks word splits for pre-tokenizers without a
// vocab test file. The expected pieces are what the original expressions
// give with a full regex engine (Python's regex module), applied one after
// another as llama.cpp does.
func TestPreTokenizerSplits(t *testing.T) {
	// What llama3's, qwen2's and the pre-tokenizers built on qwen2's split
	// alike: contractions, runs of white space, non-ASCII spaces.
	words := []splitCase{
		{"DON'T I'M we'RE You'Ll it's 'S 'x", []string{"DON", "'T", " I", "'M", " we", "'RE", " You", "'Ll", " it", "'s", " '", "S", " '", "x"}},
		{"a  \n\n  b", []string{"a", "  \n\n", " ", " b"}},
		{"x\r\n\r\ny", []string{"x", "\r\n\r\n", "y"}},
		{"Hello\u00a0world\u3000again  ", []string{"Hello", "\u00a0world", "\u3000again", "  "}},
	}
	// Qwen2's and those built on it take digits one at a time.
	digits1 := []splitCase{
		{"1234567 ١٢٣٤٥ ⅣⅫ 12", []string{"1", "2", "3", "4", "5", "6", "7", " ", "١", "٢", "٣", "٤", "٥", " ", "Ⅳ", "Ⅻ", " ", "1", "2"}},
		{"$100 + <tag> = ~5^2 | `code`", []string{"$", "1", "0", "0", " +", " <", "tag", ">", " =", " ~", "5", "^", "2", " |", " `", "code", "`"}},
	}
	tests := []struct {
		pre   string
		cases []splitCase
	}{
		{"llama3", slices.Concat(words, []splitCase{
			{"1234567 ١٢٣٤٥ ⅣⅫ 12", []string{"123", "456", "7", " ", "١٢٣", "٤٥", " ", "ⅣⅫ", " ", "12"}},
			{"...!!!\n\n z", []string{"...!!!\n\n", " z"}},
			{"$100 + <tag> = ~5^2 | `code`", []string{"$", "100", " +", " <", "tag", ">", " =", " ~", "5", "^", "2", " |", " `", "code", "`"}},
		})},
		// Hunyuan's MoE models (tokenizer.ggml.pre "hunyuan") split as Qwen2.
		{"hunyuan", slices.Concat(words, digits1)},
		{"qwen2", slices.Concat(words, digits1, []splitCase{
			{"...!!!\n\n z", []string{"...!!!\n\n", " z"}},
		})},
		// Seed-Coder's (Seed-OSS) is Qwen2's without newlines after a run
		// of other characters.
		{"seed-coder", slices.Concat(words, digits1, []splitCase{
			{"...!!!\n\n z", []string{"...!!!", "\n\n", " z"}},
			{"x;\n\ty = 3.14;\r\n", []string{"x", ";", "\n", "\ty", " =", " ", "3", ".", "1", "4", ";", "\r\n"}},
		})},
		// Qwen 3.5: Qwen2's, with combining marks in words (Devanagari's
		// vowel signs, Thai's, an accent after its letter or alone).
		{"qwen35", slices.Concat(words, digits1, []splitCase{
			{"नमस्ते दुनिया", []string{"नमस्ते", " दुनिया"}},
			{"e\u0301te\u0301 cafe\u0301!", []string{"e\u0301te\u0301", " cafe\u0301", "!"}},
			{"\u0301\u0301 x", []string{"\u0301\u0301", " x"}},
			{"!\u0301a", []string{"!\u0301a"}},
			{" \u0300.", []string{" \u0300", "."}},
			{"\u0301!", []string{"\u0301", "!"}},
			{"สวัสดีครับ ผม", []string{"สวัสดีครับ", " ผม"}},
		})},
		{"default", []splitCase{
			{"DON'T I'M we'RE You'Ll it's 'S 'x", []string{"DON", "'", "T", " I", "'", "M", " we", "'", "RE", " You", "'", "Ll", " it", "'", "s", " ", "'", "S", " ", "'", "x"}},
			{"1234567 ١٢٣٤٥ ⅣⅫ 12", []string{"123", "456", "7", " ", "١٢٣٤٥", " ", "ⅣⅫ", " ", "12"}},
			{"a  \n\n  b", []string{"a", "  \n\n ", " b"}},
			{"x\r\n\r\ny", []string{"x", "\r\n\r", "\n", "y"}},
			{"...!!!\n\n z", []string{"...!!!", "\n\n", " z"}},
			{"$100 + <tag> = ~5^2 | `code`", []string{"$", "100", " ", "+", " ", "<", "tag", ">", " ", "=", " ", "~", "5", "^", "2", " ", "|", " `", "code", "`"}},
			{"Hello\u00a0world\u3000again  ", []string{"Hello", "\u00a0", "world", "\u3000", "again", "  "}},
		}},
		// Hunyuan's dense models (DeepSeek V3's expressions): digits in
		// threes first, then runs of CJK and kana, then words with an ASCII
		// mark glued to the letters after it. ~ is not in the collapsed
		// \p{S}, so it may begin a word (Python's regex, where it is a
		// symbol, gives "~", "é").
		{"hunyuan-dense", []splitCase{
			{"Hello world, it's 2025: 1234567 items!", []string{"Hello", " world", ",", " it", "'s", " ", "202", "5", ":", " ", "123", "456", "7", " items", "!"}},
			{"你好世界hello こんにちは カタカナ", []string{"你好世界", "hello", " ", "こんにちは", " ", "カタカナ"}},
			{"x=foo(bar); y+=Baz\n\n  z", []string{"x", "=foo", "(bar", ");", " y", "+=", "Baz", "\n\n", " ", " z"}},
			{"e\u0301te\u0301 naïve café!", []string{"e\u0301te\u0301", " naïve", " café", "!"}},
			{"@user #tag $100 ...!!!\n\n end", []string{"@user", " #", "tag", " $", "100", " ...!!!\n\n", " end"}},
			{"Привет мир ١٢٣٤ ok", []string{"Привет", " мир", " ", "١٢٣", "٤", " ok"}},
			{"a  \n\n  b\u00a0c", []string{"a", "  \n\n", " ", " b", "\u00a0c"}},
			{"~abc ~é", []string{"~abc", " ", "~é"}},
		}},
		// llama.cpp hides non-ASCII whitespace from std::wregex behind \v, so
		// U+3000 does not match the CJK range [ࠀ-一] that contains it
		// (Python's regex would split it off).
		{"deepseek-coder", []splitCase{
			{"Hello\u00a0world\u3000again  ", []string{"Hello", "\u00a0world", "\u3000again", "  "}},
			{"x\r\n\r\ny 12", []string{"x", "\r", "\n", "\r", "\n", "y", " ", "1", "2"}},
		}},
	}
	for _, tc := range tests {
		p, err := newPreTokenizer(tc.pre)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tc.cases {
			got, _, _ := splitWords(p, c.in)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: split(%q)\n got %q\nwant %q", tc.pre, c.in, got, c.want)
			}
		}
	}
}

// splitWords splits in with p and returns the words, their spans and the
// decoded text.
func splitWords(p *preTokenizer, in string) ([]string, []span, *ptext) {
	s := new(scratch)
	x := p.split(s, in)
	var words []string
	for _, sp := range s.spans {
		var w []byte
		for _, r := range x.cps[sp.start:sp.end] {
			w = appendRune(w, r)
		}
		words = append(words, string(w))
	}
	return words, slices.Clone(s.spans), x
}

// TestDecodeRune checks llama.cpp's lenient UTF-8 decoding: invalid bytes
// become U+FFFD one at a time, surrogates pass through.
func TestDecodeRune(t *testing.T) {
	tests := []struct {
		in   string
		r    rune
		size int
	}{
		{"a", 'a', 1},
		{"é", 0xE9, 2},
		{"\xe2\x96\x81", 0x2581, 3},
		{"🦙", 0x1F999, 4},
		{"\x80", 0xFFFD, 1},
		{"\xc3", 0xFFFD, 1},
		{"\xe2\x96", 0xFFFD, 1},
		{"\xed\xa0\x80", 0xD800, 3},
		{"\xf8\x80\x80\x80", 0xFFFD, 1},
	}
	for _, tc := range tests {
		r, n := decodeRune(tc.in)
		if r != tc.r || n != tc.size {
			t.Errorf("decodeRune(%q) = %U, %d; want %U, %d", tc.in, r, n, tc.r, tc.size)
		}
		if tc.r != 0xFFFD {
			if got := string(appendRune(nil, r)); got != tc.in {
				t.Errorf("appendRune(%U) = %q, want %q", r, got, tc.in)
			}
		}
	}
}

// Pre-tokenizers llama.cpp runs as another (llama-vocab.cpp): LFM2's
// "lfm2" as LLAMA3 (merges ignored, BOS added), EXAONE 4.0's "exaone4" and
// ModernBERT's "modern-bert" and jina-embeddings' "jina-v2-es",
// "jina-v2-de", "jina-v2-code" (v1's "jina-v1-en", "jina-es", "jina-de")
// as GPT2, GLM-4's "glm4" as CHATGLM4
// ("chatglm-bpe"), EXAONE 3's "exaone" with StarCoder's expressions (one
// digit, then GPT-2's). The same splits and flags.
func TestPreTokenizerAliases(t *testing.T) {
	for _, tc := range []struct{ name, as string }{{"lfm2", "llama3"}, {"exaone4", "gpt-2"}, {"modern-bert", "gpt-2"}, {"glm4", "chatglm-bpe"},
		{"hunyuan", "qwen2"}, {"deepseek-v3", "hunyuan-dense"}, {"exaone", "starcoder"},
		{"jina-v2-es", "gpt-2"}, {"jina-v2-de", "gpt-2"}, {"jina-v2-code", "gpt-2"}, {"jina-v1-en", "gpt-2"}, {"jina-es", "gpt-2"}, {"jina-de", "gpt-2"}} {
		p, err := newPreTokenizer(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := newPreTokenizer(tc.as)
		if p.ignoreMerges != q.ignoreMerges || p.cleanSpaces != q.cleanSpaces || len(p.stages) != len(q.stages) {
			t.Fatalf("%s %+v, %s %+v", tc.name, p, tc.as, q)
		}
		for _, in := range []string{"Hello world!", "  x = 12345;\n\n\tÉtude's", "日本語 text 3.14", "DON'T 'S 1234567"} {
			a, _, _ := splitWords(p, in)
			b, _, _ := splitWords(q, in)
			if !slices.Equal(a, b) {
				t.Errorf("split(%q): %s %q, %s %q", in, tc.name, a, tc.as, b)
			}
		}
	}
}

// Ling 2.0's "bailingmoe2" (and "bailingmoe", "llada-moe"): llama.cpp's
// BAILINGMOE expression, whose splits (here as Python's regex module
// makes them from it) are Qwen2's.
func TestPreTokenizerBailingMoE(t *testing.T) {
	want := map[string][]string{
		"Hello world!":              {"Hello", " world", "!"},
		"x  \n\n y":                 {"x", "  \n\n", " y"},
		"  x = 12345;\n\n\tÉtude's": {" ", " x", " =", " ", "1", "2", "3", "4", "5", ";\n\n", "\tÉtude", "'s"},
		"DON'T 'S 1234567":          {"DON", "'T", " '", "S", " ", "1", "2", "3", "4", "5", "6", "7"},
		"a\r\n\r\nb  \n  c":         {"a", "\r\n\r\n", "b", "  \n", " ", " c"},
	}
	for _, name := range []string{"bailingmoe2", "bailingmoe", "llada-moe"} {
		p, err := newPreTokenizer(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.cleanSpaces || p.ignoreMerges {
			t.Errorf("%s: %+v, want spaces kept and merges used", name, p)
		}
		for in, w := range want {
			if got, _, _ := splitWords(p, in); !slices.Equal(got, w) {
				t.Errorf("%s split(%q) = %q, want %q", name, in, got, w)
			}
		}
	}
}

// Arcee's Trinity ("afmoe"): llama.cpp's three stages — its hand-written
// digit split (groups of three ending each run; the text before a run
// joined to its first group, split again by the last stage), the runs of
// its CJK and South-East Asian ranges (U+8C48–FAFF among them, so a
// private-use character is a run; Thai from U+0E40 only), then Hunyuan's
// expression. The expected pieces are those of a Python transcription of
// the digit split followed by the two expressions in Python's regex
// module (no "~", whose collapsed \p{S} differs from the real one).
func TestPreTokenizerAfmoe(t *testing.T) {
	p, err := newPreTokenizer("afmoe")
	if err != nil {
		t.Fatal(err)
	}
	if p.cleanSpaces || p.ignoreMerges {
		t.Errorf("%+v, want spaces kept and merges used", p)
	}
	for _, tc := range []splitCase{
		{"ab12345 x", []string{"ab", "12", "345", " x"}},
		{"1234567", []string{"1", "234", "567"}},
		{"123456", []string{"123", "456"}},
		{"x 123", []string{"x", " ", "123"}},
		{"日本語text", []string{"日本語", "text"}},
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{"x١٢٣٤", []string{"x", "١", "٢٣٤"}},
		{"v2.10.3", []string{"v", "2", ".", "10", ".", "3"}},
		{"Price: $1,234,567.89!\n\nOK", []string{"Price", ":", " $", "1", ",", "234", ",", "567", ".", "89", "!\n\n", "OK"}},
		{"東京は2024年 에서 42", []string{"東京は", "2", "024", "年", " ", "에서", " ", "42"}},
		{"don't 'S  \n\tÉtude", []string{"don", "'t", " '", "S", "  \n", "\tÉtude"}},
		{"สวัสดีครับ เมือง", []string{"สวัสดีครับ", " ", "เ", "มือง"}},
		{"한국어 텍스트", []string{"한국어", " ", "텍스트"}},
		{"a\u00a0b\u3000c", []string{"a", "\u00a0b", "\u3000c"}},
		{"ÉCOLE 1/2 ½ ⅷ", []string{"ÉCOLE", " ", "1", "/", "2", " ", "½", " ", "ⅷ"}},
		{"x\ue000y", []string{"x", "\ue000", "y"}},
	} {
		if got, _, _ := splitWords(p, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
