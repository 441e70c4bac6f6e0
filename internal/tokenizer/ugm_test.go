package tokenizer

import (
	"slices"
	"testing"
)

// ugmTokens is a small unigram vocabulary in T5's layout (the test data
// has none): <pad>, </s> and <unk> first, then pieces whose scores make
// the best segmentation differ from the greedy one, two equal-scoring
// segmentations of "▁xy", a two-byte character, a user-defined <mask>
// (its score ignored: 0), an unused "c" (still matched, as llama.cpp's
// trie holds unused tokens), a byte token (never matched) and the
// charsmap tests' replacements "1", "2", "3", "fi".
var ugmTokens = []struct {
	text  string
	score float32
	typ   int32
}{
	{"<pad>", 0, TypeControl}, {"</s>", 0, TypeControl}, {"<unk>", 0, TypeUnknown},
	{"▁", -2, TypeNormal}, {"▁a", -1, TypeNormal}, {"b", -2, TypeNormal}, {"▁ab", -2.5, TypeNormal},
	{"a", -3, TypeNormal}, {"x", -1, TypeNormal}, {"y", -1, TypeNormal}, {"xy", -2, TypeNormal},
	{"<mask>", -100, TypeUserDefined}, {"▁b", -1.5, TypeNormal}, {"é", -1, TypeNormal},
	{"<0x41>", -1, TypeByte}, {"c", -1, TypeUnused}, {"1", -1, TypeNormal}, {"2", -1, TypeNormal},
	{"3", -1, TypeNormal}, {"fi", -1, TypeNormal}, {"▁A", -1, TypeNormal},
}

// ugmVocab is ugmTokens as New takes it, with FromGGUF's defaults for
// "t5" (EOS 1, UNK 2, PAD 0, EOS added) and a space prefix.
func ugmVocab() Vocab {
	v := Vocab{Model: "t5", AddEOS: true, AddSpacePrefix: true}
	for _, tk := range ugmTokens {
		v.Tokens = append(v.Tokens, tk.text)
		v.Scores = append(v.Scores, tk.score)
		v.Types = append(v.Types, tk.typ)
	}
	v.ClearSpecial()
	v.EOS, v.UNK, v.PAD = 1, 2, 0
	return v
}

func ugmTokenizer(t *testing.T, edit func(*Vocab)) *Tokenizer {
	t.Helper()
	return edited(t, ugmVocab(), edit)
}

// The best-scoring segmentation, hand-checked: "▁ab" (−2.5) beats
// "▁a"+"b" (−3); "▁ab"+"b" (−4.5) beats "▁a"+"b"+"b" (−5); of the equal
// "xy" and "x"+"y" the one ending first at the end wins, which is the
// longer token found from the earlier start; code points no token covers
// are one UNK per run (the lowest normal score −3, less 10, each), even
// around a two-byte character and for invalid UTF-8 (U+FFFD); an unused
// token is used; a control token's text is not; a user-defined token is
// matched whole, splitting the text, each part with its own prefix; with
// addSpecial only EOS is added (no BOS in T5's defaults).
func TestUGMEncode(t *testing.T) {
	tok := ugmTokenizer(t, nil)
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"ab", []int32{6}},
		{"abb", []int32{6, 5}},
		{"a b", []int32{4, 12}},
		{"xy", []int32{3, 10}},
		{"zzq", []int32{3, 2}},
		{"zaz", []int32{3, 2, 7, 2}},
		{"üé", []int32{3, 2, 13}},
		{"\xff\xfe", []int32{3, 2}},
		{"c", []int32{3, 15}},
		{"</s>", []int32{3, 2}},
		{"A", []int32{20}},
		{"a<mask>b", []int32{4, 11, 12}},
		{"", nil},
	} {
		if got := tok.Encode(tc.text, false); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
		want := append(slices.Clone(tc.want), 1)
		if got := tok.Encode(tc.text, true); !slices.Equal(got, want) {
			t.Errorf("Encode(%q, true) = %v, want %v", tc.text, got, want)
		}
	}
	if got := tok.EncodeSpecial("a</s>", false); !slices.Equal(got, []int32{4, 1}) {
		t.Errorf("EncodeSpecial(a</s>) = %v, want [4 1]", got)
	}
	// The prefix goes before a continuation too, as before each piece of
	// text between special tokens.
	if got := tok.EncodeContinuation(4, "b"); !slices.Equal(got, []int32{12}) {
		t.Errorf("EncodeContinuation(▁a, b) = %v, want [12]", got)
	}
	// A normal token whose text marks an end of turn is made a control
	// token, as llama.cpp does, and so leaves the search: "[EOT]" is not
	// matched, though it would score best.
	eot := ugmTokenizer(t, func(v *Vocab) {
		v.Tokens = append(v.Tokens, "[EOT]")
		v.Scores = append(v.Scores, -0.5)
		v.Types = append(v.Types, TypeNormal)
	})
	if got := eot.Encode("[EOT]", false); slices.Contains(got, 21) || !eot.IsControl(21) {
		t.Errorf("Encode([EOT]) = %v, IsControl(21) = %v; want the control token unmatched", got, eot.IsControl(21))
	}
	// Without UNK, uncovered code points give nothing.
	noUnk := ugmTokenizer(t, func(v *Vocab) { v.UNK = -1 })
	if got := noUnk.Encode("zaz", false); !slices.Equal(got, []int32{3, 7}) {
		t.Errorf("no UNK: Encode(zaz) = %v, want [3 7]", got)
	}
}

// Normalization without a charsmap: spaces become "▁", the dummy prefix
// goes before the first word only; removing extra whitespace drops the
// spaces and puts "▁" before every word — with or without the prefix
// flag, as llama.cpp does; whitespace as a suffix puts it at the end.
func TestUGMNormalize(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		prefix, merge, suffix bool
		in, want              string
	}{
		{"prefix", true, false, false, "a b", "▁a▁b"},
		{"prefix after spaces", true, false, false, "  a", "▁▁▁a"},
		{"no prefix", false, false, false, " a  b ", "▁a▁▁b▁"},
		{"merge", true, true, false, "  a   b  ", "▁a▁b"},
		{"merge without prefix", false, true, false, "a   b", "▁a▁b"},
		{"merge only spaces", true, true, false, "   ", ""},
		{"suffix", true, false, true, "a b", "a▁b▁"},
		{"tab is not a space", true, false, false, "a\tb", "▁a\tb"},
	} {
		tok := ugmTokenizer(t, func(v *Vocab) { v.AddSpacePrefix, v.RemoveExtraWhitespaces = tc.prefix, tc.merge })
		tok.ugm.spaceAsSuffix = tc.suffix
		if got := string(tok.ugm.normalize(nil, tc.in)); got != tc.want {
			t.Errorf("%s: normalize(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	tok := ugmTokenizer(t, func(v *Vocab) { v.AddSpacePrefix = false })
	if got := tok.Encode("ab", false); !slices.Equal(got, []int32{7, 5}) {
		t.Errorf("no prefix: Encode(ab) = %v, want [7 5]", got)
	}
	if got := tok.Encode(" ab", false); !slices.Equal(got, []int32{6}) {
		t.Errorf("no prefix: Encode(' ab') = %v, want [6]", got)
	}
	tok = ugmTokenizer(t, func(v *Vocab) { v.RemoveExtraWhitespaces = true })
	if got := tok.Encode("  a   b ", false); !slices.Equal(got, []int32{4, 12}) {
		t.Errorf("merged: Encode = %v, want [4 12]", got)
	}
}

// With a charsmap the longest matching prefix is replaced before the
// spaces are handled (so a tab mapped to a space is escaped and merged
// like one); a deleted character leaves nothing; a prefix along a
// user-defined token's path is copied unnormalized however far it
// matches, whether or not a token ends there (llama.cpp's get_longest_
// prefix walks its trie that way), so with "AB!" user-defined "AB" and
// even "A" stay upper case, which without it is lowercased.
func TestUGMCharsmap(t *testing.T) {
	cm := testCharsmap(t)
	tok := ugmTokenizer(t, func(v *Vocab) {
		v.Charsmap = cm
		v.Tokens = append(v.Tokens, "AB!")
		v.Scores = append(v.Scores, 0)
		v.Types = append(v.Types, TypeUserDefined)
	})
	for _, tc := range []struct{ in, want string }{
		{"xyz", "▁2z"}, {"xz", "▁1z"}, {"pq", "▁3"}, {"pz", "▁pz"}, {"Ａ", "▁A"}, {"ﬁ", "▁fi"},
		{"a\tb", "▁a▁b"}, {"aDb", "▁ab"}, {"A", "▁A"}, {"ABc", "▁ABc"}, {"Ac", "▁Ac"},
	} {
		if got := string(tok.ugm.normalize(nil, tc.in)); got != tc.want {
			t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"xy", []int32{3, 17}}, {"Ａb", []int32{20, 5}}, {"ﬁ", []int32{3, 19}}, {"aDb", []int32{6}},
	} {
		if got := tok.Encode(tc.text, false); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	merged := ugmTokenizer(t, func(v *Vocab) { v.Charsmap, v.RemoveExtraWhitespaces = cm, true })
	if got := string(merged.ugm.normalize(nil, "a \t Ab")); got != "▁a▁ab" {
		t.Errorf("merged tab: %q, want %q", got, "▁a▁ab")
	}
}

// Pieces turn "▁" into a space; Decode drops the leading space the
// prefix added, a trailing EOS, and UNK; so text of covered characters
// comes back, and a charsmap's replacements come back replaced.
func TestUGMDecode(t *testing.T) {
	tok := ugmTokenizer(t, nil)
	if p := string(tok.Piece(4)); p != " a" {
		t.Errorf("Piece(▁a) = %q", p)
	}
	if p := string(tok.Piece(14)); p != "A" {
		t.Errorf("Piece(<0x41>) = %q", p)
	}
	for _, s := range []string{"ab abb a b", "xy  b", "é"} {
		for _, special := range []bool{false, true} {
			if got := tok.Decode(tok.Encode(s, special)); got != s {
				t.Errorf("Decode(Encode(%q, %v)) = %q", s, special, got)
			}
		}
	}
	if got := tok.Decode(tok.Encode("azb", false)); got != "ab" {
		t.Errorf("UNK decodes to %q, want ab", got)
	}
	withMap := ugmTokenizer(t, func(v *Vocab) { v.Charsmap = testCharsmap(t) })
	if got := withMap.Decode(withMap.Encode("xy ﬁ", true)); got != "2 fi" {
		t.Errorf("charsmap round trip: %q, want %q", got, "2 fi")
	}
}

// FromGGUF reads "t5" with llama.cpp's defaults (EOS 1, UNK 2, PAD 0, no
// BOS; EOS added, BOS not; no space prefix) and, as an XLM-RoBERTa
// converter writes it for a bert or nomic-bert-moe model, the flags and
// ids the file gives: <s> 0 and </s> 2 added around the text, a space
// prefix, extra whitespace removed, the charsmap; nomic-bert-moe's <mask>
// strips the space before it.
func TestUGMFromGGUF(t *testing.T) {
	toks := []string{"<s>", "<pad>", "</s>", "<unk>", "▁a", "▁b", "<mask>", "▁2"}
	kv := map[string]any{
		"tokenizer.ggml.model":      "t5",
		"tokenizer.ggml.tokens":     toks,
		"tokenizer.ggml.scores":     []float32{0, 0, 0, 0, -1, -1, 0, -1},
		"tokenizer.ggml.token_type": []int32{3, 3, 3, 2, 1, 1, 3, 1},
	}
	tok, err := FromGGUF(metaFile(kv))
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != -1 || tok.EOS() != 1 || tok.AddBOS() || !tok.AddEOS() || tok.End() != 1 {
		t.Errorf("defaults: BOS %d EOS %d AddBOS %v AddEOS %v", tok.BOS(), tok.EOS(), tok.AddBOS(), tok.AddEOS())
	}
	if got := tok.Encode("a", false); !slices.Equal(got, []int32{2}) {
		t.Errorf("no prefix by default: Encode(a) = %v, want [2] (the default UNK)", got)
	}
	kv["general.architecture"] = "nomic-bert-moe"
	kv["tokenizer.ggml.bos_token_id"], kv["tokenizer.ggml.eos_token_id"] = uint32(0), uint32(2)
	kv["tokenizer.ggml.unknown_token_id"], kv["tokenizer.ggml.padding_token_id"] = uint32(3), uint32(1)
	kv["tokenizer.ggml.mask_token_id"] = uint32(6)
	kv["tokenizer.ggml.add_bos_token"], kv["tokenizer.ggml.add_eos_token"] = true, true
	kv["tokenizer.ggml.add_space_prefix"], kv["tokenizer.ggml.remove_extra_whitespaces"] = true, true
	kv["tokenizer.ggml.precompiled_charsmap"] = testCharsmap(t)
	if tok, err = FromGGUF(metaFile(kv)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want []int32
	}{
		{"Encode(a  b, true)", tok.Encode("a  b", true), []int32{0, 4, 5, 2}},
		{"Encode(a xy, false)", tok.Encode("a xy", false), []int32{4, 7}},
		{"EncodeSpecial(a <mask>, true)", tok.EncodeSpecial("a <mask>", true), []int32{0, 4, 6, 2}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// As in llama.cpp, dropping BOS keeps the prefix's space.
	if got := tok.Decode([]int32{0, 4, 5, 2}); got != " a b" {
		t.Errorf("Decode = %q, want %q", got, " a b")
	}
	if got := tok.Decode([]int32{4, 5}); got != "a b" {
		t.Errorf("Decode = %q, want %q", got, "a b")
	}
	kv["tokenizer.ggml.precompiled_charsmap"] = []uint8{1, 2}
	if _, err := FromGGUF(metaFile(kv)); err == nil {
		t.Error("a 2-byte charsmap loaded")
	}
	kv["tokenizer.ggml.precompiled_charsmap"] = "abc"
	if _, err := FromGGUF(metaFile(kv)); err == nil {
		t.Error("a string charsmap loaded")
	}
}
