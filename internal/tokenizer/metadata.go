package tokenizer

import "fmt"

// metadata is the part of *gguf.File that vocabFromMetadata reads.
type metadata interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Float32s(key string) ([]float32, bool)
	Int32s(key string) ([]int32, bool)
	Uint(key string) (uint64, bool)
	Bool(key string) (bool, bool)
}

// GGUF metadata keys of the tokenizer, as llama.cpp spells them.
const (
	keyModel          = "tokenizer.ggml.model"
	keyPre            = "tokenizer.ggml.pre"
	keyTokens         = "tokenizer.ggml.tokens"
	keyScores         = "tokenizer.ggml.scores"
	keyTypes          = "tokenizer.ggml.token_type"
	keyMerges         = "tokenizer.ggml.merges"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyEOS            = "tokenizer.ggml.eos_token_id"
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyEOM            = "tokenizer.ggml.eom_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keySEP            = "tokenizer.ggml.seperator_token_id" // sic
	keyPAD            = "tokenizer.ggml.padding_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyName           = "general.name"
)

// vocabFromMetadata fills a Vocab from tokenizer.ggml.* keys, applying
// llama.cpp's defaults (llama_vocab::impl::load) for what is missing:
//   - "llama" (SPM): BOS 1, EOS 2, UNK 0; BOS is added, EOS is not, and a
//     space prefix is added.
//   - "gpt2" (BPE): BOS and EOS 11; nothing is added, except that the
//     Llama 3 pre-tokenizers add BOS.
//
// A default id outside the vocabulary is dropped. A special token id in the
// metadata that is outside the vocabulary (4294967295, say) is ignored and
// the default kept, as llama.cpp does.
func vocabFromMetadata(m metadata) (Vocab, error) {
	var v Vocab
	var ok bool
	if v.Model, ok = m.String(keyModel); !ok {
		return v, fmt.Errorf("%w: missing %s", ErrBadVocab, keyModel)
	}
	v.Pre, _ = m.String(keyPre)
	v.Name, _ = m.String(keyName)
	if v.Tokens, ok = m.Strings(keyTokens); !ok {
		return v, fmt.Errorf("%w: missing %s", ErrBadVocab, keyTokens)
	}
	n := len(v.Tokens)
	if n == 0 {
		return v, fmt.Errorf("%w: %s is empty", ErrBadVocab, keyTokens)
	}
	if v.Scores, ok = m.Float32s(keyScores); !ok {
		if is, ok := m.Int32s(keyScores); ok {
			v.Scores = make([]float32, len(is))
			for i, x := range is {
				v.Scores[i] = float32(x)
			}
		}
	}
	v.Types, _ = m.Int32s(keyTypes)
	// New checks these too; here the message can name the key.
	if v.Scores != nil && len(v.Scores) < n {
		return v, fmt.Errorf("%w: %s has %d values for %d tokens", ErrBadVocab, keyScores, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return v, fmt.Errorf("%w: %s has %d values for %d tokens", ErrBadVocab, keyTypes, len(v.Types), n)
	}

	v.BOS, v.EOS, v.UNK, v.PAD, v.EOT, v.EOM, v.SEP = -1, -1, -1, -1, -1, -1, -1
	switch v.Model {
	case "llama":
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
	case "gpt2":
		if v.Merges, ok = m.Strings(keyMerges); !ok {
			return v, fmt.Errorf("%w: missing %s", ErrBadVocab, keyMerges)
		}
		v.BOS, v.EOS = 11, 11
		switch v.Pre {
		case "llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral":
			v.AddBOS = true
		case "chatglm-bpe":
			v.BOS = -1
		}
	default:
		return v, fmt.Errorf("%w: tokenizer model %q", ErrUnsupported, v.Model)
	}

	for _, s := range []struct {
		key string
		id  *int32
	}{
		{keyBOS, &v.BOS}, {keyEOS, &v.EOS}, {keyEOT, &v.EOT}, {keyEOM, &v.EOM},
		{keyUNK, &v.UNK}, {keySEP, &v.SEP}, {keyPAD, &v.PAD},
	} {
		if *s.id >= int32(n) {
			*s.id = -1
		}
		if id, ok := m.Uint(s.key); ok && id < uint64(n) {
			*s.id = int32(id)
		}
	}
	if b, ok := m.Bool(keyAddBOS); ok {
		v.AddBOS = b
	}
	if b, ok := m.Bool(keyAddEOS); ok {
		v.AddEOS = b
	}
	if b, ok := m.Bool(keyAddSpacePrefix); ok {
		v.AddSpacePrefix = b
	}
	if v.Model == "gpt2" {
		v.AddSpacePrefix = false
	}
	return v, nil
}
