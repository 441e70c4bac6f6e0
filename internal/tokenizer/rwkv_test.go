package tokenizer

import (
	"slices"
	"testing"
)

// rwkvTokens is a small RWKV World-style vocabulary in the escaped
// spelling its GGUF files hold (the test data has no RWKV vocabulary):
// "<s>" (control, id 0), single bytes, "ab" and "abc" and "cd" (so greedy
// longest match and a cheaper split differ), escapes of a newline, a tab,
// a backslash, a quote, a hex byte, a three-byte UTF-8 character and an
// uppercase-hex escape, and "\x41" after "A", the same bytes at a later id.
var rwkvTokens = []string{
	"<s>", "a", "b", "c", "d", " ", "ab", "abc", "cd", `\n`, `\n\n`, `\t`, `\\`, `\'`,
	`\x00`, `\xe4\xbd\xa0`, "A", `\x41`, `\xA0`, "b c",
}

func rwkvVocab(t *testing.T, edit func(*Vocab)) *Tokenizer {
	t.Helper()
	v := Vocab{Model: "rwkv", Tokens: rwkvTokens, Types: make([]int32, len(rwkvTokens))}
	for i := range v.Types {
		v.Types[i] = TypeNormal
	}
	v.Types[0] = TypeControl
	v.ClearSpecial()
	return edited(t, v, edit)
}

// Unescaping as llama.cpp's llama_unescape_rwkv_token: \t \n \r, \xHH in
// lowercase hex (an uppercase digit read by the same arithmetic: "\xA0" is
// ('A'-'0')·16 mod 256 = 0x10), any other escaped byte as itself, the rest
// as it is.
func TestUnescapeRWKV(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`abc`, "abc"}, {`\n\n`, "\n\n"}, {`\t\r`, "\t\r"}, {`\\`, `\`}, {`\'`, "'"}, {`\"x`, `"x`},
		{`\x00`, "\x00"}, {`\xe4\xbd\xa0`, "你"}, {`\xA0`, "\x10"}, {`a\`, "a"}, {`\x4`, ""},
	} {
		if got := string(unescapeRWKV(nil, tc.in)); got != tc.want {
			t.Errorf("unescape %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Greedy longest match from the left over the unescaped bytes, as
// llama.cpp's llm_tokenizer_rwkv_session walks its trie: "abcd" is abc+d
// (not ab+cd); a byte no token starts with is UNK, or nothing without
// one; a later id holding the same bytes wins; "<s>" in plain text is
// matched like any token (llama.cpp's trie holds it); nothing is added
// with addSpecial; pieces are the unescaped bytes, and Decode gives the
// text back.
func TestRWKVEncode(t *testing.T) {
	tok := rwkvVocab(t, nil)
	for _, tc := range []struct {
		text string
		want []int32
	}{
		// Longest match; escapes; the later id of the same bytes; <s> as
		// text, a byte without a token, nothing.
		{"abcd", []int32{7, 4}}, {"abab", []int32{6, 6}}, {"b cd", []int32{19, 4}},
		{"a\n\n\nb", []int32{1, 10, 9, 2}}, {"\t\\'", []int32{11, 12, 13}}, {"你a", []int32{15, 1}}, {"\x10\x00", []int32{18, 14}},
		{"A", []int32{17}},
		{"<s>a", []int32{0, 1}}, {"aza", []int32{1, 1}}, {"", nil},
	} {
		for _, special := range []bool{false, true} {
			if got := tok.Encode(tc.text, special); !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q, %v) = %v, want %v", tc.text, special, got, tc.want)
			}
		}
	}
	withUnk := rwkvVocab(t, func(v *Vocab) { v.UNK = 0 })
	if got := withUnk.Encode("aza", false); !slices.Equal(got, []int32{1, 0, 1}) {
		t.Errorf("with UNK 0: Encode(aza) = %v, want [1 0 1]", got)
	}
	if got := tok.EncodeSpecial("<s>ab", true); !slices.Equal(got, []int32{0, 6}) {
		t.Errorf("EncodeSpecial(<s>ab) = %v, want [0 6]", got)
	}
	if p := string(tok.Piece(15)); p != "你" {
		t.Errorf("Piece(15) = %q", p)
	}
	if p := string(tok.Piece(0)); p != "<s>" {
		t.Errorf("Piece(0) = %q, want <s>", p)
	}
	for _, s := range []string{"abcd b c\n\n你 A\t", "cab\\'"} {
		if got := tok.Decode(tok.Encode(s, true)); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}

// FromGGUF reads tokenizer.ggml.model "rwkv" with llama.cpp's defaults:
// no special tokens, nothing added; the ids the file names (the
// converter's BOS and EOS 0, EOT 261 in RWKV World) are taken.
func TestRWKVFromGGUF(t *testing.T) {
	kv := map[string]any{"tokenizer.ggml.model": "rwkv", "tokenizer.ggml.tokens": rwkvTokens}
	tok, err := FromGGUF(metaFile(kv))
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != -1 || tok.EOS() != -1 || tok.AddBOS() || tok.AddEOS() || !slices.Equal(tok.Encode("abc", true), []int32{7}) {
		t.Errorf("defaults: BOS %d EOS %d AddBOS %v AddEOS %v", tok.BOS(), tok.EOS(), tok.AddBOS(), tok.AddEOS())
	}
	kv["tokenizer.ggml.eos_token_id"], kv["tokenizer.ggml.eot_token_id"] = uint32(0), uint32(10)
	if tok, err = FromGGUF(metaFile(kv)); err != nil || !tok.IsEOG(0) || !tok.IsEOG(10) {
		t.Errorf("EOS 0, EOT 10: %v", err)
	}
}
