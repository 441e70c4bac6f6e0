package tokenizer

import (
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
)

// metadata is the part of *gguf.File that vocabFromMetadata reads.
type metadata interface {
	Get(key string) (any, bool)
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
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSEP         = "tokenizer.ggml.add_sep_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyLowercase      = "tokenizer.ggml.normalizer.lowercase"
	keyStripAccents   = "tokenizer.ggml.normalizer.strip_accents"
	keyCharsmap       = "tokenizer.ggml.precompiled_charsmap"
	keyRemoveExtraWS  = "tokenizer.ggml.remove_extra_whitespaces"
	keyName           = "general.name"
	keyArch           = "general.architecture"
)

// specialKeys pairs each special token id key with its Vocab field. The
// last three are deprecated spellings of the FIM keys that llama.cpp still
// reads (after the current ones, so they win when both are present).
func specialKeys(v *Vocab) []struct {
	key string
	id  *int32
} {
	return []struct {
		key string
		id  *int32
	}{
		{"tokenizer.ggml.bos_token_id", &v.BOS},
		{"tokenizer.ggml.eos_token_id", &v.EOS},
		{"tokenizer.ggml.eot_token_id", &v.EOT},
		{"tokenizer.ggml.eom_token_id", &v.EOM},
		{"tokenizer.ggml.unknown_token_id", &v.UNK},
		{"tokenizer.ggml.seperator_token_id", &v.SEP}, // sic
		{"tokenizer.ggml.padding_token_id", &v.PAD},
		{"tokenizer.ggml.mask_token_id", &v.MASK},
		{"tokenizer.ggml.fim_pre_token_id", &v.FIMPre},
		{"tokenizer.ggml.fim_suf_token_id", &v.FIMSuf},
		{"tokenizer.ggml.fim_mid_token_id", &v.FIMMid},
		{"tokenizer.ggml.fim_pad_token_id", &v.FIMPad},
		{"tokenizer.ggml.fim_rep_token_id", &v.FIMRep},
		{"tokenizer.ggml.fim_sep_token_id", &v.FIMSep},
		{"tokenizer.ggml.prefix_token_id", &v.FIMPre},
		{"tokenizer.ggml.suffix_token_id", &v.FIMSuf},
		{"tokenizer.ggml.middle_token_id", &v.FIMMid},
	}
}

// vocabFromMetadata fills a Vocab from tokenizer.ggml.* keys, applying
// llama.cpp's defaults (llama_vocab::impl::load) for what is missing:
//   - "llama" (SPM): BOS 1, EOS 2, UNK 0; BOS is added, EOS is not, and a
//     space prefix is added.
//   - "gpt2" (BPE): BOS and EOS 11; nothing is added, except that the
//     Llama 3 pre-tokenizers add BOS.
//   - "bert" (WPM): BOS ([CLS]) 101, UNK 100, SEP 102, PAD 0, MASK 103;
//     BOS and SEP are added.
//   - "rwkv": no special tokens; nothing is added (llama.cpp's RWKV
//     tokenizer adds nothing whatever the flags say).
//   - "t5" (UGM): EOS 1, UNK 2, PAD 0, no BOS; EOS is added, BOS is not,
//     and no space prefix unless tokenizer.ggml.add_space_prefix says so
//     (XLM-RoBERTa's converter writes it, and its add_bos/add_eos keys).
//
// It refuses what llama.cpp refuses: a missing or empty token list, keys of
// the wrong type, scores or token types whose count differs from the
// tokens' (llama.cpp refuses fewer; more is refused here too, since no
// converter writes it), a BPE vocabulary without merges, and an add_*_token
// flag without its token. Like llama.cpp it tolerates a special token id
// outside the vocabulary by keeping the default, and records a warning; a
// default outside the vocabulary is dropped.
func vocabFromMetadata(m metadata) (Vocab, error) {
	var v Vocab
	var ok bool
	var err error
	if v.Model, ok = m.String(keyModel); !ok {
		if _, present := m.Get(keyModel); present {
			return v, typeError(m, keyModel, "a string")
		}
		return v, fmt.Errorf("%w: missing %s", ErrBadVocab, keyModel)
	}
	v.Pre, _ = m.String(keyPre)
	v.Name, _ = m.String(keyName)
	v.Arch, _ = m.String(keyArch)
	if v.Tokens, ok = m.Strings(keyTokens); !ok {
		if _, present := m.Get(keyTokens); present {
			return v, typeError(m, keyTokens, "an array of strings")
		}
		return v, fmt.Errorf("%w: missing %s", ErrBadVocab, keyTokens)
	}
	n := len(v.Tokens)
	if n == 0 {
		return v, fmt.Errorf("%w: %s is empty", ErrBadVocab, keyTokens)
	}
	if _, present := m.Get(keyScores); present {
		if v.Scores, ok = m.Float32s(keyScores); !ok {
			is, ok := m.Int32s(keyScores)
			if !ok {
				return v, typeError(m, keyScores, "an array of float32 or int32")
			}
			v.Scores = make([]float32, len(is))
			for i, x := range is {
				v.Scores[i] = float32(x)
			}
		}
		if len(v.Scores) != n {
			return v, fmt.Errorf("%w: %s has %d values but %s has %d", ErrBadVocab, keyScores, len(v.Scores), keyTokens, n)
		}
	}
	if _, present := m.Get(keyTypes); present {
		if v.Types, ok = m.Int32s(keyTypes); !ok {
			return v, typeError(m, keyTypes, "an array of int32")
		}
		if len(v.Types) != n {
			return v, fmt.Errorf("%w: %s has %d values but %s has %d", ErrBadVocab, keyTypes, len(v.Types), keyTokens, n)
		}
	}

	v.ClearSpecial()
	switch v.Model {
	case "llama":
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
	case "gpt2":
		if v.Merges, ok = m.Strings(keyMerges); !ok {
			if _, present := m.Get(keyMerges); present {
				return v, typeError(m, keyMerges, "an array of strings")
			}
			return v, fmt.Errorf("%w: missing %s", ErrBadVocab, keyMerges)
		}
		v.BOS, v.EOS = 11, 11
		switch v.Pre {
		case "llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral", "lfm2", "tekken":
			v.AddBOS = true
		case "chatglm-bpe", "glm4":
			v.BOS = -1 // llama.cpp's CHATGLM4: no BOS unless the file names one
		case "jina-v1-en", "jina-v2-code", "roberta-bpe":
			v.AddSEP = true
		}
	case "bert":
		v.BOS, v.UNK, v.SEP, v.PAD, v.MASK = 101, 100, 102, 0, 103
		v.AddBOS, v.AddSEP = true, true
	case "rwkv":
		// No special tokens unless the file names them, nothing added.
	case "t5":
		v.EOS, v.UNK, v.PAD = 1, 2, 0
		v.AddEOS = true
		if v.Charsmap, err = charsmapFromMetadata(m); err != nil {
			return v, err
		}
	default:
		return v, fmt.Errorf("%w: tokenizer model %q", ErrUnsupported, v.Model)
	}

	for _, s := range specialKeys(&v) {
		if *s.id >= int32(n) {
			*s.id = -1 // a default the vocabulary is too small for
		}
		x, present := m.Get(s.key)
		if !present {
			continue
		}
		id, isInt := m.Uint(s.key)
		switch {
		case !isInt && !isInteger(x):
			return v, typeError(m, s.key, "an unsigned integer")
		case !isInt || id >= uint64(n):
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s = %v is outside the vocabulary of %d tokens; using %d", s.key, x, n, *s.id))
		default:
			*s.id = int32(id)
		}
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{keyAddBOS, &v.AddBOS}, {keyAddEOS, &v.AddEOS}, {keyAddSEP, &v.AddSEP}, {keyAddSpacePrefix, &v.AddSpacePrefix},
		{keyRemoveExtraWS, &v.RemoveExtraWhitespaces}} {
		if _, present := m.Get(f.key); !present {
			continue
		}
		b, ok := m.Bool(f.key)
		if !ok {
			return v, typeError(m, f.key, "a bool")
		}
		*f.dst = b
	}
	// llama.cpp's BertNormalizer options: lowercasing is on by default,
	// and accents are stripped exactly when lowercasing unless said.
	keepCase, keepAccents := false, false
	if _, present := m.Get(keyLowercase); present {
		b, ok := m.Bool(keyLowercase)
		if !ok {
			return v, typeError(m, keyLowercase, "a bool")
		}
		keepCase, keepAccents = !b, !b
	}
	if _, present := m.Get(keyStripAccents); present {
		b, ok := m.Bool(keyStripAccents)
		if !ok {
			return v, typeError(m, keyStripAccents, "a bool")
		}
		keepAccents = !b
	}
	v.KeepCase, v.KeepAccents = keepCase, keepAccents
	if v.Model != "llama" && v.Model != "t5" {
		v.AddSpacePrefix = false
	}
	for _, c := range []struct {
		flag, id string
		on       bool
		tok      int32
	}{
		{keyAddBOS, "tokenizer.ggml.bos_token_id", v.AddBOS, v.BOS},
		{keyAddEOS, "tokenizer.ggml.eos_token_id", v.AddEOS, v.EOS},
		{keyAddSEP, "tokenizer.ggml.seperator_token_id", v.AddSEP, v.SEP},
	} {
		if c.on && c.tok < 0 {
			return v, fmt.Errorf("%w: %s is true, but %s is not set (or outside the vocabulary of %d tokens)", ErrBadVocab, c.flag, c.id, n)
		}
	}
	return v, nil
}

// charsmapFromMetadata reads the UGM precompiled charsmap, an array of
// bytes (uint8 as the converter writes it; int8 read the same), or nil.
func charsmapFromMetadata(m metadata) ([]byte, error) {
	x, present := m.Get(keyCharsmap)
	if !present {
		return nil, nil
	}
	switch b := x.(type) {
	case []uint8:
		return b, nil
	case []int8:
		return gguf.Cast[byte](b), nil
	}
	return nil, typeError(m, keyCharsmap, "an array of uint8")
}

func typeError(m metadata, key, want string) error {
	x, _ := m.Get(key)
	return fmt.Errorf("%w: %s: want %s, have %T", ErrBadVocab, key, want, x)
}

func isInteger(x any) bool {
	switch x.(type) {
	case uint8, int8, uint16, int16, uint32, int32, uint64, int64:
		return true
	}
	return false
}
