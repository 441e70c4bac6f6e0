package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lowmem/llm/internal/testutil"
)

// readVocabCases reads <vocab>.inp and <vocab>.out (manifest §7).
func readVocabCases(t *testing.T, gguf string) []testutil.VocabCase {
	return testutil.VocabCases(t, gguf)
}

// vocabFiles returns every vocab/*.gguf that has .inp/.out test pairs,
// whatever the directory holds, and fails if there is none.
func vocabFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(testdataDir(t), "vocab", "*.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range all {
		if _, err := os.Stat(p + ".inp"); err == nil {
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		missingTestdata(t, "no vocab/*.gguf with .inp/.out pairs")
	}
	return files
}

// TestVocabFiles runs every .inp/.out pair of every vocab test file with
// add_special = false and parse_special = false, as llama.cpp's
// test-tokenizer-0 does.
func TestVocabFiles(t *testing.T) {
	for _, path := range vocabFiles(t) {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "ggml-vocab-"), ".gguf")
		t.Run(name, func(t *testing.T) {
			tok := cachedTokenizer(t, path)
			cases := readVocabCases(t, path)
			failed := 0
			for i, c := range cases {
				got := tok.Encode(c.Input, false)
				if !slices.Equal(got, c.Want) {
					failed++
					t.Errorf("case %d: input %q\n want %v\n  got %v", i, c.Input, c.Want, got)
				}
			}
			t.Logf("%s: %d/%d cases pass", name, len(cases)-failed, len(cases))
		})
	}
}

// TestSPMRoundTrip checks Decode(Encode(s)) == s on the test strings: the
// space prefix Encode adds is the one Decode removes, and byte fallback
// spells every other character.
func TestSPMRoundTrip(t *testing.T) {
	for _, name := range []string{"llama-spm", "phi-3"} {
		t.Run(name, func(t *testing.T) {
			path := testdataFile(t, "vocab/ggml-vocab-"+name+".gguf")
			tok := cachedTokenizer(t, path)
			for i, c := range readVocabCases(t, path) {
				if got := tok.Decode(tok.Encode(c.Input, false)); got != c.Input {
					t.Errorf("case %d: Decode(Encode(%q)) = %q", i, c.Input, got)
				}
				// With BOS, llama.cpp keeps the prefix space.
				if got := tok.Decode(tok.Encode(c.Input, true)); got != " "+c.Input && c.Input != "" {
					t.Errorf("case %d: Decode(Encode(%q, true)) = %q", i, c.Input, got)
				}
			}
		})
	}
}

// TestBPERoundTrip checks that the pieces of a BPE encoding spell the input
// (Decode also applies llama.cpp's clean-up, so it is not compared).
func TestBPERoundTrip(t *testing.T) {
	for _, name := range []string{"gpt-2", "deepseek-coder", "deepseek-llm", "falcon", "mpt", "refact", "starcoder"} {
		t.Run(name, func(t *testing.T) {
			path := testdataFile(t, "vocab/ggml-vocab-"+name+".gguf")
			tok := cachedTokenizer(t, path)
			for i, c := range readVocabCases(t, path) {
				var b []byte
				for _, id := range tok.Encode(c.Input, false) {
					b = tok.AppendPiece(b, id)
				}
				if string(b) != c.Input {
					t.Errorf("case %d: pieces of %q spell %q", i, c.Input, b)
				}
			}
		})
	}
}

func TestSpecialTokens(t *testing.T) {
	tests := []struct {
		vocab          string
		bos, eos, eot  int32
		addBOS, addEOS bool
		eog            []int32
		control        []int32
	}{
		{"llama-spm", 1, 2, -1, true, false, []int32{2}, []int32{1, 2}},
		// </s> ends generation by its text (llama.cpp lists it for
		// PaddleOCR); it is also Phi-3's EOS-like control token.
		{"phi-3", 1, 32000, 32007, true, false, []int32{2, 32000, 32007}, []int32{1, 2, 32000, 32007}},
		{"gpt-2", 50256, 50256, 50256, false, false, []int32{50256}, []int32{50256}},
		{"deepseek-llm", 100000, 100001, 100001, true, false, []int32{100001}, []int32{100000, 100001}},
		// <|end_of_text|> and <|eot_id|> by text; <|eot_id|> is also EOS.
		{"llama3_1", 128000, 128009, 128009, true, false, []int32{128001, 128009}, []int32{128000, 128001, 128009}},
		// <|endoftext|>, <|im_end|>, the FIM pad, repo and file-separator
		// tokens, and the plain-text token "</s>" (128247), which
		// llama.cpp's text rule makes a control token.
		{"qwen3", 151643, 151645, 151645, false, false,
			[]int32{128247, 151643, 151645, 151662, 151663, 151664}, []int32{128247, 151643, 151644, 151645}},
		// <eos>, <end_of_turn> (EOS here) and the user-defined "</s>"
		// (212), made control by its text.
		{"gemma3", 2, 106, 106, true, false, []int32{1, 106, 212}, []int32{1, 2, 105, 106, 212}},
		// A WordPiece vocabulary: [CLS] is BOS; "[PAD]" is taken for the
		// FIM pad token by its text (Kimi-K2's spelling), so it is EOG.
		{"bert-bge", 101, -1, -1, true, false, []int32{0}, []int32{0, 100, 101, 102, 103}},
	}
	for _, tc := range tests {
		t.Run(tc.vocab, func(t *testing.T) {
			tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
			if tok.BOS() != tc.bos || tok.EOS() != tc.eos || tok.EOT() != tc.eot {
				t.Errorf("BOS, EOS, EOT = %d, %d, %d; want %d, %d, %d",
					tok.BOS(), tok.EOS(), tok.EOT(), tc.bos, tc.eos, tc.eot)
			}
			if tok.AddBOS() != tc.addBOS || tok.AddEOS() != tc.addEOS {
				t.Errorf("AddBOS, AddEOS = %v, %v; want %v, %v", tok.AddBOS(), tok.AddEOS(), tc.addBOS, tc.addEOS)
			}
			var eog []int32
			for id := range int32(tok.Size()) {
				if tok.IsEOG(id) {
					eog = append(eog, id)
				}
			}
			if !slices.Equal(eog, tc.eog) {
				t.Errorf("IsEOG is true for %v, want %v", eog, tc.eog)
			}
			if got := tok.EOG(); !slices.Equal(got, tc.eog) {
				t.Errorf("EOG() = %v, want %v", got, tc.eog)
			}
			for _, id := range []int32{-1, int32(tok.Size()), 1 << 30} {
				if tok.IsEOG(id) {
					t.Errorf("IsEOG(%d) = true for an id outside the vocabulary", id)
				}
			}
			for _, id := range tc.control {
				if !tok.IsControl(id) {
					t.Errorf("IsControl(%d) = false", id)
				}
			}
			if w := tok.Warnings(); len(w) > 0 {
				t.Errorf("warnings for a good vocabulary: %q", w)
			}
		})
	}
}

func TestEncodeSpecial(t *testing.T) {
	tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-llama-spm.gguf"))
	text := "<s>Hello</s> world"
	plain := tok.Encode(text, false)
	if slices.Contains(plain, 1) || slices.Contains(plain, 2) {
		t.Errorf("Encode(%q) = %v parses control tokens", text, plain)
	}
	got := tok.EncodeSpecial(text, true)
	// BOS, "<s>", "Hello" with the space prefix, "</s>", and " world" with
	// a second space: llama.cpp adds the prefix after every special token.
	want := slices.Concat([]int32{1, 1}, tok.Encode("Hello", false), []int32{2}, tok.Encode(" world", false))
	if !slices.Equal(got, want) {
		t.Errorf("EncodeSpecial(%q) = %v, want %v", text, got, want)
	}
	if d := tok.Decode(got); d != " Hello  world" {
		t.Errorf("Decode = %q", d)
	}
}

func TestPieces(t *testing.T) {
	tests := []struct {
		vocab string
		id    int32
		want  string
	}{
		{"llama-spm", 1, "<s>"},
		{"llama-spm", 0, "<unk>"},
		{"llama-spm", 13, "\n"},  // <0x0A>
		{"llama-spm", 3, "\x00"}, // <0x00>
		{"llama-spm", 450, " The"},
		{"gpt-2", 50256, "<|endoftext|>"},
		{"gpt-2", 464, "The"},
		{"gpt-2", 2068, " quick"},
		{"gpt-2", 198, "\n"},
		{"gpt-2", 447, "\xe2\x80"},
	}
	for _, tc := range tests {
		tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
		if got := tok.Piece(tc.id); string(got) != tc.want {
			t.Errorf("%s: Piece(%d) = %q, want %q", tc.vocab, tc.id, got, tc.want)
		}
	}
	tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-llama-spm.gguf"))
	for _, id := range []int32{-1, -100, int32(tok.Size()), 1 << 30} {
		if p := tok.Piece(id); p != nil {
			t.Errorf("Piece(%d) = %q, want nil", id, p)
		}
	}
	if got := tok.Decode([]int32{-5, 450, 1 << 30, 4996, 2}); got != "The quick" {
		t.Errorf("Decode with invalid ids = %q", got)
	}
}

func TestDecodeCleanSpaces(t *testing.T) {
	tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-gpt-2.gguf"))
	for _, tc := range []struct{ in, want string }{
		{"Hello , world !", "Hello, world!"},
		{"it 's he 'll I 'm we 're you 've don 't", "it's he 'll I'm we're you've don 't"},
		{"a ' b", "a'b"},
		{"a ' ' b", "a'' b"}, // llama.cpp's second pass hides the next space from itself
	} {
		if got := tok.Decode(tok.Encode(tc.in, false)); got != tc.want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	base := func() Vocab {
		v := Vocab{Model: "llama", Tokens: []string{"<unk>", "<s>", "</s>", "a"}}
		v.ClearSpecial()
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		return v
	}
	tests := []struct {
		name string
		edit func(*Vocab)
		want error
	}{
		{"no tokens", func(v *Vocab) { v.Tokens = nil }, ErrBadVocab},
		{"duplicate", func(v *Vocab) { v.Tokens[3] = "<s>" }, ErrBadVocab},
		{"short scores", func(v *Vocab) { v.Scores = []float32{0} }, ErrBadVocab},
		{"short types", func(v *Vocab) { v.Types = []int32{1, 3} }, ErrBadVocab},
		{"long scores", func(v *Vocab) { v.Scores = make([]float32, 5) }, ErrBadVocab},
		{"long types", func(v *Vocab) { v.Types = make([]int32, 5) }, ErrBadVocab},
		{"mask out of range", func(v *Vocab) { v.MASK = 4 }, ErrBadVocab},
		{"fim pad out of range", func(v *Vocab) { v.FIMPad = 1 << 30 }, ErrBadVocab},
		{"add bos without bos", func(v *Vocab) { v.BOS, v.AddBOS = -1, true }, ErrBadVocab},
		{"add eos without eos", func(v *Vocab) { v.EOS, v.AddEOS = -1, true }, ErrBadVocab},
		{"add sep without sep", func(v *Vocab) { v.AddSEP = true }, ErrBadVocab},
		{"bos out of range", func(v *Vocab) { v.BOS = 4 }, ErrBadVocab},
		{"eos negative", func(v *Vocab) { v.EOS = -2 }, ErrBadVocab},
		{"model", func(v *Vocab) { v.Model = "plamo2" }, ErrUnsupported},
		{"pre", func(v *Vocab) { v.Model, v.Pre = "gpt2", "kimi-k2" }, ErrUnsupported},
	}
	for _, tc := range tests {
		v := base()
		tc.edit(&v)
		if _, err := New(v); !errors.Is(err, tc.want) {
			t.Errorf("%s: New error %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := New(base()); err != nil {
		t.Fatalf("valid vocabulary: %v", err)
	}
}

// TestEncodeLongInput checks that a long run without spaces (the worst case
// for merge-based tokenizers) stays correct: its pieces spell the input.
func TestEncodeLongInput(t *testing.T) {
	for _, name := range []string{"llama-spm", "gpt-2", "deepseek-llm"} {
		tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+name+".gguf"))
		in := strings.Repeat("abcdefghij", 2000) + strings.Repeat(" ", 3000) + strings.Repeat("7", 999)
		var b []byte
		for _, id := range tok.Encode(in, false) {
			b = tok.AppendPiece(b, id)
		}
		want := in
		if name == "llama-spm" {
			want = " " + in
		}
		if !bytes.Equal(b, []byte(want)) {
			t.Errorf("%s: pieces of a %d-byte input do not spell it", name, len(in))
		}
	}
}

func ExampleTokenizer_Encode_synthetic() {
	// A tiny SentencePiece vocabulary built by hand; real ones come from
	// FromGGUF.
	v := Vocab{
		Model:  "llama",
		Tokens: []string{"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi"},
		Scores: []float32{0, 0, 0, -1, -2, -2, -1, -0.5},
		Types:  []int32{TypeUnknown, TypeControl, TypeControl, TypeNormal, TypeNormal, TypeNormal, TypeNormal, TypeNormal},
		AddBOS: true, AddSpacePrefix: true,
	}
	v.ClearSpecial()
	v.BOS, v.EOS, v.UNK = 1, 2, 0
	tok, err := New(v)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("hi hi", true)
	fmt.Println(ids, tok.Decode(ids[1:]))
	// Output: [1 7 7] hi hi
}

// FuzzEncode checks that Encode never panics and that the pieces of valid
// UTF-8 spell the input. Invalid UTF-8 is not preserved, as in llama.cpp:
// SPM takes a stray lead byte and the bytes after it as one symbol (for
// "\xf5 " that swallows the escaped space, "▁"), and byte-level BPE turns
// invalid bytes into U+FFFD.
func FuzzEncode(f *testing.F) {
	spm := cachedTokenizer(f, testdataFile(f, "vocab/ggml-vocab-llama-spm.gguf"))
	bpe := cachedTokenizer(f, testdataFile(f, "vocab/ggml-vocab-gpt-2.gguf"))
	for _, s := range []string{"", " ", "Hello, y'all! 🦙", "\xff\xfe\xc3", "<s></s>", "a\u00a0\u3000b\r\n", "\xed\xa0\x80x", "\xf5 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b []byte
		for _, id := range spm.Encode(s, false) {
			b = spm.AppendPiece(b, id)
		}
		if utf8.ValidString(s) && s != "" && string(b) != " "+s {
			t.Errorf("SPM pieces of %q spell %q", s, b)
		}
		spm.EncodeSpecial(s, true)
		b = b[:0]
		for _, id := range bpe.Encode(s, false) {
			b = bpe.AppendPiece(b, id)
		}
		if utf8.ValidString(s) && string(b) != s {
			t.Errorf("BPE pieces of %q spell %q", s, b)
		}
		bpe.EncodeSpecial(s, true)
	})
}

// TestPhi3Strip checks llama.cpp's Phi-3 quirk: whitespace after special
// tokens is dropped. "</s>" is user-defined in this vocabulary, but
// llama.cpp's end-of-generation rule makes every "</s>" a control token, so
// only EncodeSpecial splits it out (the gemma3 test pairs show the same).
func TestPhi3Strip(t *testing.T) {
	tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-phi-3.gguf"))
	hello := tok.Encode("Hello", false)
	got := tok.EncodeSpecial("<|user|>\n  Hello<|end|>\n<|assistant|>", false)
	want := slices.Concat([]int32{32010}, hello, []int32{32007, 32001})
	if !slices.Equal(got, want) {
		t.Errorf("EncodeSpecial = %v, want %v", got, want)
	}
	got = tok.EncodeSpecial("Hello</s> Hello", false)
	want = slices.Concat(hello, []int32{2}, hello)
	if !slices.Equal(got, want) {
		t.Errorf("EncodeSpecial = %v, want %v", got, want)
	}
	got = tok.Encode("Hello</s> Hello", false)
	if slices.Contains(got, 2) {
		t.Errorf("Encode = %v splits out </s> without parse_special", got)
	}
}

// TestFIMTokens: the fill-in-the-middle tokens are found by their text
// when the metadata does not give them (Qwen3's <|fim_prefix|>, the repo
// and file separators; DeepSeek-Coder's <｜fim▁begin｜>, with no repo or
// file separator; StarCoder's <fim_prefix>), and absent from a vocabulary
// without them.
func TestFIMTokens(t *testing.T) {
	for _, tc := range []struct {
		vocab                        string
		pre, suf, mid, pad, rep, sep string
	}{
		{"qwen3", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"},
		{"deepseek-coder", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "", "", ""},
		// StarCoder's (StarCoder2's alike): no repo or file separator
		// among llama.cpp's texts in this vocabulary.
		{"starcoder", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "", ""},
		{"llama-spm", "", "", "", "", "", ""},
	} {
		tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
		fim := tok.FIM()
		for _, f := range []struct {
			name string
			id   int32
			want string
		}{{"Pre", fim.Pre, tc.pre}, {"Suf", fim.Suf, tc.suf}, {"Mid", fim.Mid, tc.mid}, {"Pad", fim.Pad, tc.pad}, {"Rep", fim.Rep, tc.rep}, {"Sep", fim.Sep, tc.sep}} {
			switch {
			case f.want == "" && f.id != -1:
				t.Errorf("%s: FIM %s = %d (%q), want none", tc.vocab, f.name, f.id, tok.Text(f.id))
			case f.want != "" && (f.id < 0 || tok.Text(f.id) != f.want):
				t.Errorf("%s: FIM %s = %d, want %q", tc.vocab, f.name, f.id, f.want)
			}
		}
	}
}

// CodeGemma's FIM tokens (<|fim_prefix|>, <|fim_middle|>,
// <|fim_suffix|> at 67, 68, 69 of Gemma's SentencePiece vocabulary, ids
// recalled) are found by their text, as llama.cpp finds them; its
// <|file_separator|> is none of llama.cpp's separators.
func TestFIMTokensCodeGemma(t *testing.T) {
	v := Vocab{Model: "llama", Tokens: make([]string, 300)}
	v.ClearSpecial()
	for i := range v.Tokens {
		v.Tokens[i] = fmt.Sprintf("t%d", i)
	}
	v.BOS, v.EOS, v.AddBOS = 2, 1, true
	v.Tokens[67], v.Tokens[68], v.Tokens[69], v.Tokens[70] = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|file_separator|>"
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	if f := tok.FIM(); f.Pre != 67 || f.Mid != 68 || f.Suf != 69 || f.Sep != -1 || f.Rep != -1 || f.Pad != -1 {
		t.Errorf("FIM = %+v, want prefix 67, middle 68, suffix 69, no separator, repo or pad", f)
	}
}
