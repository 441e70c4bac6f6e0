package testutil

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// Token types as llama.cpp stores them in tokenizer.ggml.token_type.
const (
	TokenNormal  int32 = 1
	TokenUnknown int32 = 2
	TokenControl int32 = 3
	TokenByte    int32 = 6
)

// Special token ids of an SPM vocabulary from SPMVocab.
const (
	UnkID int32 = 0
	BOSID int32 = 1
	EOSID int32 = 2
)

// MinVocab is the smallest SPMVocab: <unk>, <s>, </s> and 256 byte tokens.
const MinVocab = 3 + 256

// Vocab is a tokenizer vocabulary in the form GGUF stores it: parallel
// per-token arrays.
type Vocab struct {
	Tokens []string
	Scores []float32 // nil for BPE and WPM vocabularies
	Types  []int32
	Merges []string // BPE only: "left right", highest priority first
	// Charsmap is a UGM vocabulary's precompiled charsmap (see Charsmap).
	Charsmap []byte
}

// words are whole-word pieces, added with every prefix so that SPM merging
// can reach each of them one character at a time.
var words = []string{
	"the", "The", "a", "and", "to", "of", "in", "was", "it", "he", "she",
	"is", "that", "on", "for", "with", "his", "her", "they", "you", "at",
	"be", "Once", "once", "upon", "time", "there", "little", "girl", "boy",
	"day", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "cat",
	"said", "big", "happy", "play", "went", "saw", "not",
}

// SPMVocab returns a deterministic SentencePiece-style vocabulary of size
// tokens (at least MinVocab), laid out like llama's: <unk> (unknown), <s>
// and </s> (control), the byte tokens <0x00>…<0xFF> (byte), then normal
// pieces: "▁", the letters a…z, common words with "▁" and all their
// prefixes, "▁a"…"▁z", punctuation and digits, then letter pairs and
// triples as filler. Every piece's prefixes come before it, so SPM
// tokenization can build any piece by merging. Scores fall by one per
// piece, so earlier pieces merge first; special and byte tokens score 0.
func SPMVocab(size int) (*Vocab, error) {
	if size < MinVocab {
		return nil, fmt.Errorf("testutil: vocabulary of %d tokens is smaller than the %d special and byte tokens", size, MinVocab)
	}
	v := &Vocab{
		Tokens: make([]string, 0, size),
		Scores: make([]float32, 0, size),
		Types:  make([]int32, 0, size),
	}
	v.add("<unk>", 0, TokenUnknown)
	v.add("<s>", 0, TokenControl)
	v.add("</s>", 0, TokenControl)
	for b := range 256 {
		v.add(fmt.Sprintf("<0x%02X>", b), 0, TokenByte)
	}
	seen := map[string]bool{}
	rank := 0
	piece := func(s string) bool {
		if len(v.Tokens) == size {
			return false
		}
		if !seen[s] {
			seen[s] = true
			v.add(s, -float32(rank), TokenNormal)
			rank++
		}
		return true
	}
	const space = "▁"
	letters := make([]string, 26)
	for i := range letters {
		letters[i] = string(rune('a' + i))
	}
	fill := func() bool {
		if !piece(space) {
			return false
		}
		for _, l := range letters {
			if !piece(l) {
				return false
			}
		}
		for _, w := range words {
			r := []rune(w)
			for i := 1; i <= len(r); i++ {
				if !piece(space + string(r[:i])) {
					return false
				}
			}
		}
		for _, l := range letters {
			if !piece(space + l) {
				return false
			}
		}
		for _, p := range []string{".", ",", "!", "?", "'", "\"", "-", ":", ";", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"} {
			if !piece(p) {
				return false
			}
		}
		// Filler: all letter strings of length 2, 3, …, with and without
		// "▁", shorter first so prefixes always precede.
		prev := letters
		for {
			var next []string
			for _, p := range prev {
				for _, l := range letters {
					s := p + l
					next = append(next, s)
					if !piece(space+s) || !piece(s) {
						return false
					}
				}
			}
			prev = next
		}
	}
	fill()
	return v, nil
}

func (v *Vocab) add(tok string, score float32, typ int32) {
	v.Tokens = append(v.Tokens, tok)
	v.Scores = append(v.Scores, score)
	v.Types = append(v.Types, typ)
}

// AddTo writes the tokenizer.ggml.* keys of an SPM vocabulary as llama.cpp's
// converter does: model "llama", pre "default", tokens, scores, token
// types, bos 1, eos 2, unk 0, add_bos_token true, add_eos_token false.
func (v *Vocab) AddTo(w *gguf.Writer) {
	w.AddKV("tokenizer.ggml.model", "llama")
	w.AddKV("tokenizer.ggml.pre", "default")
	w.AddKV("tokenizer.ggml.tokens", v.Tokens)
	w.AddKV("tokenizer.ggml.scores", v.Scores)
	w.AddKV("tokenizer.ggml.token_type", v.Types)
	w.AddKV("tokenizer.ggml.bos_token_id", uint32(BOSID))
	w.AddKV("tokenizer.ggml.eos_token_id", uint32(EOSID))
	w.AddKV("tokenizer.ggml.unknown_token_id", uint32(UnkID))
	w.AddKV("tokenizer.ggml.add_bos_token", true)
	w.AddKV("tokenizer.ggml.add_eos_token", false)
}

// SetControl turns the last len(toks) tokens into control tokens with
// these texts. Nothing else depends on the last pieces: every piece's
// prefixes come before it.
func (v *Vocab) SetControl(toks []string) error {
	if len(toks) > len(v.Tokens)-MinVocab {
		return fmt.Errorf("testutil: %d chat tokens do not fit a vocabulary of %d", len(toks), len(v.Tokens))
	}
	base := len(v.Tokens) - len(toks)
	for i, tok := range toks {
		v.Tokens[base+i], v.Scores[base+i], v.Types[base+i] = tok, 0, TokenControl
	}
	return nil
}
