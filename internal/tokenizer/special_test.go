package tokenizer

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// TestEncodeSpecialChat checks EncodeSpecial (parse_special = true) on
// chat-template text. The expected ids follow llama.cpp's rules, worked by
// hand: special-token text is split out first (longest token first), each
// remaining fragment is tokenized on its own — byte-level BPE with the
// pre-tokenizer's words (qwen2, llama-bpe), SentencePiece without a space
// prefix (gemma3 turns it off) or with one after each special token
// (phi-3, whose chat markers also swallow the whitespace after them). Each
// expected id's text is checked against the vocabulary too, so the table
// says which piece each id is.
func TestEncodeSpecialChat(t *testing.T) {
	type piece struct {
		id   int32
		text string
	}
	for _, tc := range []struct {
		vocab string
		text  string
		want  []piece
	}{
		{"qwen3", "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
			[]piece{{151644, "<|im_start|>"}, {8948, "system"}, {198, "Ċ"}, {2610, "You"}, {525, "Ġare"}, {50537, "Ġterse"}, {13, "."},
				{151645, "<|im_end|>"}, {198, "Ċ"}, {151644, "<|im_start|>"}, {872, "user"}, {198, "Ċ"}, {9707, "Hello"},
				{151645, "<|im_end|>"}, {198, "Ċ"}, {151644, "<|im_start|>"}, {77091, "assistant"}, {198, "Ċ"},
				{151667, "<think>"}, {271, "ĊĊ"}, {151668, "</think>"}, {271, "ĊĊ"}}},
		// BOS first: add_bos is true.
		{"gemma3", "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
			[]piece{{2, "<bos>"}, {105, "<start_of_turn>"}, {2364, "user"}, {107, "\n"}, {9259, "Hello"},
				{106, "<end_of_turn>"}, {107, "\n"}, {105, "<start_of_turn>"}, {4368, "model"}, {107, "\n"}}},
		{"llama3_1", "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
			[]piece{{128000, "<|begin_of_text|>"}, {128006, "<|start_header_id|>"}, {9125, "system"}, {128007, "<|end_header_id|>"},
				{271, "ĊĊ"}, {2675, "You"}, {527, "Ġare"}, {51637, "Ġterse"}, {13, "."}, {128009, "<|eot_id|>"},
				{128006, "<|start_header_id|>"}, {882, "user"}, {128007, "<|end_header_id|>"}, {271, "ĊĊ"}, {9906, "Hello"},
				{128009, "<|eot_id|>"}, {128006, "<|start_header_id|>"}, {78191, "assistant"}, {128007, "<|end_header_id|>"}, {271, "ĊĊ"}}},
		// The newlines after <|user|>, <|end|> and <|assistant|> are
		// stripped; "Hello" follows a special token, so it gets the prefix.
		{"phi-3", "<|user|>\nHello<|end|>\n<|assistant|>\n",
			[]piece{{1, "<s>"}, {32010, "<|user|>"}, {15043, "▁Hello"}, {32007, "<|end|>"}, {32001, "<|assistant|>"}}},
	} {
		t.Run(tc.vocab, func(t *testing.T) {
			tok := cachedTokenizer(t, testdataFile(t, "vocab/ggml-vocab-"+tc.vocab+".gguf"))
			var want []int32
			for _, p := range tc.want {
				if got := tok.Text(p.id); got != p.text {
					t.Fatalf("token %d is %q in the vocabulary, the table says %q", p.id, got, p.text)
				}
				want = append(want, p.id)
			}
			got := tok.EncodeSpecial(tc.text, true)
			if j := testutil.FirstDiff(got, want); j >= 0 {
				t.Errorf("EncodeSpecial differs at position %d\n got %v\nwant %v", j, got, want)
			}
			// Without parse_special the markers are plain text.
			plain := tok.Encode(tc.text, true)
			for _, p := range tc.want[1:] {
				if tok.IsControl(p.id) && slices.Contains(plain, p.id) {
					t.Errorf("Encode (no parse_special) gives control token %d %q", p.id, p.text)
				}
			}
		})
	}
}
