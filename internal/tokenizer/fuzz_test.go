package tokenizer

import (
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/lowmem/llm/internal/testutil"
)

// synthetic holds tokenizers built from internal/testutil's vocabularies,
// which need no test data: SentencePiece, byte-level BPE and WordPiece.
var synthetic = sync.OnceValues(func() ([3]*Tokenizer, error) {
	var out [3]*Tokenizer
	spm, err := testutil.SPMVocab(2000)
	if err != nil {
		return out, err
	}
	v := Vocab{Model: "llama", Tokens: spm.Tokens, Scores: spm.Scores, Types: spm.Types, AddBOS: true, AddSpacePrefix: true}
	v.ClearSpecial()
	v.BOS, v.EOS, v.UNK = testutil.BOSID, testutil.EOSID, testutil.UnkID
	if out[0], err = New(v); err != nil {
		return out, err
	}
	bpe, err := testutil.BPEVocab(2000)
	if err != nil {
		return out, err
	}
	v = Vocab{Model: "gpt2", Pre: "gpt-2", Tokens: bpe.Tokens, Types: bpe.Types, Merges: bpe.Merges}
	v.ClearSpecial()
	v.BOS, v.EOS = testutil.BPEEndOfText, testutil.BPEEndOfText
	if out[1], err = New(v); err != nil {
		return out, err
	}
	wpm := testutil.WPMVocab()
	v = Vocab{Model: "bert", Tokens: wpm.Tokens, Types: wpm.Types, AddBOS: true, AddSEP: true}
	v.ClearSpecial()
	v.PAD, v.UNK, v.BOS, v.SEP, v.MASK = testutil.WPMPad, testutil.WPMUnk, testutil.WPMCLS, testutil.WPMSEP, testutil.WPMMask
	out[2], err = New(v)
	return out, err
})

// spell joins the pieces of ids.
func spell(tok *Tokenizer, ids []int32) string {
	var b []byte
	for _, id := range ids {
		b = tok.AppendPiece(b, id)
	}
	return string(b)
}

func checkIDs(t *testing.T, what string, tok *Tokenizer, ids []int32) {
	t.Helper()
	for _, id := range ids {
		if id < 0 || int(id) >= tok.Size() {
			t.Fatalf("%s gave id %d outside the vocabulary of %d", what, id, tok.Size())
		}
	}
}

// FuzzRoundTrip encodes arbitrary text with the synthetic SPM, BPE and
// WordPiece vocabularies. Nothing may panic or give an id outside the
// vocabulary, and for valid UTF-8:
//   - SPM: the pieces spell " "+text (the dummy prefix) from Encode, and
//     exactly text from EncodeContinuation after a normal token; Decode
//     of Encode gives text back;
//   - BPE: the pieces spell text (byte fallback covers every byte);
//   - WordPiece: every character of this vocabulary's alphabet has a
//     piece, so ASCII text without upper-case letters never becomes [UNK],
//     and the decoded text without spaces is the input without whitespace
//     and control characters.
//
// Invalid UTF-8 is not preserved, as in llama.cpp (see FuzzEncode).
func FuzzRoundTrip(f *testing.F) {
	toks, err := synthetic()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", " ", "the quick brown fox", "Once upon a time, there was a little girl.",
		"  two  spaces\n\nand\ttabs ", "café 日本語 🦙", "\xff\xfe", "<s></s><|endoftext|>[CLS]", "a\u0301b", "\x00\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		valid := utf8.ValidString(s)
		spm, bpe, wpm := toks[0], toks[1], toks[2]

		ids := spm.Encode(s, false)
		checkIDs(t, "SPM Encode", spm, ids)
		if valid && s != "" {
			if got := spell(spm, ids); got != " "+s {
				t.Errorf("SPM: pieces of %q spell %q", s, got)
			}
			if got := spm.Decode(ids); got != s {
				t.Errorf("SPM: Decode(Encode(%q)) = %q", s, got)
			}
		}
		cont := spm.EncodeContinuation(spm.ids["▁the"], s)
		checkIDs(t, "SPM EncodeContinuation", spm, cont)
		if valid {
			if got := spell(spm, cont); got != s {
				t.Errorf("SPM: pieces of continuation %q spell %q", s, got)
			}
		}
		checkIDs(t, "SPM EncodeSpecial", spm, spm.EncodeSpecial(s, true))

		ids = bpe.Encode(s, true)
		checkIDs(t, "BPE Encode", bpe, ids)
		if valid {
			if got := spell(bpe, ids); got != s {
				t.Errorf("BPE: pieces of %q spell %q", s, got)
			}
		}
		checkIDs(t, "BPE EncodeSpecial", bpe, bpe.EncodeSpecial(s, false))
		bpe.Decode(ids)

		ids = wpm.Encode(s, false)
		checkIDs(t, "WPM Encode", wpm, ids)
		wpm.Decode(ids)
		checkIDs(t, "WPM EncodeSpecial", wpm, wpm.EncodeSpecial(s, true))
		ascii := true
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= 0x80 || (c >= 'A' && c <= 'Z') {
				ascii = false
			}
		}
		if ascii {
			for _, id := range ids {
				if id == testutil.WPMUnk {
					t.Fatalf("WPM: %q has [UNK]: %v", s, ids)
				}
			}
			strip := func(s string) string {
				return strings.Map(func(r rune) rune {
					if unicode.IsSpace(r) || unicode.IsControl(r) {
						return -1
					}
					return r
				}, s)
			}
			if got, want := strip(wpm.Decode(ids)), strip(s); got != want {
				t.Errorf("WPM: Decode(Encode(%q)) without spaces = %q, want %q", s, got, want)
			}
		}
	})
}

// FuzzDecode turns arbitrary bytes into token ids, most of them outside
// the vocabulary, and decodes them with every synthetic tokenizer: Decode,
// Piece, OutputPiece, IsEOG and IsControl must not panic, and invalid ids
// have no piece.
func FuzzDecode(f *testing.F) {
	toks, err := synthetic()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte{0, 0x80, 0, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		ids := make([]int32, len(data)/4)
		for i := range ids {
			ids[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
		}
		for _, tok := range toks {
			tok.Decode(ids)
			for _, id := range ids {
				p := tok.Piece(id)
				if (id < 0 || int(id) >= tok.Size()) && p != nil {
					t.Fatalf("Piece(%d) = %q for an id outside the vocabulary", id, p)
				}
				tok.OutputPiece(id)
				tok.IsEOG(id)
				tok.IsControl(id)
				tok.Text(id)
				tok.EncodeContinuation(id, "x y")
			}
		}
	})
}

// FuzzVocab builds a vocabulary from arbitrary bytes — any model, token
// texts, types, scores, merges and special ids — as a hostile GGUF file
// could declare it. New must return a tokenizer or an error wrapping
// ErrBadVocab or ErrUnsupported, never panic; a tokenizer it returns must
// encode and decode arbitrary text without panicking or leaving the
// vocabulary.
func FuzzVocab(f *testing.F) {
	f.Add([]byte("\x00<unk>\xff<s>\xff</s>\xff\xe2\x96\x81a\xffa\xffb"), "a b ab", uint64(0x0102))
	f.Add([]byte("\x01a\xffb\xffab\xff\xc4\xa0\xff<|endoftext|>\xfea b\xfeab c"), "ab a<|endoftext|>", uint64(0x0404))
	f.Add([]byte("\x02[PAD]\xff[UNK]\xff[CLS]\xff[SEP]\xff\xe2\x96\x81hello\xffing"), "Hello helloing [SEP]", uint64(0x02010300))
	f.Add([]byte("\x00\xff\xff\xff"), "", uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, text string, ids uint64) {
		if len(data) == 0 {
			return
		}
		models := []string{"llama", "gpt2", "bert", "t5", "rwkv", "plamo2"}
		v := Vocab{Model: models[int(data[0])%len(models)], Pre: "default", Name: "phi3"}
		body, merges, _ := strings.Cut(string(data[1:]), "\xfe")
		v.Tokens = strings.Split(body, "\xff")
		if merges != "" {
			v.Merges = strings.Split(merges, "\xfe")
		}
		v.Types = make([]int32, len(v.Tokens))
		v.Scores = make([]float32, len(v.Tokens))
		for i, tok := range v.Tokens {
			h := len(tok) + i
			v.Types[i] = int32(h % 8) // some out of range
			v.Scores[i] = float32(-h)
		}
		v.ClearSpecial()
		for i, p := range []*int32{&v.BOS, &v.EOS, &v.UNK, &v.EOT, &v.SEP, &v.FIMPad} {
			// One byte per id: 0 means none, others an id, some outside.
			if b := byte(ids >> (8 * i)); b != 0 {
				*p = int32(b) - 2
			}
		}
		v.AddBOS, v.AddEOS, v.AddSpacePrefix = ids>>48&1 != 0, ids>>49&1 != 0, ids>>50&1 != 0
		tok, err := New(v)
		if err != nil {
			if !errors.Is(err, ErrBadVocab) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("New: %v wraps neither ErrBadVocab nor ErrUnsupported", err)
			}
			return
		}
		for _, enc := range [][]int32{
			tok.Encode(text, true), tok.EncodeSpecial(text, true),
			tok.EncodeContinuation(0, text), tok.EncodeSpecialContinuation(int32(len(text)), text),
		} {
			checkIDs(t, "Encode", tok, enc)
			tok.Decode(enc)
		}
		for _, id := range tok.EOG() {
			if id < 0 || int(id) >= tok.Size() {
				t.Fatalf("EOG id %d outside the vocabulary", id)
			}
		}
	})
}
