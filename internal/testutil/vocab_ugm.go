package testutil

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// Special token ids of a UGM vocabulary from UGMVocab, in XLM-RoBERTa's
// layout as llama.cpp's converter writes it.
const (
	UGMBOS int32 = 0 // <s>, XLM-R's [CLS]
	UGMPad int32 = 1
	UGMEOS int32 = 2 // </s>, XLM-R's [SEP]
	UGMUnk int32 = 3
)

// tokenUserDefined is llama.cpp's USER_DEFINED token type.
const tokenUserDefined int32 = 4

// UGMVocab returns a deterministic SentencePiece unigram vocabulary (for
// tokenizer.ggml.model "t5") of size tokens in XLM-RoBERTa's layout: <s>,
// <pad>, </s> (control) and <unk> (unknown), then normal pieces with
// log-probability-like scores: the common words with "▁" and without
// (−5, falling by 0.01 a word, so a word beats any split of it), "▁", the
// letters a…z, "▁a"…"▁z", punctuation and digits (−10), then letter pairs
// (−15) as filler; a user-defined "<mask>" last. Its Charsmap is
// UGMCharsmap.
func UGMVocab(size int) (*Vocab, error) {
	if size < 128 {
		return nil, fmt.Errorf("testutil: a unigram vocabulary of %d tokens is smaller than the 128 this one needs", size)
	}
	cm, err := UGMCharsmap()
	if err != nil {
		return nil, err
	}
	v := &Vocab{Charsmap: cm}
	v.add("<s>", 0, TokenControl)
	v.add("<pad>", 0, TokenControl)
	v.add("</s>", 0, TokenControl)
	v.add("<unk>", 0, TokenUnknown)
	seen := map[string]bool{}
	piece := func(s string, score float32) {
		if !seen[s] && len(v.Tokens) < size-1 {
			seen[s] = true
			v.add(s, score, TokenNormal)
		}
	}
	for i, w := range words {
		piece("▁"+w, -5-0.01*float32(i))
		piece(w, -5-0.01*float32(i))
	}
	piece("▁", -10)
	for c := 'a'; c <= 'z'; c++ {
		piece(string(c), -10)
		piece("▁"+string(c), -10)
	}
	for _, s := range []string{".", ",", "!", "?", "'", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		piece(s, -10)
	}
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			piece(string(a)+string(b), -15)
		}
	}
	if len(v.Tokens) != size-1 {
		return nil, fmt.Errorf("testutil: a unigram vocabulary of %d tokens is larger than the %d this one holds", size, len(v.Tokens)+1)
	}
	v.add("<mask>", 0, tokenUserDefined)
	return v, nil
}

// UGMCharsmap is the precompiled charsmap AddUGMTo writes: full-width
// ASCII letters, digits and the ideographic space to their ASCII forms,
// tabs and newlines to spaces — a few of the NFKC mappings XLM-RoBERTa's
// real map holds.
func UGMCharsmap() ([]byte, error) {
	m := map[string]string{"\t": " ", "\n": " ", "\u3000": " "}
	for c := rune('!'); c <= '~'; c++ {
		m[string(c-'!'+'！')] = string(c)
	}
	return Charsmap(m)
}

// AddUGMTo writes the tokenizer.ggml.* keys of a unigram vocabulary as
// llama.cpp's converter does for an XLM-RoBERTa model (bge-m3,
// multilingual-e5, nomic-embed-text-v2-moe): model "t5", tokens, scores,
// types, a space prefix, extra whitespace removed, the precompiled
// charsmap, the count of token types, the special ids, and <s> and </s>
// added around a text.
func (v *Vocab) AddUGMTo(w *gguf.Writer, types int) {
	for _, kv := range []struct {
		key string
		val any
	}{
		{"model", "t5"}, {"pre", "default"}, {"tokens", v.Tokens}, {"scores", v.Scores}, {"token_type", v.Types},
		{"add_space_prefix", true}, {"remove_extra_whitespaces", true}, {"precompiled_charsmap", v.Charsmap},
		{"token_type_count", uint32(types)}, {"bos_token_id", uint32(UGMBOS)}, {"eos_token_id", uint32(UGMEOS)},
		{"unknown_token_id", uint32(UGMUnk)}, {"padding_token_id", uint32(UGMPad)},
		{"add_bos_token", true}, {"add_eos_token", true},
	} {
		w.AddKV("tokenizer.ggml."+kv.key, kv.val)
	}
}
