package tokenizer

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// wpmVocab is a small WordPiece vocabulary in llama.cpp's GGUF spelling:
// word-initial pieces start with "▁", continuation pieces ("##x" in BERT)
// are plain.
func wpmVocab(t *testing.T, edit func(*Vocab)) *Tokenizer {
	t.Helper()
	v := Vocab{
		Model: "bert",
		Tokens: []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]",
			"▁hello", "▁world", "▁un", "aff", "able", "▁,", "▁!", "▁fuhrer", "▁é", "▁e",
			"▁我", "▁想", "▁a", "b", "▁ab", "c", "▁ä", "▁Hello"},
		AddBOS: true, AddSEP: true,
	}
	v.Types = make([]int32, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TypeNormal
		if i < 4 {
			v.Types[i] = TypeControl
		}
	}
	v.ClearSpecial()
	v.PAD, v.UNK, v.BOS, v.SEP = 0, 1, 2, 3
	return edited(t, v, edit)
}

// edited is New of v after edit (nil: none), failing t on an error.
func edited(t *testing.T, v Vocab, edit func(*Vocab)) *Tokenizer {
	t.Helper()
	if edit != nil {
		edit(&v)
	}
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestWPMEncode(t *testing.T) {
	tok := wpmVocab(t, nil)
	for _, tc := range []struct {
		in   string
		want []int32
	}{
		{"", nil},
		{"Hello World", []int32{4, 5}},
		{"  hello\t\nworld  ", []int32{4, 5}},
		{"unaffable", []int32{6, 7, 8}},
		{"hello,world!", []int32{4, 9, 5, 10}},
		{"Führer", []int32{11}},               // ü → u by NFD, then lowercase
		{"É", []int32{13}},                    // É → E → e
		{"e\u0301", []int32{13}},              // the combining acute is dropped
		{"我想", []int32{14, 15}},               // each CJK ideograph is a word
		{"abc", []int32{18, 19}},              // longest match first: "▁ab" then "c"
		{"abd", []int32{1}},                   // "d" is no token: the whole word is [UNK]
		{"hello xyz world", []int32{4, 1, 5}}, // only the bad word is lost
		{"he\x00llo\u200b", []int32{4}},       // NUL and format characters vanish
		{"hello\xffworld", []int32{1}},        // invalid UTF-8 is U+FFFD, which vanishes: "helloworld"
		{"[CLS] hello", []int32{1, 1, 1, 4}},  // control text is plain text: "[", "cls", "]"
		{"hello~world", []int32{4, 1, 5}},     // ASCII symbols split too
		{"hello\u00a0world", []int32{4, 5}},   // Unicode whitespace splits
		{"hello\u2028world\u3000!", []int32{4, 5, 10}},
	} {
		if got := tok.Encode(tc.in, false); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got, want := tok.Encode("hello", true), []int32{2, 4, 3}; !slices.Equal(got, want) {
		t.Errorf("Encode with special tokens = %v, want %v", got, want)
	}
	if got, want := tok.EncodeSpecial("[CLS]hello[SEP]", false), []int32{2, 4, 3}; !slices.Equal(got, want) {
		t.Errorf("EncodeSpecial = %v, want %v", got, want)
	}
	// Decode: pieces keep their "▁" as a space (no prefix to remove), and
	// llama.cpp's clean-up removes the space before punctuation.
	if got, want := tok.Decode([]int32{2, 4, 9, 5, 10, 3}), " hello, world!"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
}

func TestWPMNormalizerOptions(t *testing.T) {
	keepCase := wpmVocab(t, func(v *Vocab) { v.KeepCase = true })
	if got, want := keepCase.Encode("Hello hello", false), []int32{21, 4}; !slices.Equal(got, want) {
		t.Errorf("KeepCase: Encode = %v, want %v", got, want)
	}
	keepAccents := wpmVocab(t, func(v *Vocab) { v.KeepAccents = true })
	// NFD still maps ä to a; only the separate combining mark survives.
	if got, want := keepAccents.Encode("ä", false), []int32{16}; !slices.Equal(got, want) {
		t.Errorf("KeepAccents: Encode(ä) = %v, want %v", got, want)
	}
	if got, want := keepAccents.Encode("e\u0301", false), []int32{1}; !slices.Equal(got, want) {
		t.Errorf("KeepAccents: Encode(e + U+0301) = %v, want %v", got, want)
	}
}

// TestWPMRealVocab checks the bert-bge vocabulary beyond its test pairs:
// [CLS] and [SEP] with add_special, and Decode.
func TestWPMRealVocab(t *testing.T) {
	tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-bert-bge.gguf"))
	got := tok.Encode("Hello, world!", true)
	want := []int32{101, 7592, 1010, 2088, 999, 102}
	if !slices.Equal(got, want) {
		t.Fatalf("Encode = %v, want %v", got, want)
	}
	if d := tok.Decode(got); d != " hello, world!" {
		t.Errorf("Decode = %q", d)
	}
	if p := string(tok.Piece(7592)); p != " hello" {
		t.Errorf("Piece(7592) = %q", p)
	}
	if e := tok.End(); e != 102 {
		t.Errorf("End() = %d, want [SEP] (102)", e)
	}
}

// End is the token Encode(…, true) puts last: a WordPiece vocabulary's
// [SEP], the EOS of a vocabulary that adds it, else none.
func TestEnd(t *testing.T) {
	toks, err := synthetic()
	if err != nil {
		t.Fatal(err)
	}
	sv, err := testutil.SPMVocab(300)
	if err != nil {
		t.Fatal(err)
	}
	v := Vocab{Model: "llama", Tokens: sv.Tokens, Scores: sv.Scores, Types: sv.Types, AddBOS: true, AddEOS: true, AddSpacePrefix: true}
	v.ClearSpecial()
	v.BOS, v.EOS, v.UNK = testutil.BOSID, testutil.EOSID, testutil.UnkID
	spm, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range []*Tokenizer{toks[0], toks[1], toks[2], spm} {
		ids := tok.Encode("the cat", true)
		end := tok.End()
		if (end >= 0) != (ids[len(ids)-1] == end) || end >= 0 && i < 2 {
			t.Errorf("tokenizer %d: End() = %d, Encode(…, true) = %v", i, end, ids)
		}
	}
}

func TestNFDFirst(t *testing.T) {
	for _, tc := range []struct{ in, want rune }{
		{'a', 'a'}, {'À', 'A'}, {'é', 'e'}, {'ệ', 'e'}, {'ử', 'u'}, {'Ω', 'Ω'},
		{'ά', 'α'}, {'й', 'и'}, {'가', 0x1100}, {'힣', 0x1112}, {0x1F999, 0x1F999}, {0x10FFFF, 0x10FFFF},
	} {
		if got := nfdFirst(tc.in); got != tc.want {
			t.Errorf("nfdFirst(%U) = %U, want %U", tc.in, got, tc.want)
		}
	}
}
