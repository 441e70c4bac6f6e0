package tokenizer

import (
	"os"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// continuationText is real prose with the joins a chat or a streaming
// caller makes: words, punctuation, newlines, numbers, accents, CJK, emoji.
func continuationText(t *testing.T) string {
	t.Helper()
	p2, err := os.ReadFile(testdataFile(t, "prompts/P2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return "The quick brown fox jumps over the lazy dog. " + string(p2[:600]) +
		"\nHello world.\nThe quick brown fox,\n said \"hi\" (twice)!\n\nNew paragraph:\n  two  spaces, 12345 numbers;\témigré café 日本語 🦙.\n"
}

// TestEncodeContinuationSplits encodes a text's prefix as a sequence start
// and the rest with EncodeContinuation, for every split of a kind that is
// a token boundary in llama.cpp's tokenization of the whole text, and
// checks that the ids are those of encoding the whole:
//   - before a space that starts a word ("Hello" + " world"), for every
//     vocabulary;
//   - before and after a newline, for SentencePiece vocabularies. Byte-level
//     BPE pre-tokenizers glue a newline to the punctuation before it
//     (".\n" is one word for Llama 3 and Qwen), so there a split between
//     the two legitimately differs.
//
// Splits inside a word, between a word and the space after it, or inside a
// run of spaces or digits differ for every tokenizer (the whole text merges
// across them) and are not checked.
func TestEncodeContinuationSplits(t *testing.T) {
	text := continuationText(t)
	wordStart := func(i int) bool { return text[i] == ' ' && text[i-1] != ' ' && i+1 < len(text) && text[i+1] != ' ' }
	newline := func(i int) bool {
		return (text[i] == '\n' && text[i-1] != '\n' && text[i-1] != ' ') ||
			(text[i-1] == '\n' && text[i] != '\n' && text[i] != ' ')
	}
	for _, tc := range []struct {
		vocab   string
		newline bool
	}{
		{"llama-spm", true}, {"gemma3", true}, {"phi-3", true},
		{"llama3_1", false}, {"qwen3", false}, {"gpt-2", false}, {"bert-bge", false},
	} {
		t.Run(tc.vocab, func(t *testing.T) {
			tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
			// A WordPiece encoding with special tokens ends with [SEP]; a
			// sequence to continue does not.
			special := tok.kind != kindWPM
			whole := tok.Encode(text, special)
			n, seen := 0, 0
			for i := 1; i < len(text); i++ {
				if !wordStart(i) && !(tc.newline && newline(i)) {
					continue
				}
				// Every split costs a fresh encoding of the prefix; -short
				// (the race detector's run) checks one in five.
				if seen++; testing.Short() && seen%5 != 0 {
					continue
				}
				n++
				pre := tok.Encode(text[:i], special)
				last := int32(-1)
				if len(pre) > 0 {
					last = pre[len(pre)-1]
				}
				got := slices.Concat(pre, tok.EncodeContinuation(last, text[i:]))
				if j := testutil.FirstDiff(got, whole); j >= 0 {
					t.Errorf("split %q | %q: ids differ from position %d: got %v, want %v",
						text[max(0, i-12):i], text[i:min(len(text), i+12)], j,
						got[j:min(j+4, len(got))], whole[j:min(j+4, len(whole))])
				}
			}
			if n < 20 {
				t.Fatalf("only %d splits checked", n)
			}
		})
	}
}

// TestEncodeContinuationIssue13 is the defect of issue 13: " world" after
// "Hello" on a SentencePiece model must not start with a lone "▁".
func TestEncodeContinuationIssue13(t *testing.T) {
	tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-llama-spm.gguf"))
	hello := tok.Encode("Hello", true)
	if want := []int32{1, 15043}; !slices.Equal(hello, want) {
		t.Fatalf("Encode(Hello) = %v, want %v", hello, want)
	}
	if got := tok.Encode(" world", false); !slices.Equal(got, []int32{29871, 3186}) {
		t.Fatalf("Encode( world) = %v: the dummy prefix this test is about is gone", got)
	}
	got := slices.Concat(hello, tok.EncodeContinuation(15043, " world"))
	if want := tok.Encode("Hello world", true); !slices.Equal(got, want) || !slices.Equal(want, []int32{1, 15043, 3186}) {
		t.Errorf("Hello + continuation  world = %v, want %v = [1 15043 3186]", got, want)
	}
}

// TestEncodeContinuationAfterSpecial checks the prefix rules after special
// tokens: after BOS or a control token llama.cpp puts the space prefix
// before text, after a token that strips whitespace on its right (Phi-3's
// chat markers) the whitespace goes, and an id outside the vocabulary
// means an empty sequence.
func TestEncodeContinuationAfterSpecial(t *testing.T) {
	spm := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-llama-spm.gguf"))
	for _, last := range []int32{-1, 1, 2, 1 << 30} {
		if got, want := spm.EncodeContinuation(last, "Hello"), spm.Encode("Hello", false); !slices.Equal(got, want) {
			t.Errorf("llama-spm: EncodeContinuation(%d, Hello) = %v, want %v (with the prefix)", last, got, want)
		}
	}
	// A normal last token: no prefix.
	if got, want := spm.EncodeContinuation(15043, "world"), []int32{11526}; !slices.Equal(got, want) {
		t.Errorf("llama-spm: EncodeContinuation(Hello, world) = %v, want %v", got, want)
	}

	phi := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-phi-3.gguf"))
	whole := phi.EncodeSpecial("<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n", true)
	for _, split := range []int{len("<|user|>"), len("<|user|>\nHello<|end|>"), len("<|user|>\nHello<|end|>\n<|assistant|>")} {
		text := "<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n"
		pre := phi.EncodeSpecial(text[:split], true)
		got := slices.Concat(pre, phi.EncodeSpecialContinuation(pre[len(pre)-1], text[split:]))
		if !slices.Equal(got, whole) {
			t.Errorf("phi-3: split at %d: %v, want %v", split, got, whole)
		}
	}

	for _, tc := range []struct{ vocab, text string }{
		{"gemma3", "<start_of_turn>user\nHello there<end_of_turn>\n<start_of_turn>model\nHi<end_of_turn>\n"},
		{"qwen3", "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\nHi<|im_end|>\n"},
		{"llama3_1", "<|start_header_id|>user<|end_header_id|>\n\nHello there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi<|eot_id|>"},
	} {
		tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
		whole := tok.EncodeSpecial(tc.text, true)
		for i := 1; i < len(tc.text); i++ {
			if tc.text[i] != '<' && tc.text[i-1] != '>' {
				continue // split only at special-token edges
			}
			pre := tok.EncodeSpecial(tc.text[:i], true)
			got := slices.Concat(pre, tok.EncodeSpecialContinuation(pre[len(pre)-1], tc.text[i:]))
			if j := testutil.FirstDiff(got, whole); j >= 0 {
				t.Errorf("%s: split %q | %q differs at %d: got %v, want %v", tc.vocab, tc.text[:i], tc.text[i:], j, got, whole)
			}
		}
	}
}
