package testutil

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// Special token ids of a BPE vocabulary from BPEVocab and of a WordPiece
// vocabulary from WPMVocab.
const (
	BPEEndOfText int32 = 256 // "<|endoftext|>", control: BOS and EOS

	WPMPad  int32 = 0 // "[PAD]"
	WPMUnk  int32 = 1 // "[UNK]"
	WPMCLS  int32 = 2 // "[CLS]", BOS
	WPMSEP  int32 = 3 // "[SEP]"
	WPMMask int32 = 4 // "[MASK]"
)

// MinBPEVocab is the smallest BPEVocab: the 256 byte symbols and
// <|endoftext|>.
const MinBPEVocab = 257

// gpt2Byte is GPT-2's byte-level alphabet: printable Latin-1 bytes stand
// for themselves, the others are numbered from U+0100 in byte order.
func gpt2Byte() [256]string {
	var out [256]string
	n := 0
	for b := range 256 {
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}

// BPEVocab returns a deterministic byte-level BPE vocabulary (GPT-2 style,
// for tokenizer.ggml.model "gpt2" with pre-tokenizer "gpt-2") of size
// tokens, at least MinBPEVocab: the 256 byte symbols in GPT-2's alphabet
// (ids 0–255, so every text can be spelled), <|endoftext|> (256, control),
// then each common word with and without a leading space ("Ġ"), built one
// merge at a time from the left, then letter pairs as filler. Every merged
// token has its merge, in the order the tokens appear.
func BPEVocab(size int) (*Vocab, error) {
	if size < MinBPEVocab {
		return nil, fmt.Errorf("testutil: BPE vocabulary of %d tokens is smaller than the %d byte and special tokens", size, MinBPEVocab)
	}
	v := &Vocab{}
	alpha := gpt2Byte()
	for b := range 256 {
		v.Tokens = append(v.Tokens, alpha[b])
		v.Types = append(v.Types, TokenNormal)
	}
	v.Tokens = append(v.Tokens, "<|endoftext|>")
	v.Types = append(v.Types, TokenControl)
	seen := map[string]bool{}
	for _, t := range v.Tokens {
		seen[t] = true
	}
	// merge adds the token l+r and its merge; false when the vocabulary is full.
	merge := func(l, r string) bool {
		if seen[l+r] {
			return true
		}
		if len(v.Tokens) == size {
			return false
		}
		seen[l+r] = true
		v.Tokens = append(v.Tokens, l+r)
		v.Types = append(v.Types, TokenNormal)
		v.Merges = append(v.Merges, l+" "+r)
		return true
	}
	build := func(syms []string) bool {
		cur := syms[0]
		for _, s := range syms[1:] {
			if !merge(cur, s) {
				return false
			}
			cur += s
		}
		return true
	}
	spell := func(w string) []string {
		var out []string
		for i := 0; i < len(w); i++ {
			out = append(out, alpha[w[i]])
		}
		return out
	}
	for _, w := range words {
		if !build(spell(" "+w)) || !build(spell(w)) {
			return v, nil
		}
	}
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			if !merge(string(a), string(b)) {
				return v, nil
			}
		}
	}
	for len(v.Tokens) < size {
		// Beyond the filler: unmergeable control tokens keep the size exact.
		v.Tokens = append(v.Tokens, fmt.Sprintf("<|extra_%d|>", len(v.Tokens)))
		v.Types = append(v.Types, TokenControl)
	}
	return v, nil
}

// WPMVocab returns a deterministic WordPiece vocabulary (BERT style, for
// tokenizer.ggml.model "bert") in llama.cpp's GGUF spelling, where a
// word-initial piece starts with "▁" and a continuation piece (BERT's
// "##x") is plain: [PAD], [UNK], [CLS], [SEP], [MASK] (control), then every
// printable ASCII character other than upper-case letters both ways, the
// common words, and a few suffixes. Upper-case letters are left out
// because WordPiece lowercases its input.
func WPMVocab() *Vocab {
	v := &Vocab{}
	add := func(s string, typ int32) {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, typ)
	}
	for _, s := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"} {
		add(s, TokenControl)
	}
	for c := byte('!'); c <= '~'; c++ {
		if c >= 'A' && c <= 'Z' {
			continue
		}
		add("▁"+string(c), TokenNormal)
		add(string(c), TokenNormal)
	}
	seen := map[string]bool{}
	for _, w := range words {
		if w != "a" && !seen[w] && w == lower(w) {
			seen[w] = true
			add("▁"+w, TokenNormal)
		}
	}
	for _, s := range []string{"ing", "ed", "ly", "er", "est"} {
		add(s, TokenNormal)
	}
	return v
}

// WPMVocabOf is WPMVocab padded to size tokens with "[unused<i>]" control
// tokens at the end, as BERT vocabularies reserve them, for a model whose
// embedding has size rows.
func WPMVocabOf(size int) (*Vocab, error) {
	v := WPMVocab()
	if size < len(v.Tokens) {
		return nil, fmt.Errorf("testutil: WordPiece vocabulary of %d tokens is smaller than its %d pieces", size, len(v.Tokens))
	}
	for i := 0; len(v.Tokens) < size; i++ {
		v.Tokens = append(v.Tokens, fmt.Sprintf("[unused%d]", i))
		v.Types = append(v.Types, TokenControl)
	}
	return v, nil
}

// AddWPMTo writes the tokenizer.ggml.* keys of a WordPiece vocabulary as
// llama.cpp's converter does for BERT: model "bert", tokens, token types,
// the count of token types the model's token_types rows embed (BERT's 2:
// "sentence A" and "B"), and the special ids — [CLS] doubling as
// BOS, which llama.cpp adds before a text and [SEP] after it.
func (v *Vocab) AddWPMTo(w *gguf.Writer, types int) {
	w.AddKV("tokenizer.ggml.model", "bert")
	w.AddKV("tokenizer.ggml.pre", "default")
	w.AddKV("tokenizer.ggml.tokens", v.Tokens)
	w.AddKV("tokenizer.ggml.token_type", v.Types)
	w.AddKV("tokenizer.ggml.token_type_count", uint32(types))
	w.AddKV("tokenizer.ggml.bos_token_id", uint32(WPMCLS))
	w.AddKV("tokenizer.ggml.unknown_token_id", uint32(WPMUnk))
	w.AddKV("tokenizer.ggml.seperator_token_id", uint32(WPMSEP))
	w.AddKV("tokenizer.ggml.padding_token_id", uint32(WPMPad))
	w.AddKV("tokenizer.ggml.cls_token_id", uint32(WPMCLS))
	w.AddKV("tokenizer.ggml.mask_token_id", uint32(WPMMask))
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
