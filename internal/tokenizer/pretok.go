package tokenizer

import "fmt"

// A BPE vocabulary first splits text into words with a list of regular
// expressions (tokenizer.ggml.pre selects the list); merges never cross a
// word boundary. llama.cpp applies each expression in turn to every piece
// produced so far, keeping both the matches and the text between them as
// pieces. Most expressions run on std::regex over a "collapsed" copy of the
// text in which each non-ASCII code point is replaced by a byte standing for
// its category (and non-ASCII whitespace by \v); two common ones have
// hand-written equivalents. Go's regexp has no look-ahead and a different
// notion of \s, so every expression here is a hand-written matcher that
// follows std::regex's ECMAScript semantics (leftmost match, alternatives
// tried in order, greedy quantifiers with backtracking) on that model.

// span is a half-open range of code point indices.
type span struct{ start, end int32 }

// ptext is the text being pre-tokenized, as llama.cpp decodes it.
type ptext struct {
	cps  []rune
	info []cpInfo
}

// Predicates on code point i as the collapsed text presents it to
// std::regex. Only \p{S} differs from the real category: the collapsed form
// of \p{S} lists the ASCII symbols $ + < = > ^ ` | but not ~.
func (x *ptext) letter(i int) bool { return x.info[i].cat == catLetter }
func (x *ptext) number(i int) bool { return x.info[i].cat == catNumber }
func (x *ptext) punct(i int) bool  { return x.info[i].cat == catPunct }
func (x *ptext) mark(i int) bool   { return x.info[i].cat == catMark }
func (x *ptext) space(i int) bool  { return x.info[i].space }

// wchar is code point i as std::wregex sees it: llama.cpp replaces
// non-ASCII whitespace with \v because \s would not match it.
func (x *ptext) wchar(i int) rune {
	if c := x.cps[i]; c < 0x80 || !x.info[i].space {
		return c
	}
	return 0x0B
}

func (x *ptext) is(i int, c rune) bool { return x.cps[i] == c }

// stage refines the pieces in to the pieces it appends to out.
type stage func(x *ptext, in, out []span) []span

// matcher returns the length of the match of an expression that starts at
// p in a piece ending at e, or 0 when there is none. The piece end is the
// end of input for the expression: $ and (?!\S) succeed there.
type matcher func(x *ptext, p, e int) int

// matchStage turns a matcher into a stage with std::regex_iterator's
// semantics: scan for the leftmost match, emit the gap before it and the
// match, continue after the match.
func matchStage(m matcher) stage {
	return func(x *ptext, in, out []span) []span {
		for _, f := range in {
			start, end := int(f.start), int(f.end)
			cur := start
			for p := start; p < end; {
				n := m(x, p, end)
				if n == 0 {
					p++
					continue
				}
				if p > cur {
					out = append(out, span{int32(cur), int32(p)})
				}
				out = append(out, span{int32(p), int32(p + n)})
				p += n
				cur = p
			}
			if cur < end {
				out = append(out, span{int32(cur), int32(end)})
			}
		}
		return out
	}
}

type preTokenizer struct {
	stages       []stage
	ignoreMerges bool
	cleanSpaces  bool
}

// newPreTokenizer returns the pre-tokenizer llama.cpp uses for a "gpt2"
// vocabulary with tokenizer.ggml.pre = name, with its flags.
func newPreTokenizer(name string) (*preTokenizer, error) {
	p := &preTokenizer{cleanSpaces: true}
	gpt2 := matchStage(matchGPT2)
	switch name {
	case "", "default":
		p.stages = []stage{matchStage(punctRun("$+<=>^~|")), gpt2, matchStage(numberRun), matchStage(threeDigits)}
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral", "lfm2":
		p.stages = []stage{matchStage(matchLlama3)}
		p.ignoreMerges = true
	case "dbrx", "smaug-bpe", "chatglm-bpe", "glm4":
		p.stages = []stage{matchStage(matchLlama3)}
	case "deepseek-llm":
		p.stages = []stage{matchStage(newline), matchStage(optSpaceThen(inRanges(deepseekLetters))),
			matchStage(optSpaceThen(inRanges(deepseekPunct))), trailingSpace,
			matchStage(wrun(inRanges(cjkRanges))), matchStage(numberRun)}
		p.cleanSpaces = false
	case "deepseek-coder":
		p.stages = []stage{matchStage(newline), matchStage(spaceThenRun((*ptext).letter)),
			matchStage(spaceThenRun((*ptext).punct)), matchStage(wrun(inRanges(cjkRanges))), matchStage(oneNumber)}
		p.cleanSpaces = false
	case "falcon":
		p.stages = []stage{matchStage(punctRun("$+<=>^~|`")), gpt2, matchStage(threeDigits)}
	case "starcoder", "refact", "codeshell", "exaone", "minerva-7b":
		p.stages = []stage{matchStage(oneNumber), gpt2}
	case "command-r", "smollm":
		p.stages = []stage{matchStage(oneNumber), gpt2}
		p.cleanSpaces = false
	case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
		"jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "exaone4", "modern-bert":
		p.stages = []stage{gpt2}
	case "stablelm2":
		p.stages = []stage{matchStage(qwenWords(true))}
	case "qwen2", "deepseek-r1-qwen", "megrez", "hunyuan", "bailingmoe", "bailingmoe2", "llada-moe":
		// llama.cpp's BAILINGMOE (the last three) is Qwen2's expression
		// but \s*[\r\n] for \s*[\r\n]+, which matches the same (the
		// greedy \s* backs off to the run's last newline either way).
		p.stages = []stage{matchStage(qwenWords(true))}
		p.cleanSpaces = false
	case "seed-coder":
		p.stages = []stage{matchStage(qwenWords(false))}
		p.cleanSpaces = false
	case "qwen35":
		p.stages = []stage{matchStage(matchQwen35)}
		p.cleanSpaces = false
	case "poro-chat":
		p.stages = []stage{matchStage(matchPoro)}
		p.cleanSpaces = false
	case "bloom", "gpt3-finnish":
		p.stages = []stage{matchStage(matchPoro)}
	case "viking":
		p.stages = []stage{matchStage(matchPoro), matchStage(oneNumber)}
		p.cleanSpaces = false
	case "tekken":
		p.stages = []stage{matchStage(casedWords(1, false))}
		p.ignoreMerges, p.cleanSpaces = true, false
	case "hunyuan-dense", "deepseek-v3":
		p.stages = []stage{matchStage(upTo3Numbers), matchStage(wrun(inRanges(hunyuanCJK))), matchStage(matchHunyuanDense)}
		p.cleanSpaces = false
	case "afmoe":
		// Arcee's Trinity: digit runs cut into threes from the right, runs
		// of CJK and South-East Asian scripts, then Hunyuan's expression.
		p.stages = []stage{afmoeDigits, matchStage(wrun(inRanges(afmoeScripts))), matchStage(matchHunyuanDense)}
		p.cleanSpaces = false
	case "gpt-4o", "llama4", "minimax-m2":
		p.stages = []stage{matchStage(casedWords(3, true))}
		p.cleanSpaces = false
	default:
		return nil, fmt.Errorf("%w: pre-tokenizer %q", ErrUnsupported, name)
	}
	return p, nil
}

// split decodes text and runs the stages, leaving the word spans in s.spans.
func (p *preTokenizer) split(s *scratch, text string) *ptext {
	s.cps, s.info = s.cps[:0], s.info[:0]
	for i := 0; i < len(text); {
		r, n := decodeRune(text[i:])
		i += n
		s.cps = append(s.cps, r)
		s.info = append(s.info, infoOf(r))
	}
	x := &ptext{cps: s.cps, info: s.info}
	s.spans = append(s.spans[:0], span{0, int32(len(s.cps))})
	for _, st := range p.stages {
		s.tmp = st(x, s.spans, s.tmp[:0])
		s.spans, s.tmp = s.tmp, s.spans
	}
	return x
}

// matchGPT2 is GPT-2's expression
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// written out by hand as llama.cpp does (unicode_regex_split_custom_gpt2),
// using the real Unicode categories rather than the collapsed text.
//
// Every position matches (a lone character at worst), so matchStage leaves
// no gaps: the pieces are the matches, as in llama.cpp.
func matchGPT2(x *ptext, p, e int) int {
	if n := contraction(x, p, e, false); n > 0 {
		return n
	}
	q := p
	if x.cps[p] == ' ' {
		q = p + 1
	}
	if q < e && !x.space(q) && (x.letter(q) || x.number(q)) {
		cat := x.info[q].cat
		for q < e && !x.space(q) && x.info[q].cat == cat {
			q++
		}
		return q - p
	}
	if n := otherRun(x, p, e, false); n > 0 {
		return n
	}
	n := 0
	for p+n < e && x.space(p+n) {
		n++
	}
	switch {
	case n > 1 && p+n < e: // \s+(?!\S) leaves the last space to the next word
		return n - 1
	case n > 0:
		return n
	}
	return 1
}

// matchLlama3 is Llama 3's expression
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// written out by hand as llama.cpp does (unicode_regex_split_custom_llama3).
//
// Like matchGPT2, it matches at every position.
func matchLlama3(x *ptext, p, e int) int {
	if n := contraction(x, p, e, true); n > 0 {
		return n
	}
	letter := func(i int) bool { return i < e && x.letter(i) }
	if c := x.cps[p]; c != '\r' && c != '\n' && !x.number(p) && (letter(p) || letter(p+1)) {
		q := p + 1
		for letter(q) {
			q++
		}
		return q - p
	}
	if x.number(p) {
		return numberUpTo(x, p, e, 3)
	}
	// llama.cpp tests the character after the optional space, but
	// requires the one at p to exist, which it always does here.
	if n := otherRun(x, p, e, true); n > 0 {
		return n
	}
	return max(1, matchSpaces(x, p, e)) // a character no rule takes is a piece of its own
}

// toLowerASCII lowers A-Z. llama.cpp lowers any code point here, but no
// other code point lowers to one of the ASCII letters the rule compares with.
func toLowerASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// qwenWords is Qwen2's expression on the collapsed text:
//
//	(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// or, without newlines, Seed-Coder's (Seed-OSS), whose run of other
// characters takes no newlines after it.
func qwenWords(newlines bool) matcher {
	return func(x *ptext, p, e int) int { return matchQwenWords(x, p, e, newlines) }
}

// matchQwenWords is qwenWords' expression at p.
func matchQwenWords(x *ptext, p, e int, newlines bool) int {
	c := x.cps[p]
	if n := contraction(x, p, e, true); n > 0 {
		return n
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	q := p
	if c != '\r' && c != '\n' && !x.letter(p) && !x.number(p) {
		q = p + 1
	}
	if q < e && x.letter(q) {
		for q < e && x.letter(q) {
			q++
		}
		return q - p
	}
	if x.number(p) {
		return 1
	}
	if n := otherRun(x, p, e, newlines); n > 0 {
		return n
	}
	return matchSpaces(x, p, e)
}

// matchQwen35 is Qwen 3.5's expression (llama.cpp's
// LLAMA_VOCAB_PRE_TYPE_QWEN35), Qwen2's with combining marks kept in words
// and out of the punctuation runs:
//
//	(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// A mark may be the optional first character too; when no word follows
// it, the expression backtracks and the marks from p are the word.
func matchQwen35(x *ptext, p, e int) int {
	if n := contraction(x, p, e, true); n > 0 {
		return n
	}
	word := func(i int) bool { return i < e && (x.letter(i) || x.mark(i)) }
	run := func(q int) int {
		for word(q) {
			q++
		}
		return q - p
	}
	if c := x.cps[p]; c != '\r' && c != '\n' && !x.letter(p) && !x.number(p) && word(p+1) {
		return run(p + 1)
	}
	if word(p) {
		return run(p)
	}
	if x.number(p) {
		return 1
	}
	if n := otherRunOf(x, p, e, true, true); n > 0 {
		return n
	}
	return matchSpaces(x, p, e)
}

// casedWords is the expression Mistral's Tekken and OpenAI's GPT-4o
// (o200k) share, as llama.cpp runs it on the collapsed text, where letter
// case is ASCII's alone (its \p{Lu}… classes become "a letter but not a-z"
// and "a letter but not A-Z"):
//
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+C|
//	[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*C|
//	\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Tekken has D = 1 and no C; GPT-4o has D = 3 and C =
// (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?, a contraction
// in either case kept with the word before it.
//
// A letter other than a-z is "upper" and one other than A-Z "lower", so a
// non-ASCII letter is both; a run of capitals then lower case ("HELLOworld",
// "Hello") is one word, as is a run of capitals alone ("ABC"), and a
// lower-case run stops at a capital ("hello|World").
func casedWords(digits int, contractions bool) matcher {
	return func(x *ptext, p, e int) int {
		upper := func(i int) bool { return i < e && x.letter(i) && !(x.cps[i] >= 'a' && x.cps[i] <= 'z') }
		lower := func(i int) bool { return i < e && x.letter(i) && !(x.cps[i] >= 'A' && x.cps[i] <= 'Z') }
		run := func(in func(int) bool, i int) int {
			n := 0
			for in(i + n) {
				n++
			}
			return n
		}
		// The optional contraction never fails, so it only extends the
		// first way the word matches.
		suffix := func(end int) int {
			if contractions && end < e {
				return contraction(x, end, e, true)
			}
			return 0
		}
		// upper* lower+, backtracking the greedy upper* until a lower
		// follows; and upper+ lower*.
		upperLower := func(s int) int {
			for k := run(upper, s); k >= 0; k-- {
				if lower(s + k) {
					n := k + run(lower, s+k)
					return n + suffix(s+n)
				}
			}
			return 0
		}
		upperThenLower := func(s int) int {
			if u := run(upper, s); u > 0 {
				n := u + run(lower, s+u)
				return n + suffix(s+n)
			}
			return 0
		}
		c := x.cps[p]
		prefix := c != '\r' && c != '\n' && !x.letter(p) && !x.number(p)
		for _, word := range []func(int) int{upperLower, upperThenLower} {
			if prefix {
				if n := word(p + 1); n > 0 {
					return n + 1
				}
			}
			if n := word(p); n > 0 {
				return n
			}
		}
		if x.number(p) {
			return numberUpTo(x, p, e, digits)
		}
		// ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
		if n := otherRun(x, p, e, false); n > 0 {
			for p+n < e && (x.cps[p+n] == '\r' || x.cps[p+n] == '\n' || x.cps[p+n] == '/') {
				n++
			}
			return n
		}
		return max(1, matchSpaces(x, p, e))
	}
}

// numberUpTo is \p{N}{1,limit} at p, which holds a number: a longer run is
// cut every limit digits.
func numberUpTo(x *ptext, p, e, limit int) int {
	q := p + 1
	for q < e && q-p < limit && x.number(q) {
		q++
	}
	return q - p
}

// contraction is the length of the English contraction ('s 't 're 've 'm
// 'll 'd) at p, or 0. Llama 3 and Qwen2 match it in any case (fold), GPT-2
// in lower case only.
func contraction(x *ptext, p, e int, fold bool) int {
	if x.cps[p] != '\'' || p+1 >= e {
		return 0
	}
	at := func(i int) rune {
		if fold {
			return toLowerASCII(x.cps[i])
		}
		return x.cps[i]
	}
	n := at(p + 1)
	if n == 's' || n == 't' || n == 'm' || n == 'd' {
		return 2
	}
	if p+2 < e {
		n2 := at(p + 2)
		if (n == 'r' && n2 == 'e') || (n == 'v' && n2 == 'e') || (n == 'l' && n2 == 'l') {
			return 3
		}
	}
	return 0
}

// otherRun is the length of ` ?[^\s\p{L}\p{N}]+` at p, followed by
// `[\r\n]*` when newlines is set (Llama 3, Qwen2; not GPT-2), or 0.
func otherRun(x *ptext, p, e int, newlines bool) int { return otherRunOf(x, p, e, newlines, false) }

// otherRunOf is otherRun, with marks also ending the run
// ([^\s\p{L}\p{M}\p{N}]+, Qwen 3.5's).
func otherRunOf(x *ptext, p, e int, newlines, marks bool) int {
	other := func(i int) bool { return i < e && !x.space(i) && !x.letter(i) && !x.number(i) && !(marks && x.mark(i)) }
	q := p
	if x.cps[p] == ' ' {
		q = p + 1
	}
	if !other(q) {
		return 0
	}
	for other(q) {
		q++
	}
	for newlines && q < e && (x.cps[q] == '\r' || x.cps[q] == '\n') {
		q++
	}
	return q - p
}

// matchSpaces is \s*[\r\n]+|\s+(?!\S)|\s+ at p.
func matchSpaces(x *ptext, p, e int) int {
	n, lastNL := 0, -1
	for p+n < e && x.space(p+n) {
		if c := x.cps[p+n]; c == '\r' || c == '\n' {
			lastNL = p + n
		}
		n++
	}
	switch {
	case lastNL >= 0:
		return lastNL + 1 - p
	case n > 1 && p+n < e:
		return n - 1
	}
	return n
}

// punctRun is [\p{P}<extra>]+ on the collapsed text.
func punctRun(extra string) matcher {
	var set [128]bool
	for i := 0; i < len(extra); i++ {
		set[extra[i]] = true
	}
	return func(x *ptext, p, e int) int {
		q := p
		for q < e && (x.punct(q) || (x.cps[q] < 128 && set[x.cps[q]])) {
			q++
		}
		return q - p
	}
}

// numberRun is \p{N}+.
func numberRun(x *ptext, p, e int) int {
	q := p
	for q < e && x.number(q) {
		q++
	}
	return q - p
}

// oneNumber is \p{N}.
func oneNumber(x *ptext, p, e int) int {
	if x.number(p) {
		return 1
	}
	return 0
}

// threeDigits is [0-9][0-9][0-9].
func threeDigits(x *ptext, p, e int) int {
	if p+3 > e {
		return 0
	}
	for i := p; i < p+3; i++ {
		if c := x.cps[i]; c < '0' || c > '9' {
			return 0
		}
	}
	return 3
}

// newline is [\r\n].
func newline(x *ptext, p, e int) int {
	if c := x.cps[p]; c == '\r' || c == '\n' {
		return 1
	}
	return 0
}

// spaceThenRun is \s?<class>+ on the collapsed text.
func spaceThenRun(in func(*ptext, int) bool) matcher {
	return func(x *ptext, p, e int) int {
		q := p
		if x.space(p) && p+1 < e && in(x, p+1) {
			q = p + 1
		}
		if !in(x, q) {
			return 0
		}
		for q < e && in(x, q) {
			q++
		}
		return q - p
	}
}

// optSpaceThen is \s?[ranges]+ on the wide-character text.
func optSpaceThen(in func(rune) bool) matcher {
	return func(x *ptext, p, e int) int {
		q := p
		if x.space(p) && p+1 < e && in(x.wchar(p+1)) {
			q = p + 1
		}
		if !in(x.wchar(q)) {
			return 0
		}
		for q < e && in(x.wchar(q)) {
			q++
		}
		return q - p
	}
}

// wrun is [ranges]+ on the wide-character text.
func wrun(in func(rune) bool) matcher {
	return func(x *ptext, p, e int) int {
		q := p
		for q < e && in(x.wchar(q)) {
			q++
		}
		return q - p
	}
}

// trailingSpace is \s+$: only the whitespace that ends a piece matches.
func trailingSpace(x *ptext, in, out []span) []span {
	for _, f := range in {
		t := f.end
		for t > f.start && x.space(int(t-1)) {
			t--
		}
		if t > f.start {
			out = append(out, span{f.start, t})
		}
		if t < f.end {
			out = append(out, span{t, f.end})
		}
	}
	return out
}

// matchPoro is ?[^(\s|.,!?…。，、।۔،)]+ on the wide-character text.
func matchPoro(x *ptext, p, e int) int {
	ok := func(i int) bool {
		if i >= e || x.space(i) {
			return false
		}
		switch x.wchar(i) {
		case '(', '|', '.', ',', '!', '?', ')', '…', '。', '，', '、', '।', '۔', '،':
			return false
		}
		return true
	}
	q := p
	if x.cps[p] == ' ' && ok(p+1) {
		q = p + 1
	}
	if !ok(q) {
		return 0
	}
	for ok(q) {
		q++
	}
	return q - p
}

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

func inRanges(rs []runeRange) func(rune) bool {
	return func(r rune) bool {
		for _, x := range rs {
			if r >= x.lo && r <= x.hi {
				return true
			}
		}
		return false
	}
}

// cjkRanges is [一-龥ࠀ-一가-퟿] from the DeepSeek expressions.
var cjkRanges = []runeRange{{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}}

// deepseekPunct is [!-/:-~！-／：-～‘-‟　-。].
var deepseekPunct = []runeRange{
	{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002},
}

// deepseekLetters is the letter class of DeepSeek LLM's expression (the
// cased letters of some Unicode version).
var deepseekLetters = []runeRange{
	{0x0041, 0x005A}, {0x0061, 0x007A}, {0x00B5, 0x00B5}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6},
	{0x00F8, 0x01BA}, {0x01BC, 0x01BF}, {0x01C4, 0x0293}, {0x0295, 0x02AF}, {0x0370, 0x0373},
	{0x0376, 0x0377}, {0x037B, 0x037D}, {0x037F, 0x037F}, {0x0386, 0x0386}, {0x0388, 0x038A},
	{0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5}, {0x03F7, 0x0481}, {0x048A, 0x052F},
	{0x0531, 0x0556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA},
	{0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15},
	{0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59},
	{0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC},
	{0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB},
	{0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107},
	{0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
	{0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F},
	{0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4},
	{0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F},
	{0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17},
	{0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
	{0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
}

// upTo3Numbers is \p{N}{1,3}.
func upTo3Numbers(x *ptext, p, e int) int {
	if !x.number(p) {
		return 0
	}
	return numberUpTo(x, p, e, 3)
}

// hunyuanCJK is [一-龥぀-ゟ゠-ヿ]: the CJK ideographs, hiragana and
// katakana, which Hunyuan's dense models (and DeepSeek V3) split off as
// runs before words.
var hunyuanCJK = []runeRange{{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}}

// afmoeScripts is the second expression of Arcee's Trinity (llama.cpp's
// LLAMA_VOCAB_PRE_TYPE_AFMOE), run on the wide-character text, with the
// ranges its characters give: U+4E00–9FFF, U+3400–4DBF, U+8C48–FAFF (its
// 豈 is the unified ideograph, not the compatibility one, so the range
// takes in Hangul and the private use area too), hiragana, katakana,
// U+FF65–FF9F, U+2F00–2FDF, U+0E40–0E7F (Thai from its leading vowels:
// not the consonants), Lao, Khmer, Myanmar and its extensions A and B,
// the Hangul syllables and jamo.
var afmoeScripts = []runeRange{
	{0x4E00, 0x9FFF}, {0x3400, 0x4DBF}, {0x8C48, 0xFAFF}, {0x3040, 0x309F}, {0x30A0, 0x30FF},
	{0xFF65, 0xFF9F}, {0x2F00, 0x2FDF}, {0x0E40, 0x0E7F}, {0x0E80, 0x0EFF}, {0x1780, 0x17FF},
	{0x1000, 0x109F}, {0xAA60, 0xAA7F}, {0xA9E0, 0xA9FF}, {0xAC00, 0xD7AF}, {0x1100, 0x11FF},
}

// afmoeDigits is Trinity's first stage, llama.cpp's hand-written
// \p{AFMoE_digits} (unicode_regex_split_custom_afmoe): each run of
// numbers is cut so that its groups of three end it, the 1 or 2 left
// over first; a cut is made only where a number run starts a group, so
// the text before a run joins the run's first group ("ab12345" is "ab12"
// and "345"), and the text after the last run is a piece of its own. The
// later stages split such a joined piece again.
func afmoeDigits(x *ptext, in, out []span) []span {
	for _, f := range in {
		prev, end := f.start, int(f.end)
		for p := int(f.start); p < end; {
			if !x.number(p) {
				p++
				continue
			}
			q := p
			for q < end && x.number(q) {
				q++
			}
			first := p + (q-p)%3
			if first == p {
				first += 3
			}
			for cut := first; cut <= q; cut += 3 {
				if int32(cut) > prev {
					out = append(out, span{prev, int32(cut)})
					prev = int32(cut)
				}
			}
			p = q
		}
		if prev < f.end {
			out = append(out, span{prev, f.end})
		}
	}
	return out
}

// matchHunyuanDense is the last expression of Hunyuan's dense models
// (llama.cpp's LLAMA_VOCAB_PRE_TYPE_HUNYUAN_DENSE, DeepSeek V3's):
//
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// on the collapsed text: an ASCII punctuation mark or symbol glued to the
// ASCII letters after it, a word of letters and marks (with one character
// before it that is none of those, nor a line break), a run of
// punctuation and symbols, white space. \p{S} is the collapsed one (see
// ptext: ~ is in the first class but not in \p{S}).
func matchHunyuanDense(x *ptext, p, e int) int {
	asciiLetter := func(i int) bool {
		c := x.cps[i]
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	if c := x.cps[p]; c < 0x80 && (x.punct(p) || x.info[p].cat == catSymbol) && p+1 < e && asciiLetter(p+1) {
		q := p + 1
		for q < e && asciiLetter(q) {
			q++
		}
		return q - p
	}
	symbol := func(i int) bool {
		if c := x.cps[i]; c < 0x80 {
			return c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' || c == '`' || c == '|'
		}
		return x.info[i].cat == catSymbol
	}
	word := func(i int) bool { return i < e && (x.letter(i) || x.mark(i)) }
	run := func(q int) int {
		for word(q) {
			q++
		}
		return q - p
	}
	if c := x.cps[p]; c != '\r' && c != '\n' && !x.letter(p) && !x.punct(p) && !symbol(p) && word(p+1) {
		return run(p + 1)
	}
	if word(p) {
		return run(p)
	}
	ps := func(i int) bool { return i < e && (x.punct(i) || symbol(i)) }
	q := p
	if x.cps[p] == ' ' && ps(p+1) {
		q = p + 1
	}
	if ps(q) {
		for ps(q) {
			q++
		}
		for q < e && (x.cps[q] == '\r' || x.cps[q] == '\n') {
			q++
		}
		return q - p
	}
	return matchSpaces(x, p, e)
}
